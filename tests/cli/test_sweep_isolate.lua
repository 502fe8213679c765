-- Isolated sweep points (cu.sweep{isolate = true, timeout = s}; docs/sweep.md#isolated-points):
-- scripts run by the culua program whose points crash, exit, raise or hang.
-- Run as `culua tests/cli/test_sweep_isolate.lua PATH_TO_CULUA [BACKEND]` (default host).
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_sweep_isolate.lua PATH_TO_CULUA [BACKEND]")
local backend = arg[2] or "host"
table.remove(arg, 1) -- T.run() reads arg[1] as a filter
if arg[1] == backend then table.remove(arg, 1) end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local temps = {}
local function temp_path(suffix)
  local path = os.tmpname() .. (suffix or "")
  temps[#temps + 1] = path
  return path
end

local function temp_script(source)
  local path = temp_path(".lua")
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  return path
end

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function count_lines(path)
  local n = 0
  for _ in (read(path) or ""):gmatch("[^\n]+") do n = n + 1 end
  return n
end

-- Runs culua with `args` (already quoted for the shell); returns stdout, stderr, exit code.
local function run(args, opts)
  opts = opts or {}
  local err = temp_path(".err")
  local cmd = "CULUA_TEST_HOOKS=1 " .. (opts.env or "") .. " timeout 120 " .. shell_quote(exe) ..
    " --backend " .. backend .. " " .. args .. " 2>" .. shell_quote(err)
  if opts.stdin then cmd = "printf '%s' " .. shell_quote(opts.stdin) .. " | " .. cmd end
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  return out, read(err) or "", code
end

if backend == "cuda" then -- skipped without a GPU (ctest's SKIP_RETURN_CODE)
  local probe = io.popen(shell_quote(exe) .. " --backend cuda -e '' 2>/dev/null")
  probe:read("a")
  local _, _, code = probe:close()
  if code == 69 then os.exit(69) end
end

-- The rows of the script's sweep as "name=status: error" lines, printed by the script itself.
local function row_lines(out)
  local rows = {}
  for line in out:gmatch("ROW ([^\n]*)") do rows[#rows + 1] = line end
  return rows
end

local PRINT_ROWS = [[
local function show(results)
  for _, r in ipairs(results) do
    local err = r.error and (r.error:gsub("\n", " | ")) or ""
    local value = type(r.value) == "number" and ("%g"):format(r.value) or tostring(r.value)
    print(("ROW %s %s %s %s"):format(r.case, r.status, value, err))
  end
end
]]

T.case("crashes, exits, errors and hangs are failed rows; the good points are right", function()
  local json = temp_path(".json")
  local script = temp_script(PRINT_ROWS .. [[
local T = require "cu.testing"
local results = cu.sweep{
  name = "isolated",
  axes = {{"case", {"good", "exit", "raise", "segfault", "hang", "table", "good2"}}},
  isolate = true, timeout = 1.5, quiet = true,
  run = function(p)
    if p.case == "exit" then os.exit(3) end
    if p.case == "raise" then error("the point raised") end
    if p.case == "segfault" then
      io.stderr:write("about to crash\n")
      T.segfault()
    end
    if p.case == "hang" then while true do end end
    if p.case == "table" then return {value = 6, nested = {a = 1.5, b = {1, 2}}} end
    local x = cu.arange(1, 5):sum():item()
    return {value = x * (p.case == "good" and 1 or 2)}
  end,
}
show(results)
print("nested", results[6].nested.a, results[6].nested.b[2], #results, results.rows == results.rows)
print("after the sweep")
]])
  local out, err, code = run("--json " .. shell_quote(json) .. " " .. shell_quote(script))
  T.eq(code, 0, out .. err)
  local rows = row_lines(out)
  T.eq(#rows, 7, out)
  T.eq(rows[1], "good ok 10 ")
  T.truthy(rows[2]:find("^exit failed nil exited with status 3 without a result"), rows[2])
  T.truthy(rows[3]:find("^raise failed nil [^ ]*:%d+: the point raised$"), rows[3])
  T.truthy(rows[4]:find("^segfault failed nil crashed: signal 11 %(Segmentation fault%) | about " ..
    "to crash$"), rows[4])
  T.truthy(rows[5]:find("^hang failed nil timed out after 1.5 s %(killed%)$"), rows[5])
  T.eq(rows[6], "table ok 6 ")
  T.eq(rows[7], "good2 ok 20 ")
  T.truthy(out:find("nested\t1.5\t2\t7\ttrue\n", 1, true), out)
  -- the code after the sweep ran once, in the parent
  local _, after = out:gsub("after the sweep", "")
  T.eq(after, 1, out)
  -- every row is in the result file
  local file = cu.json.decode(assert(read(json)))
  T.eq(#file.sweeps, 1)
  local points = file.sweeps[1].points
  T.eq(#points, 7)
  local status = {}
  for i, p in ipairs(points) do status[i] = p.params.case .. "=" .. p.status end
  T.eq(status, {"good=ok", "exit=failed", "raise=failed", "segfault=failed", "hang=failed",
    "table=ok", "good2=ok"})
  T.truthy(points[4].error:find("about to crash", 1, true), points[4].error)
  T.eq(points[1].result.value, 10)
end)

T.case("the table is printed by the parent; a child's stdout is not", function()
  local script = temp_script([[
print("prefix")
cu.sweep{name = "shown", axes = {n = {1, 2}}, isolate = true,
  run = function(p) print("inside the point"); return p.n * 3 end}
]])
  local out, err, code = run(shell_quote(script))
  T.eq(code, 0, out .. err)
  T.eq(select(2, out:gsub("prefix", "")), 1, out)
  T.truthy(not out:find("inside the point", 1, true), out)
  T.truthy(out:find("### shown\n\n| n   | time (ms) |\n| --: | --------: |\n|   1 |     3.000 |\n" ..
    "|   2 |     6.000 |\n", 1, true), out)
end)

T.case("sweeps before the isolated one are journaled, not run again in the children", function()
  local calls = temp_path(".calls")
  local starts = temp_path(".starts")
  local script = temp_script(([[
local function append(path, text)
  local f = assert(io.open(path, "a"))
  f:write(text, "\n")
  f:close()
end
append(%q, "start")
local first = cu.sweep{name = "first", axes = {{"k", {1, 2, 3}}}, quiet = true,
  run = function(p)
    append(%q, "first " .. p.k)
    -- a sweep inside a point: the children count it as the parent did
    cu.sweep{name = "second", axes = {{"j", {1}}}, quiet = true, run = function() return 0 end}
    return {v = p.k * 10}
  end}
local second = cu.sweep{name = "second", axes = {{"k", {1, 2, 3}}}, quiet = true, isolate = true,
  run = function(p) return {v = first[p.k].v + p.k, ok = first[p.k].status == "ok"} end}
for _, r in ipairs(second) do print("ROW", r.k, r.status, r.v, r.ok, r.error) end
]]):format(starts, calls))
  local out, err, code = run(shell_quote(script))
  T.eq(code, 0, out .. err)
  T.eq(count_lines(calls), 3, "the first sweep's run ran in the parent only: " .. (read(calls) or ""))
  T.eq(count_lines(starts), 4, "the script started in the parent and in each of 3 children")
  T.truthy(out:find("ROW\t1\tok\t11\ttrue\tnil\n", 1, true), out .. err)
  T.truthy(out:find("ROW\t2\tok\t22\ttrue\tnil\n", 1, true), out)
  T.truthy(out:find("ROW\t3\tok\t33\ttrue\tnil\n", 1, true), out)
end)

T.case("a child that meets a sweep its parent did not run explains the rule", function()
  local marker = temp_path(".marker")
  os.remove(marker)
  local script = temp_script(([[
local f = io.open(%q, "r")
if f then -- only in the children: the parent made the file
  f:close()
  cu.sweep{name = "extra", axes = {n = {1}}, quiet = true, run = function() return 1 end}
else
  io.open(%q, "w"):close()
end
local r = cu.sweep{name = "main", axes = {n = {1}}, quiet = true, isolate = true,
  run = function() return 1 end}
print("ROW", r[1].status, (r[1].error:gsub("\n", " | ")))
]]):format(marker, marker))
  local out, err, code = run(shell_quote(script))
  T.eq(code, 0, out .. err)
  T.truthy(out:find("ROW\tfailed\texited with status 1 without a result | ", 1, true), out)
  T.truthy(out:find("the 1st sweep named 'extra' ran in the child process of an isolated point " ..
    "(of the 1st sweep named 'main'), but not in its parent before that sweep", 1, true), out)
  T.truthy(out:find("must call the same sweeps in the same order", 1, true), out)
end)

local ISOLATED_E = "local r = cu.sweep{axes = {n = {1, 2}}, isolate = true, quiet = true, " ..
  "run = function(p) return p.n + 1 end}; print(r[1].ms, r[2].ms, r[1].status)"

T.case("-e chunks run again in the children", function()
  local out, err, code = run("-e " .. shell_quote(ISOLATED_E))
  T.eq(code, 0, out .. err)
  T.eq(out, "2\t3\tok\n")
end)

T.case("a result that cannot be recorded fails its point as without isolation", function()
  local out, err, code = run("-e " .. shell_quote([[
local r = cu.sweep{quiet = true, isolate = true, axes = {{"n", {1, 2, 3}}}, run = function(p)
  local t = {ms = 1}
  if p.n == 1 then t.again = t end
  if p.n == 3 then return "text" end
  return t
end}
for i = 1, 3 do print(r[i].status, r[i].error) end]]))
  T.eq(code, 0, out .. err)
  T.eq(out, "failed\tfield 'again': cannot encode a table that contains itself (a cycle) at .again\n" ..
    "ok\tnil\nfailed\trun returned a string: return a cu.bench result, a number (milliseconds) or " ..
    "a table of fields\n")
end)

T.case("a script from standard input cannot be isolated", function()
  for _, args in ipairs({ "-", "" }) do
    local out, err, code = run(args, { stdin = ISOLATED_E })
    T.eq(code, 1, out .. err)
    T.truthy(err:find("bad argument #1 to 'sweep' (option 'isolate': not available here: the " ..
      "script was read from standard input)", 1, true), err)
  end
end)

T.case("-i: the -e chunk's sweep is isolated, one typed in the REPL is refused", function()
  local out, err, code = run("-i -e " .. shell_quote(ISOLATED_E), { stdin = ISOLATED_E .. "\n" })
  T.eq(code, 0, out .. err)
  T.truthy(out:find("^2\t3\tok\n"), out)
  T.truthy((out .. err):find("(option 'isolate': not available here: code typed in the REPL cannot " ..
    "be run again)", 1, true), out .. err)
end)

T.case("bad isolate and timeout values name the option", function()
  local cases = {
    { "isolate = 1", "(option 'isolate': boolean expected, got number)" },
    { "isolate = true, timeout = 0", "(option 'timeout': must be a number of seconds > 0, got 0)" },
    { "isolate = true, timeout = -2", "(option 'timeout': must be a number of seconds > 0, got -2)" },
    { "isolate = true, timeout = 1/0", "(option 'timeout': must be a number of seconds > 0, got inf)" },
    { "isolate = true, timeout = '5'", "(option 'timeout': number of seconds expected, got string)" },
    { "timeout = 5", "(option 'timeout': needs isolate = true" },
  }
  for _, c in ipairs(cases) do
    local code = "local ok, err = pcall(cu.sweep, {axes = {n = {1}}, run = function() end, " ..
      c[1] .. "}); print(err); assert(cu.zeros(2):sum():item() == 0)"
    local out, err, status = run("-e " .. shell_quote(code))
    T.eq(status, 0, out .. err)
    T.truthy(out:find("bad argument #1 to 'cu.sweep' " .. c[2], 1, true), c[1] .. ": " .. out)
  end
end)

T.case("the segfault hook needs CULUA_TEST_HOOKS=1", function()
  local out, err, code = run("-e " .. shell_quote(
    "print(pcall(require('cu.testing').segfault))"), { env = "CULUA_TEST_HOOKS=0" })
  T.eq(code, 0, out .. err)
  T.truthy(out:find("false\t[^\n]*segfault: is a test hook that crashes the process %(SIGSEGV%); " ..
    "it runs only when the environment variable CULUA_TEST_HOOKS is 1"), out)
end)

T.case("the segfault hook does not run under --sandbox, even with CULUA_TEST_HOOKS=1", function()
  local out, err, code = run("--sandbox -e " .. shell_quote(
    "print(pcall(require('cu.testing').segfault))"), { env = "CULUA_TEST_HOOKS=1" })
  T.eq(code, 0, out .. err)
  T.truthy(out:find("false\t[^\n]*segfault: is a test hook that crashes the process; it does " ..
    "not run under %-%-sandbox"), out)
end)

T.case("isolate is refused in --sandbox", function()
  local out, err, code = run("--sandbox -e " .. shell_quote(ISOLATED_E))
  T.eq(code, 1, out .. err)
  T.truthy(err:find("(option 'isolate': not available in --sandbox", 1, true), err)
end)

T.case("a bad child environment is an error before anything runs", function()
  local out, err, code = run("-e " .. shell_quote("print('ran')"),
    { env = "CULUA_ISOLATE_SWEEP=x" })
  T.eq(code, 1, out .. err)
  T.eq(out, "")
  T.truthy(err:find("are set by cu.sweep{isolate = true} for its child processes: all of them or " ..
    "none", 1, true), err)
end)

local status = T.run()
for _, path in ipairs(temps) do os.remove(path) end
os.exit(status)
