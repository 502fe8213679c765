-- cu.testing: a small runner for Lua test scripts.
--
--   local T = require "cu.testing"
--   T.case("zeros are zero", function()
--     T.eq(cu.zeros(3):totable(), {0, 0, 0})
--   end)
--   T.case("bad dtype", function()
--     T.raises(function() cu.empty(3, "f33") end, "unknown dtype 'f33'")
--   end)
--   os.exit(T.run())
--
-- T.run() runs every case (or those whose name contains the script's first argument), prints
-- one line per case and a summary, and returns 0 when all passed, 1 otherwise.

local T = {}

local cases = {}

function T.case(name, fn)
  assert(type(name) == "string" and type(fn) == "function", "T.case(name, fn)")
  cases[#cases + 1] = { name = name, fn = fn }
end

local function describe(v)
  if type(v) == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = describe(v[i]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif type(v) == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end
T.describe = describe

local function fail(msg, level)
  error(msg, (level or 1) + 2)
end

local function deep_equal(a, b)
  if type(a) ~= type(b) then
    if type(a) == "number" or type(b) == "number" then return a == b end
    return false
  end
  if type(a) ~= "table" then return a == b end
  if #a ~= #b then return false end
  for k, v in pairs(a) do
    if not deep_equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

-- Equal values; tables compare element by element (nested).
function T.eq(actual, expected, what)
  if not deep_equal(actual, expected) then
    fail(string.format("%sexpected %s, got %s", what and (what .. ": ") or "", describe(expected),
      describe(actual)))
  end
end

-- |actual - expected| <= tol (element-wise for nested tables); NaN never passes.
function T.near(actual, expected, tol, what)
  tol = tol or 1e-12
  local function check(a, e, path)
    if type(e) == "table" then
      if type(a) ~= "table" or #a ~= #e then
        fail(string.format("%sshape differs at %s: expected %s, got %s", what and (what .. ": ") or "",
          path, describe(e), describe(a)), 2)
      end
      for i = 1, #e do check(a[i], e[i], path .. "[" .. i .. "]") end
    else
      if type(a) ~= "number" or not (math.abs(a - e) <= tol) then
        fail(string.format("%sat %s expected %s (tolerance %g), got %s", what and (what .. ": ") or "",
          path, describe(e), tol, describe(a)), 2)
      end
    end
  end
  check(actual, expected, "value")
end

function T.truthy(v, what)
  if not v then fail((what or "expected a true value") .. ", got " .. describe(v)) end
  return v
end

-- fn() must raise an error whose message contains `needle` (plain text, not a pattern).
-- Returns the message.
function T.raises(fn, needle, what)
  local ok, err = pcall(fn)
  if ok then
    fail(string.format("%sexpected an error containing %q, but the call succeeded",
      what and (what .. ": ") or "", needle or ""))
  end
  local msg = tostring(err)
  if needle and not msg:find(needle, 1, true) then
    fail(string.format("%sexpected an error containing %q, got %q", what and (what .. ": ") or "",
      needle, msg))
  end
  return msg
end

local Skip = {}
-- Ends the current case as skipped.
function T.skip(reason)
  error(setmetatable({ reason = reason }, Skip), 0)
end

-- Test hook (for the tests of cu.sweep{isolate = true}): ends this process with SIGSEGV, as a
-- crashing kernel launch or library does. Runs only when the environment variable
-- CULUA_TEST_HOOKS is 1; otherwise it raises.
function T.segfault()
  local hooks = require "cu.test_hooks"
  return hooks.segfault()
end

function T.run()
  local filter = arg and arg[1]
  local passed, failed, skipped = 0, 0, 0
  local failures = {}
  for _, c in ipairs(cases) do
    if not filter or c.name:find(filter, 1, true) then
      local ok, err = xpcall(c.fn, function(e)
        if getmetatable(e) == Skip then return e end
        return debug.traceback(tostring(e), 2)
      end)
      if ok then
        passed = passed + 1
        print("ok      " .. c.name)
      elseif getmetatable(err) == Skip then
        skipped = skipped + 1
        print("skip    " .. c.name .. ": " .. tostring(err.reason))
      else
        failed = failed + 1
        failures[#failures + 1] = c.name
        print("FAIL    " .. c.name .. "\n" .. err)
      end
    end
  end
  print(string.format("%d passed, %d failed, %d skipped", passed, failed, skipped))
  if failed > 0 then print("failed: " .. table.concat(failures, "; ")) end
  io.stdout:flush()
  return failed == 0 and 0 or 1
end

return T
