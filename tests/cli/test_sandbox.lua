-- `culua --sandbox` (docs/sandbox.md): run as `culua tests/cli/test_sandbox.lua PATH_TO_CULUA`.
-- Each escape ends in a clear error and exit status 1, in time; what the sandbox allows works.
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_sandbox.lua PATH_TO_CULUA")
table.remove(arg, 1) -- T.run() reads arg[1] as a filter

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function temp_file(source, suffix)
  local path = os.tmpname() .. (suffix or "")
  local f = assert(io.open(path, "wb"))
  f:write(source)
  f:close()
  return path
end

-- Runs `culua --backend host --sandbox OPTIONS SCRIPT` under `timeout`; returns the output
-- (stdout and stderr), the exit status and the seconds it took.
local function sandboxed(source, options)
  local path = temp_file(source, ".lua")
  local cmd = ("timeout 60 %s --backend host --sandbox %s %s 2>&1"):format(shell_quote(exe),
    options or "", shell_quote(path))
  local t0 = os.time()
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  os.remove(path)
  return out, code, os.time() - t0
end

local function fails_with(source, text, options, max_seconds)
  local out, code, seconds = sandboxed(source, options)
  T.eq(code, 1, out)
  T.truthy(out:find(text, 1, true), ("expected %q in:\n%s"):format(text, out))
  T.truthy(seconds <= (max_seconds or 10), "took " .. seconds .. " s")
end

T.case("the environment: no io, os.time/clock/date only, no debug, no C modules", function()
  local out, code = sandboxed([[
    print(io, debug, dofile, loadfile, string.dump, package.loadlib)
    local names = {}
    for k in pairs(os) do names[#names + 1] = k end
    table.sort(names)
    print(table.concat(names, ","), getmetatable(""), type(cu.zeros), type(require "cu.testing"))
    print(pcall(require, "lfs"))
  ]])
  T.eq(code, 0, out)
  T.truthy(out:find("nil\tnil\tnil\tnil\tnil\tnil\nclock,date,time\tfalse\tfunction\ttable\n", 1, true), out)
  T.truthy(out:find("false\tmodule 'lfs' not found", 1, true), out)
end)

T.case("a bytecode script is refused", function()
  -- The file starts as a binary chunk does; the sandbox loads text only.
  fails_with("\27Lua\84\0\25\147\r\n\26\n", "attempt to load a binary chunk (mode is 't')")
  fails_with([[assert(load("\27Lua\84\0"))]], "attempt to load a binary chunk")
end)

T.case("--max-time stops loops, also ones that catch the error", function()
  fails_with("while true do end", "the sandbox's time limit of 1 s was exceeded", "--max-time 1")
  fails_with("while true do pcall(function() while true do end end) end",
    "time limit of 1 s was exceeded", "--max-time 1")
  fails_with("xpcall(error, function() while true do end end)", "time limit of 1 s was exceeded",
    "--max-time 1")
  fails_with("while true do pcall(coroutine.wrap(function() while true do end end)) end",
    "time limit of 1 s was exceeded", "--max-time 1")
end)

T.case("--max-time ends the process when one C function runs past it", function()
  -- Lua's pattern matching backtracks in C, where no hook runs: the watchdog ends the process.
  local out, code, seconds = sandboxed([[
    local s = string.rep("a", 300000)
    s:find(".-.-.-.-b")
    print("never")
  ]], "--max-time 1")
  T.eq(code, 1, out)
  T.truthy(out:find("culua: the sandbox's time limit of 1 s was exceeded inside one call of a C "
    .. "function (a pattern match over a long string?): ending the process", 1, true), out)
  T.eq(out:find("never", 1, true), nil)
  T.truthy(seconds <= 8, "took " .. seconds .. " s")
end)

T.case("--max-time stops a wait for the device", function()
  fails_with("cu.sleep(60000) cu.sync()",
    "time limit of 1 s was exceeded while waiting for the device", "--max-time 1")
end)

T.case("--max-time stops host kernels: a reduction over a huge broadcast view", function()
  -- The host backend's workers look at the limit between chunks; the reduction keeps a few
  -- thousand partials at a time, however long the view (2^59 elements grew 5.4 GB in 12 s).
  for _, n in ipairs({ "1 << 40", "1 << 59" }) do
    fails_with("print(cu.broadcast_to(cu.ones(1), {" .. n .. "}):sum():item())",
      "time limit of 1 s was exceeded", "--max-time 1", 5)
  end
  fails_with("local v = cu.broadcast_to(cu.ones({4, 1}), {4, 1 << 40}) print(v:sum({axis = 2}):max():item())",
    "time limit of 1 s was exceeded", "--max-time 1", 5)
  fails_with("local v = cu.broadcast_to(cu.ones({1, 64}), {1 << 40, 64}) print(v:sum({axis = 1}):max():item())",
    "time limit of 1 s was exceeded", "--max-time 1", 5)
  -- The peak memory of the process stays small (GNU time's maximum resident set, in KiB).
  local path = temp_file("print(cu.broadcast_to(cu.ones(1), {1 << 59}):sum():item())", ".lua")
  local f = assert(io.popen(("/usr/bin/time -f 'maxrss %%M' timeout 60 %s --backend host --sandbox "
    .. "--max-time 2 %s 2>&1"):format(shell_quote(exe), shell_quote(path))))
  local out = f:read("a")
  f:close()
  os.remove(path)
  local kib = tonumber(out:match("maxrss (%d+)"))
  T.truthy(kib and kib < 512 * 1024, out)
end)

T.case("--max-time bounds the device work still queued when the script ends", function()
  fails_with("for i = 1, 100 do cu.sleep(3600000) end",
    "time limit of 1 s was exceeded while waiting for the device work still queued when the "
    .. "script ended", "--max-time 1", 5)
  -- Work that ends within the limit is waited for, as always.
  local out, code = sandboxed("cu.sleep(200) print('queued')", "--max-time 5")
  T.eq(code, 0, out)
  T.eq(out, "queued\n")
end)

T.case("--max-time stops the table functions' loops over a huge __len", function()
  local huge = "setmetatable({}, {__len = function() return math.maxinteger - 1 end})"
  fails_with("table.insert(" .. huge .. ", 1, 5)", "time limit of 1 s was exceeded", "--max-time 1")
  fails_with("table.remove(" .. huge .. ", 1)", "time limit of 1 s was exceeded", "--max-time 1")
  fails_with("table.concat(setmetatable({}, {__index = os.clock}), '', 1, 1 << 40)",
    "time limit of 1 s was exceeded", "--max-time 1 --max-memory 0")
  -- (C functions as __index and __newindex: no Lua instruction, no allocation.)
  fails_with("table.sort(setmetatable({}, {__len = function() return (1 << 31) - 2 end, "
    .. "__index = os.clock, __newindex = rawequal}))", "time limit of 1 s was exceeded", "--max-time 1")
  -- They work as Lua's own.
  local out, code = sandboxed([[
    local t = {3, 1, 2}
    table.insert(t, 4) table.insert(t, 1, 0) print(table.concat(t, ","))
    print(table.remove(t, 1), table.remove(t), table.concat(t, "-", 2, 3))
    table.sort(t) print(table.concat(t, ","))
    table.sort(t, function(a, b) return a > b end) print(table.concat(t, ","))
    print(pcall(table.insert, t, 9, 1))
    print(pcall(table.insert, t))
    print(pcall(table.concat, {1, {}, 3}))
    print(pcall(table.sort, {1, "x"}))
    print(pcall(table.sort, t, 3))
  ]])
  T.eq(code, 0, out)
  T.eq(out, table.concat({
    "0,3,1,2,4",
    "0\t4\t1-2",
    "1,2,3",
    "3,2,1",
    "false\tbad argument #2 to 'table.insert' (position out of bounds)",
    "false\twrong number of arguments to 'insert'",
    "false\tinvalid value (table) at index 2 in table for 'concat'",
    "false\tattempt to compare string with number",
    "false\tbad argument #2 to 'table.sort' (function expected, got number)",
    "" }, "\n"))
end)

T.case("--max-time: a __call chain loops in one C call; the watchdog ends it", function()
  local out, code, seconds = sandboxed("local t = setmetatable({}, {}) getmetatable(t).__call = t t()",
    "--max-time 1")
  T.eq(code, 1, out)
  T.truthy(out:find("exceeded inside one call of a C function", 1, true), out)
  T.truthy(seconds <= 8, "took " .. seconds .. " s")
end)

T.case("--max-streams caps the streams a script holds", function()
  fails_with("keep = {} for i = 1, 9 do keep[i] = cu.stream() end",
    "the sandbox's stream limit of 8 was reached", "--max-streams 8")
  -- Dropped streams do not count once collected; 0 is no limit.
  local out, code = sandboxed("for i = 1, 200 do local s = cu.stream() end print('ok')",
    "--max-streams 8")
  T.eq(code, 0, out)
  T.eq(out, "ok\n")
  out, code = sandboxed("keep = {} for i = 1, 100 do keep[i] = cu.stream() end print(#keep)",
    "--max-streams 0")
  T.eq(code, 0, out)
  fails_with("print(1)", "--max-streams: expected a number of streams", "--max-streams lots")
end)

T.case("a trace's records count against the Lua heap", function()
  -- 300,000 operations would hold about 300 MB of records: past 32 MiB they are dropped.
  local trace = os.tmpname() .. ".json"
  local out, code = sandboxed("local a = cu.ones(1) for i = 1, 300000 do a:fill(1) end print('done')",
    "--max-memory 32M --max-time 60 --trace " .. shell_quote(trace))
  os.remove(trace)
  T.eq(code, 0, out)
  T.truthy(out:find("more not recorded: past the limit, or the sandbox's heap", 1, true), out)
end)

T.case("--max-instructions", function()
  fails_with("for i = 1, 1e9 do end", "the sandbox's instruction limit of 1000000 was exceeded",
    "--max-instructions 1000000")
  local out, code = sandboxed("for i = 1, 1000 do end print('ok')", "--max-instructions 1000000")
  T.eq(code, 0, out)
  T.eq(out, "ok\n")
end)

T.case("--max-memory caps the Lua heap", function()
  fails_with("local s = string.rep('x', 1 << 30)",
    "not enough memory: the sandbox's Lua heap limit of 16 MiB was reached", "--max-memory 16M")
  fails_with("local t = {} for i = 1, math.huge do t[i] = i end", "Lua heap limit of 16 MiB",
    "--max-memory 16M")
  -- A script that catches the error goes on.
  local out, code = sandboxed([[
    print(pcall(string.rep, 'x', 1 << 30))
    print(#string.rep('y', 1 << 20))
  ]], "--max-memory 16M")
  T.eq(code, 0, out)
  T.eq(out, "false\tnot enough memory\n1048576\n")
end)

T.case("--max-device-memory caps culua's arrays", function()
  fails_with("keep = {} for i = 1, 1000 do keep[i] = cu.zeros(1 << 20) end",
    "the sandbox's memory quota is exhausted: requested 4.0 MiB, 8.0 MiB of the quota of 10 MiB in use",
    "--max-device-memory 10M")
end)

T.case("--max-device-memory counts host temporaries while the work that keeps them runs", function()
  -- A reduction's partials: refused past the quota with the bytes named; the runtime goes on.
  local out, code = sandboxed([[
    print(pcall(function() return cu.broadcast_to(cu.ones(1), {1 << 30}):sum():item() end))
    print(cu.ones(10):sum():item())
  ]], "--max-device-memory 64K")
  T.eq(code, 0, out)
  T.truthy(out:find("sum: the sandbox's memory quota is exhausted: sum needs 96.3 KiB of host " ..
    "temporaries, 8 B of the quota of 64 KiB in use", 1, true), out)
  T.truthy(out:find("\n10.0\n$"), out)
  -- Given back when each task ends (a reservation with no room waits for the queued work): 500
  -- sums of 2^20 elements (2.6 KiB each, 1.3 MiB in all) under a 64 KiB quota, then an array of
  -- most of it.
  out, code = sandboxed([[
    for _ = 1, 500 do cu.broadcast_to(cu.ones(1), {1 << 20}):sum() end
    cu.sync()
    collectgarbage()
    print(cu.zeros(15000).size)
  ]], "--max-device-memory 64K")
  T.eq({ code, out }, { 0, "15000\n" })
  -- A sort's merge buffer (half a row or a row, by the host threads) beside its input and output.
  fails_with("local a = cu.rand(200000); local b = a:sort()", "sort needs ", "--max-device-memory 1750K")
  -- The f32 copies of a half-precision product.
  fails_with("local m = cu.ones({256, 256}, 'f16'); local p = cu.matmul(m, m)",
    "matmul needs 768.0 KiB of host temporaries", "--max-device-memory 768K")
  out, code = sandboxed("local m = cu.ones({256, 256}, 'f16'); print(cu.matmul(m, m).size)",
    "--max-device-memory 2M")
  T.eq({ code, out }, { 0, "65536\n" })
end)

T.case("file writes: only the paths of the command line", function()
  local json = os.tmpname() .. ".json"
  local other = os.tmpname() .. ".json"
  os.remove(other)
  local sweep = "cu.sweep{axes = {n = {1, 2}}, run = function(p) return {ms = p.n} end, quiet = true"
  -- The --json file of the command line is written, also named by the script.
  local out, code = sandboxed(sweep .. "}", "--json " .. shell_quote(json))
  T.eq(code, 0, out)
  local f = assert(io.open(json))
  T.truthy(f:read("a"):find('"sweeps"', 1, true))
  f:close()
  out, code = sandboxed(sweep .. ", json = " .. ("%q"):format(json) .. "}", "--json " .. shell_quote(json))
  T.eq(code, 0, out)
  fails_with(sweep .. ", json = " .. ("%q"):format(other) .. "}",
    "the sandbox does not allow writing '" .. other .. "'", "--json " .. shell_quote(json))
  T.eq(io.open(other), nil)
  os.remove(json)
  -- --trace is written at the end of the run.
  local trace = os.tmpname() .. ".json"
  out, code = sandboxed("local a = cu.ones(8) a = a + 1", "--trace " .. shell_quote(trace))
  T.eq(code, 0, out)
  f = assert(io.open(trace))
  T.truthy(f:read("a"):find("traceEvents", 1, true))
  f:close()
  os.remove(trace)
end)

T.case("bad limits are refused before anything runs", function()
  local out, code = sandboxed("print('ran')", "--max-memory lots")
  T.eq(code, 1)
  T.truthy(out:find("--max-memory: cannot read 'lots' as a byte size", 1, true), out)
  T.eq(out:find("ran", 1, true), nil)
end)

T.case("bad numbers for the limits name the option and the accepted range", function()
  for _, c in ipairs({
    { "--max-time 1e10", "--max-time: expected a number of seconds from 0 to 1e9 (0: no limit), got '1e10'" },
    { "--max-time nan", "--max-time: expected a number of seconds from 0 to 1e9 (0: no limit), got 'nan'" },
    { "--max-time=-1", "--max-time: expected a number of seconds from 0 to 1e9 (0: no limit), got '-1'" },
    { "--max-instructions 1e3", "--max-instructions: expected a whole number of instructions from 0 to " ..
      "2^64-1 (0: no limit), got '1e3'" },
    { "--max-instructions 99999999999999999999", "--max-instructions: expected a whole number of " ..
      "instructions from 0 to 2^64-1 (0: no limit), got '99999999999999999999'" },
    { "--max-memory abc", "--max-memory: cannot read 'abc' as a byte size (like 512M or 2G)" },
  }) do
    local f = assert(io.popen(shell_quote(exe) .. " --backend host --sandbox " .. c[1] ..
      " -e 'print(1)' 2>&1"))
    local out = f:read("a")
    local _, _, code = f:close()
    T.eq({ out, code }, { exe .. ": " .. c[2] .. "\n", 1 }, c[1])
  end
end)

T.case("the limits need --sandbox; LUA_INIT is ignored in the sandbox", function()
  local f = assert(io.popen(shell_quote(exe) .. " --backend host --max-time 1 -e 'print(1)' 2>&1"))
  local out = f:read("a")
  local _, _, code = f:close()
  T.eq(code, 1)
  T.eq(out, exe .. ": --max-time needs --sandbox\n")
  f = assert(io.popen("LUA_INIT='print(\"init\")' " .. shell_quote(exe) ..
    " --backend host --sandbox -e 'print(2)' 2>&1"))
  out = f:read("a")
  f:close()
  T.eq(out, "2\n")
end)

os.exit(T.run())
