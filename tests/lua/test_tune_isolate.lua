-- cu.tune{isolate = true}: every candidate in a child process (cu.sweep's isolate=), so that a
-- candidate that exits, raises or hangs is a failed row and the search goes on; the searches that
-- take several sweeps (descent) make the same decisions in the parent and in the children.
-- Each case runs a small script in a child culua (isolation re-runs the script). Skipped while
-- cu.sweep does not know isolate= (it lands on its own branch).
package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local function isolate_supported()
  local _, err = pcall(cu.sweep, { isolate = false }) -- an error either way (no run=): which one
  return not tostring(err):find("unknown option 'isolate'", 1, true)
end

local function need_isolate()
  if not isolate_supported() then T.skip("cu.sweep does not support isolate= in this build") end
end

-- The candidates' shared part: work proportional to p.reps, the result checked.
local PRELUDE = [[
local N = 1 << 14
local x = cu.arange(N, "f32")
local BENCH = {min_samples = 3, min_time = 0.002, max_time = 0.5, hot = false}
local function work(p)
  local y = cu.empty(N, "f32")
  return function()
    cu.copy(y, x)
    for _ = 1, p.reps do cu.mul(y, 1, {out = y}) end
    return y
  end
end
local function check(y) return cu.abs(y - x):max():item() == 0, "wrong" end
local function report(best, tbl)
  for _, r in ipairs(tbl.rows) do
    print(string.format("ROW %s %s %s", r.reps .. (r.chunk and ("/" .. r.chunk) or ""), r.status,
      (r.error or ""):gsub("\n", " ")))
  end
  print("BEST " .. best.reps .. (best.chunk and ("/" .. best.chunk) or ""))
end
]]

local function rows_of(out)
  local rows = {}
  for key, status, err in out:gmatch("ROW (%S+) (%S+) ([^\n]*)") do rows[key] = { status = status, error = err } end
  return rows
end

T.case("isolated: a candidate that exits, one that raises and one that hangs are failed rows", function()
  need_isolate()
  local out, code = S.run_child(PRELUDE .. [[
local best, tbl = cu.tune{kernel = function(p)
  if p.reps == 1 then os.exit(3) end
  if p.reps == 2 then error("raised by candidate 2", 0) end
  if p.reps == 3 then while true do end end
  return work(p)
end, space = {reps = {1, 2, 3, 8, 32}}, check = check, bench = BENCH, isolate = true, timeout = 5, quiet = true}
report(best, tbl)
]])
  T.eq(code, 0, out)
  local rows = rows_of(out)
  T.eq(rows["1"].status, "failed", out)
  T.eq(rows["2"].status, "failed", out)
  T.truthy(rows["2"].error:find("raised by candidate 2", 1, true), out)
  T.truthy(rows["1"].error:find("exited with status 3", 1, true), out)
  T.eq(rows["3"].status, "failed", out)
  T.truthy(rows["3"].error:find("timed out after 5 s", 1, true), out)
  T.eq(rows["8"].status, "ok", out)
  T.eq(rows["32"].status, "ok", out)
  T.truthy(out:find("BEST 8\n", 1, true), out)
end)

T.case("isolated: a candidate that crashes the process (a segfault) is a failed row", function()
  need_isolate()
  local out, code = S.run_child(PRELUDE .. [[
local best, tbl = cu.tune{kernel = function(p)
  if p.reps == 2 then require("cu.testing").segfault() end
  return work(p)
end, space = {reps = {2, 8}}, check = check, bench = BENCH, isolate = true, quiet = true}
report(best, tbl)
]], "CULUA_TEST_HOOKS=1")
  T.eq(code, 0, out)
  local rows = rows_of(out)
  T.eq(rows["2"].status, "failed", out)
  T.truthy(rows["2"].error:find("crashed: signal 11", 1, true), out)
  T.eq(rows["8"].status, "ok", out)
  T.truthy(out:find("BEST 8\n", 1, true), out)
end)

T.case("isolated descent: the children follow the parent's rounds", function()
  need_isolate()
  local out, code = S.run_child(PRELUDE .. [[
local best, tbl = cu.tune{kernel = function(p)
  if p.chunk == 4 and p.reps == 8 then os.exit(1) end
  return work({reps = p.reps * p.chunk})
end, space = {reps = {2, 8, 32}, chunk = {1, 4, 16}}, search = "descent", check = check, bench = BENCH,
  isolate = true, quiet = true}
report(best, tbl)
print("ROUNDS " .. tbl.rounds)
]])
  T.eq(code, 0, out)
  T.truthy(out:find("BEST 2/1\n", 1, true), out)
  T.eq(rows_of(out)["8/4"].status, "failed", out)
  T.truthy(tonumber(out:match("ROUNDS (%d+)")) >= 2, out)
end)

T.case("isolated with a cache: the second run hits without starting children", function()
  need_isolate()
  local path = os.tmpname()
  os.remove(path)
  local script = PRELUDE .. string.format([[
local best, tbl = cu.tune{kernel = work, space = {reps = {2, 8}}, bench = BENCH, isolate = true, cache = %q,
  quiet = true, key = "work v1"} -- each run is a new temporary file: the key names the kernel
report(best, tbl)
print("CACHED " .. tostring(tbl.cached))
]], path)
  local out, code = S.run_child(script)
  T.eq(code, 0, out)
  T.truthy(out:find("CACHED false", 1, true), out)
  out, code = S.run_child(script)
  T.eq(code, 0, out)
  T.truthy(out:find("CACHED true", 1, true) and out:find("BEST 2\n", 1, true), out)
  os.remove(path)
end)

T.case("isolate= and timeout= are checked by cu.sweep, reported as tune's options", function()
  need_isolate()
  local function tune(extra)
    local spec = { kernel = function() return function() end end, space = { n = { 1 } }, quiet = true }
    for k, v in pairs(extra) do spec[k] = v end
    return cu.tune(spec)
  end
  T.raises(function() tune({ isolate = "yes" }) end, "bad argument #1 to 'tune' (option 'isolate': ")
  T.raises(function() tune({ isolate = true, timeout = -1 }) end, "bad argument #1 to 'tune' (option 'timeout': ")
end)

os.exit(T.run())
