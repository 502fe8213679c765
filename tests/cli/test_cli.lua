-- The culua command line: run as `culua tests/cli/test_cli.lua PATH_TO_CULUA`.
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_cli.lua PATH_TO_CULUA [CU_MODULE_DIR]")
local module_dir = arg[2] -- the folder of cu.so, for the stock-Lua checks
table.remove(arg, 1) -- T.run() reads arg[1] as a filter
-- Errors start with the program's name as invoked (argv[0]: exe here), as in lua.
local prefix = "^" .. (exe .. ": "):gsub("%p", "%%%0")
if module_dir then table.remove(arg, 1) end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs culua with `args` (a string already quoted for the shell); returns output, exit code.
local function run(args, opts)
  opts = opts or {}
  local cmd = (opts.env or "") .. " " .. shell_quote(exe) .. " " .. args
  if opts.stdin then cmd = "printf '%s' " .. shell_quote(opts.stdin) .. " | " .. cmd end
  local f = assert(io.popen(cmd .. " 2>&1", "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  return out, code
end

-- Runs a shell command line (output and errors together) under `timeout`; returns output, exit
-- code and the wall-clock seconds it took (124: it was still running after `limit` seconds).
local function run_timed(cmd, limit)
  local t0 = os.time()
  local f = assert(io.popen(("timeout %d %s 2>&1"):format(limit or 30, cmd), "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  return out, code, os.time() - t0
end

local function temp_script(source)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  return path
end

T.case("-e runs code and exits 0", function()
  local out, code = run("--backend host -e 'print(1 + 1)'")
  T.eq(code, 0)
  T.eq(out, "2\n")
end)

T.case("-e and -l run in command-line order", function()
  local out, code = run("--backend host -e 'x = 1' -l T=cu.testing -e 'print(x, type(T.case))'")
  T.eq(code, 0)
  T.eq(out, "1\tfunction\n")
end)

T.case("cu is a global and require 'cu' returns it", function()
  local out = run("--backend host -e 'print(require(\"cu\") == cu, cu.backend)'")
  T.eq(out, "true\thost\n")
end)

T.case("a script gets its arguments in arg and ...", function()
  local path = temp_script([[
    print(arg[0] == ..., select('#', ...))
    print(arg[1], arg[2], #arg)
    print(arg[-1] ~= nil)
  ]])
  local out, code = run("--backend host " .. path .. " alpha 'beta gamma'")
  os.remove(path)
  T.eq(code, 0)
  -- arg[0] is the script, `...` its arguments
  T.eq(out, "false\t2\nalpha\tbeta gamma\t2\ntrue\n")
end)

T.case("script options after the script name belong to the script", function()
  local path = temp_script("print(arg[1], arg[2])")
  local out, code = run("--backend host " .. path .. " -e --backend")
  os.remove(path)
  T.eq(code, 0)
  T.eq(out, "-e\t--backend\n")
end)

T.case("an error prints PROGNAME: file:line: message and a traceback, exit 1", function()
  local path = temp_script("local x = 1\nlocal function f() error('boom') end\nf()\n")
  local out, code = run("--backend host " .. path)
  os.remove(path)
  T.eq(code, 1)
  T.truthy(out:find(prefix .. "[^\n]*:2: boom\n"), "message with file:line: " .. out)
  T.truthy(out:find("stack traceback:", 1, true), "traceback: " .. out)
  T.truthy(out:find(":3: in ", 1, true), "traceback names the calling line: " .. out)
end)

T.case("errors from cu functions carry the script location", function()
  local path = temp_script("\n\ncu.empty(-1)\n")
  local out, code = run("--backend host " .. path)
  os.remove(path)
  T.eq(code, 1)
  T.truthy(out:find(":3: bad argument #1 to 'empty' (size -1 in shape {-1} is negative)", 1, true),
    out)
  -- a cu.Error prints as its text, with the traceback
  T.truthy(out:find(prefix .. "[^\n]*:3: bad argument"), out)
  T.truthy(out:find("stack traceback:", 1, true), "traceback: " .. out)
end)

T.case("a syntax error exits 1 with the message", function()
  local path = temp_script("local = 1\n")
  local out, code = run("--backend host " .. path)
  os.remove(path)
  T.eq(code, 1)
  T.truthy(out:find(":1: <name> expected", 1, true), out)
end)

T.case("a missing script exits 1", function()
  local out, code = run("--backend host /nonexistent/script.lua")
  T.eq(code, 1)
  T.truthy(out:find("cannot open /nonexistent/script.lua", 1, true), out)
end)

T.case("os.exit passes its status through", function()
  local _, code = run("--backend host -e 'os.exit(3)'")
  T.eq(code, 3)
end)

T.case("a finalizer at the close cannot make arrays (they would never be freed)", function()
  -- Lua 5.4 registers no finalizer for an object made while the state closes: culua refuses it,
  -- at the end of a script and at os.exit(code, true).
  local body = [[
KEEP = setmetatable({}, { __gc = function()
  local ok, err = pcall(cu.ones, 3)
  print("at close:", ok, err)
  ok, err = pcall(cu.stream)
  print("stream at close:", ok, err)
end })
local also = cu.ones(2) -- an ordinary array still works before the close
print("before:", also:sum():item())
]]
  for _, tail in ipairs({ "", "os.exit(0, true)\n" }) do
    local script = temp_script(body .. tail)
    local out, code = run("--backend host " .. shell_quote(script))
    os.remove(script)
    T.eq(code, 0, out)
    T.truthy(out:find("before:\t2", 1, true), out)
    T.truthy(out:find("at close:\tfalse\t[^\n]*the Lua state is closing: no new arrays"), out)
    T.truthy(out:find("stream at close:\tfalse\t[^\n]*the Lua state is closing: no new streams"), out)
  end
end)

T.case("-v prints the version", function()
  local out, code = run("-v")
  T.eq(code, 0)
  T.truthy(out:find("^culua %d+%.%d+%.%d+ %(Lua 5%.4"), out)
  -- the device code the binary holds: sm_NN / compute_NN images, or none without CUDA
  local archs = out:match("\nCUDA architectures: ([^\n]+)")
  T.truthy(archs, out)
  T.truthy(archs == "none (host backend only)" or archs:find("^sm_%d") or archs:find("^compute_%d")
    or archs:find("^native"), archs)
end)

T.case("--backend rejects unknown names", function()
  local out, code = run("--backend bogus -e 'print(1)'")
  T.truthy(code ~= 0, "nonzero exit")
  T.truthy(out:find("bogus", 1, true), out)
end)

T.case("CULUA_BACKEND selects the backend; --backend wins", function()
  local out = run("-e 'print(cu.backend)'", { env = "CULUA_BACKEND=host" })
  T.eq(out, "host\n")
  local bad, code = run("-e 'print(cu.backend)'", { env = "CULUA_BACKEND=bogus" })
  T.eq(code, 1)
  T.truthy(bad:find("unknown backend 'bogus'", 1, true), bad)
  out = run("--backend host -e 'print(cu.backend)'", { env = "CULUA_BACKEND=bogus" })
  T.eq(out, "host\n")
end)

T.case("--backend cuda without a GPU exits 69; with one it runs", function()
  local out, code = run("--backend cuda -e 'print(cu.backend)'")
  if code == 0 then
    T.eq(out, "cuda\n")
  else
    T.eq(code, 69)
    T.truthy(out:find("no CUDA device", 1, true) or out:find("without the CUDA toolkit", 1, true), out)
  end
end)

T.case("--warm-cache runs the script and reports the generated kernels it compiled or found", function()
  local script = temp_script([[
local x, y = cu.rand(1000), cu.empty(1000)
cu.fuse(function() cu.mul(x, 2, { out = y }); cu.add(y, 1, { out = y }) end)()
print("ran")
]])
  local out, code = run("--warm-cache")
  T.eq(code, 1)
  T.truthy(out:find("--warm-cache needs a script", 1, true), out)
  out, code = run("--backend host --warm-cache " .. shell_quote(script))
  T.eq(code, 1, out)
  T.truthy(out:find("^ran\n"), out)
  T.truthy(out:find("--warm-cache: the host backend generates no kernels", 1, true), out)
  local dir = os.tmpname()
  os.remove(dir)
  local env = { env = "CULUA_CACHE_DIR=" .. shell_quote(dir) }
  out, code = run("--backend cuda --warm-cache " .. shell_quote(script), env)
  if code ~= 69 then -- a GPU: compiled the first time, found the second
    T.eq(code, 0, out)
    T.truthy(out:find("%-%-warm%-cache: 1 generated kernel compiled %([%d.]+ ms of NVRTC%) and 0 already in the cache"),
      out)
    out, code = run("--backend cuda --warm-cache " .. shell_quote(script), env)
    T.eq(code, 0, out)
    local found = "--warm-cache: 0 generated kernels compiled (0.0 ms of NVRTC) and 1 already in the cache"
    T.truthy(out:find(found, 1, true), out)
    os.execute("rm -rf " .. shell_quote(dir))
  end
  os.remove(script)
end)

T.case("--device out of range is refused at start, naming the option and the devices", function()
  -- at start: before -e runs (nothing is printed), whatever the script calls
  local out, code = run("--backend host --device 5 -e 'print(\"ran\")'")
  T.eq({ out, code }, { exe .. ": --device: device 5 does not exist: the host backend has 1 device, " ..
    "numbered 0 ($CULUA_HOST_DEVICES sets how many)\n", 1 })
  out, code = run("--device 3 -e 'print(\"ran\")'", { env = "CULUA_BACKEND=host CULUA_HOST_DEVICES=3" })
  T.eq({ out, code }, { exe .. ": --device: device 3 does not exist: the host backend has 3 devices, " ..
    "numbered 0 to 2 ($CULUA_HOST_DEVICES sets how many)\n", 1 })
  -- a device that exists is the one the script starts on
  out, code = run("--device 2 -e 'print(cu.device(), cu.zeros(2).device)'",
    { env = "CULUA_BACKEND=host CULUA_HOST_DEVICES=3" })
  T.eq({ out, code }, { "2\t2\n", 0 })
  out, code = run("--backend host --device 0 -e 'print(cu.device())'")
  T.eq({ out, code }, { "0\n", 0 })
end)

T.case("a script from stdin with -", function()
  local out, code = run("--backend host -", { stdin = "print(6 * 7)\n" })
  T.eq(code, 0)
  T.eq(out, "42\n")
end)

T.case("stdin without a terminal runs as a script", function()
  local out, code = run("--backend host", { stdin = "print('piped')\n" })
  T.eq(code, 0)
  T.eq(out, "piped\n")
end)

T.case("-i: expressions print, multi-line chunks continue, errors keep the state", function()
  local input = table.concat({
    "1 + 1",
    "x = 40",
    "for i = 1, 2 do",
    "  x = x + i",
    "end",
    "x",
    "error('oops')",
    "x + 0.5",
    "cu.arange(3)",
    "",
  }, "\n")
  local out, code = run("--backend host -i", { stdin = input })
  T.eq(code, 0)
  T.truthy(out:find("\n2\n", 1, true) or out:find("> 2\n", 1, true), "1 + 1 printed 2: " .. out)
  T.truthy(out:find("43\n", 1, true), "the loop ran and x kept its value: " .. out)
  T.truthy(out:find("oops", 1, true), "error printed: " .. out)
  T.truthy(out:find("43.5\n", 1, true), "state survived the error: " .. out)
  T.truthy(out:find("cu.array([0., 1., 2.], shape={3}, dtype=f32, device)", 1, true), out)
end)

T.case("startup does not create the CUDA context when the script never touches it", function()
  -- `cu.backend` and allocations create it; a plain script must not. On a GPU machine this
  -- shows as a fast start; here we check that nothing GPU-related is reported.
  local out, code = run("-e 'local x = 1'")
  T.eq(code, 0)
  T.eq(out, "")
end)

T.case("compare refuses deeply nested JSON with a clear error instead of overflowing", function()
  local deep = temp_script(("["):rep(20000) .. ("]"):rep(20000))
  local ok_file = temp_script('{"format": "culua-results", "sweeps": []}')
  local out, code = run("compare " .. deep .. " " .. ok_file)
  T.eq(code, 2, out)
  T.truthy(out:find(deep .. " nests arrays and objects deeper than 200 levels", 1, true), out)
  out, code = run("compare " .. ok_file .. " " .. deep)
  T.eq(code, 2, out)
  T.truthy(out:find(deep .. " nests arrays and objects deeper than 200 levels", 1, true), out)
  os.remove(deep)
  os.remove(ok_file)
end)

T.case("unknown options are named, as lua does; -E, -W, - and -- still work", function()
  local out, code = run("--frobnicate")
  T.eq(code, 1)
  T.truthy(out:find("unrecognized option '--frobnicate'", 1, true), out)
  T.truthy(not out:find("cannot open", 1, true), out)
  out, code = run("-x -e 'print(1)'")
  T.eq(code, 1)
  T.truthy(out:find("unrecognized option '-x'", 1, true), out)
  -- after "--" a name starting with '-' is a script
  out, code = run("--backend host -- -no-such-script.lua")
  T.eq(code, 1)
  T.truthy(out:find("cannot open -no-such-script.lua", 1, true), out)
  local path = temp_script("print(...)")
  out, code = run("--backend host -- " .. path .. " --frobnicate -x")
  T.eq(code, 0, out)
  T.eq(out, "--frobnicate\t-x\n")
  out, code = run("--backend host -W -e 'warn(\"hello\")'")
  T.eq(code, 0, out)
  T.truthy(out:find("Lua warning: hello", 1, true), out)
  out, code = run("--backend host -e 'print(1)'", { env = "LUA_INIT='print(\"init\")'" })
  T.eq(code, 0, out)
  T.eq(out, "init\n1\n")
  out, code = run("--backend host -E -e 'print(1)'", { env = "LUA_INIT='print(\"init\")'" })
  T.eq(code, 0, out)
  T.eq(out, "1\n")
  os.remove(path)
end)

T.case("--device that is not a number says so plainly", function()
  for _, bad in ipairs({ "abc", "-1", "1.5", "99999999999999999999" }) do
    local out, code = run("--backend host --device " .. shell_quote(bad) .. " -e 'print(1)'")
    T.truthy(code ~= 0, "nonzero exit for " .. bad)
    T.truthy(out:find("expected a device number (0, 1, ...), got '" .. bad .. "'", 1, true), out)
    T.truthy(not out:find("%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d"), "no huge range: " .. out)
  end
end)

T.case("CULUA_BACKEND=cuda without a GPU exits 69 like --backend cuda", function()
  local out, code = run("-e 'print(cu.backend)'", { env = "CULUA_BACKEND=cuda" })
  if code == 0 then
    T.eq(out, "cuda\n")
  else
    T.eq(code, 69)
    T.truthy(out:find("no CUDA device", 1, true) or out:find("without the CUDA toolkit", 1, true), out)
  end
end)

T.case("a bad CULUA_HOST_MEMORY_LIMIT is named before anything runs; absurd sizes are refused", function()
  for _, bad in ipairs({ "lots", "12X", "99999999999999999999G", "20000000000G", "18446744073709551615" }) do
    local out, code = run("--backend host -e 'print(\"ran\"); cu.zeros(4)'",
      { env = "CULUA_HOST_MEMORY_LIMIT=" .. bad })
    T.eq(code, 1, out)
    T.truthy(out:find("CULUA_HOST_MEMORY_LIMIT", 1, true), out)
    T.truthy(not out:find("ran", 1, true), "refused before the script ran: " .. out)
    T.truthy(not out:find("zeros", 1, true), "not blamed on a function: " .. out)
  end
  local out, code = run("--backend host -e 'print(cu.devices()[1].memory)'",
    { env = "CULUA_HOST_MEMORY_LIMIT=3G" })
  T.eq(code, 0, out)
  T.eq(out, tostring(3 << 30) .. "\n")
end)

T.case("CULUA_HOST_THREADS sets the host pool's size; a bad value is named before anything runs", function()
  for _, bad in ipairs({ "0", "many", "-2", "1025", "99999" }) do
    local out, code = run("--backend host -e 'print(\"ran\"); cu.zeros(4)'", { env = "CULUA_HOST_THREADS=" .. bad })
    T.eq(code, 1, out)
    T.truthy(out:find("CULUA_HOST_THREADS", 1, true), out)
    T.truthy(not out:find("ran", 1, true), "refused before the script ran: " .. out)
  end
  for _, n in ipairs({ 1, 3 }) do
    local script = "print(cu.devices()[1].name); print(cu.arange(1000000, \"f64\"):sum():item())"
    local out, code = run("--backend host -e '" .. script .. "'", { env = "CULUA_HOST_THREADS=" .. n })
    T.eq(code, 0, out)
    T.truthy(out:find("(" .. n .. " thread" .. (n == 1 and ")" or "s)"), 1, true), out)
    T.truthy(out:find("499999500000", 1, true), out)
  end
end)

T.case("host BLAS: kernels from the CPU's features, OPENBLAS_CORETYPE wins and is not inherited", function()
  local out, code = run("-v -e ''", { env = "env -u OPENBLAS_CORETYPE" })
  T.eq(code, 0, out)
  local kernels = out:match("host BLAS: OpenBLAS [%d.]+, (%w+) kernels")
  T.truthy(kernels, out)
  local cpuinfo = io.open("/proc/cpuinfo")
  local flags = cpuinfo and (cpuinfo:read("a"):match("\nflags%s*:([^\n]*)") or "") or ""
  if cpuinfo then cpuinfo:close() end
  local has = function(f) return (" " .. flags .. " "):find(" " .. f .. " ", 1, true) ~= nil end
  if has("avx512f") and has("avx512cd") and has("avx512bw") and has("avx512dq") and has("avx512vl") then
    T.eq(kernels, "SkylakeX", out)
  elseif has("avx2") and has("fma") then
    T.eq(kernels, "Haswell", out)
  end
  -- The variable was OpenBLAS's alone: neither the script nor its children see it.
  out, code = run("--backend host -e 'print(os.getenv(\"OPENBLAS_CORETYPE\")); "
    .. "os.execute(\"echo child:${OPENBLAS_CORETYPE-unset}\")'", { env = "env -u OPENBLAS_CORETYPE" })
  T.eq(code, 0, out)
  T.eq(out, "nil\nchild:unset\n")
  -- A user's choice wins (Prescott runs on every x86-64 CPU).
  out, code = run("-v -e ''", { env = "OPENBLAS_CORETYPE=Prescott" })
  T.eq(code, 0, out)
  T.truthy(out:find("host BLAS: OpenBLAS [%d.]+, Prescott kernels"), out)
end)

T.case("host BLAS: OpenBLAS's threads start at the first product that uses them; exit during one", function()
  -- The process's threads (Linux) before any product, after a product OpenBLAS runs on the
  -- calling thread, after one on its threads: OPENBLAS_NUM_THREADS - 1 more, and only then
  -- (the host pool has no helpers with CULUA_HOST_THREADS=1). The product's bytes do not depend
  -- on OpenBLAS's threads here (small integers: exact).
  local script = "local function threads() local f = io.open(\"/proc/self/status\") "
    .. "local n = f:read(\"a\"):match(\"Threads:%s*(%d+)\") f:close() return tonumber(n) end "
    .. "local w = cu.ones({4}) + 1 cu.sync() local before = threads() "
    .. "local s = cu.matmul(cu.ones({40, 40}), cu.ones({40, 40})) cu.sync() local small = threads() "
    .. "local a = cu.arange(600 * 500, \"f64\"):reshape({600, 500}) % 7 "
    .. "local b = cu.ones({500, 700}, \"f64\") local c = cu.matmul(a, b) cu.sync() "
    .. "local want = 0 for j = 0, 499 do want = want + (599 * 500 + j) % 7 end "
    .. "print(small - before, threads() - before, c[600][700] == want, c:sum():item())"
  local sums = {}
  for _, n in ipairs({ "1", "2", "" }) do
    local env = (n == "" and "env -u OPENBLAS_NUM_THREADS" or "OPENBLAS_NUM_THREADS=" .. n)
      .. " CULUA_HOST_THREADS=1"
    local v = run("--backend host -v -e ''", { env = env })
    local blas = tonumber(v:match("host BLAS: OpenBLAS [%d.]+, %w+ kernels, (%d+) threads?"))
    T.truthy(blas, v)
    if n ~= "" then T.truthy(blas <= tonumber(n), v) end
    local out, code = run("--backend host -e '" .. script .. "'", { env = env })
    T.eq(code, 0, out)
    local small, big, right, sum = out:match("^(%-?%d+)\t(%-?%d+)\t(%a+)\t([^\n]+)")
    T.eq(small, "0", "no OpenBLAS thread for a small product: " .. out)
    T.eq(tonumber(big), blas - 1, "OpenBLAS's threads after a large product: " .. out)
    T.eq(right, "true", out)
    sums[#sums + 1] = sum
  end
  T.eq(sums[2], sums[1])
  T.eq(sums[3], sums[1])
  -- os.exit while products run on OpenBLAS's threads (40 queued, 2000^3 f64, about 0.3 s each
  -- on 2 cores, 30 ms on 16): the exit waits for the OpenBLAS call in progress, not for the queue
  -- (OpenBLAS's own destructor hung under a running product).
  local out, code, seconds = run_timed("env OPENBLAS_NUM_THREADS=2 " .. shell_quote(exe)
    .. " --backend host -e 'local a = cu.ones({2000, 2000}, \"f64\") local c = cu.matmul(a, a) cu.sync() "
    .. "for _ = 1, 40 do cu.matmul(a, a, {out = c}) end "
    .. "local t = cu.clock{warn = false} while cu.clock{warn = false} - t < 0.3 do end os.exit(3)'", 60)
  T.eq(code, 3, out)
  T.truthy(seconds < 30, "exit took " .. seconds .. " s")
end)

T.case("result and trace files that cannot be written stop the run before it starts", function()
  local path = temp_script("print('ran')")
  for _, opt in ipairs({ "--json", "--csv", "--trace" }) do
    local out, code = run("--backend host " .. opt .. " /nonexistent/dir/out.x " .. path)
    T.eq(code, 1, out)
    T.truthy(out:find("cannot write " .. opt .. " file /nonexistent/dir/out.x", 1, true), out)
    T.truthy(not out:find("ran", 1, true), "nothing ran: " .. out)
    out, code = run("--backend host " .. opt .. " / " .. path)
    T.eq(code, 1, out)
    T.truthy(out:find(opt .. " file / is a directory", 1, true), out)
    T.truthy(not out:find("ran", 1, true), "nothing ran: " .. out)
  end
  -- an existing result file is not truncated by the check
  local existing = temp_script("keep me")
  local out, code = run("--backend host --json " .. existing .. " " .. path)
  T.eq(code, 0, out)
  T.eq(assert(io.open(existing)):read("a"), "keep me")
  os.remove(existing)
  os.remove(path)
end)

T.case("a trace that cannot be written at the end exits non-zero", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir " .. dir))
  -- the folder is writable when the run starts and gone when the trace is written
  local out, code = run(("--backend host --trace %s/t.json -e 'cu.ones(3):sum(); os.remove(%q)'")
    :format(dir, dir))
  os.remove(dir)
  T.eq(code, 1, out)
  T.truthy(out:find("culua: --trace: cannot write the trace", 1, true), out)
end)

T.case("-i with standard input at its end or closed exits at once", function()
  local path = temp_script("print('script ran')")
  for _, input in ipairs({ "</dev/null", "<&-" }) do
    local q = shell_quote(exe)
    local out, code = run_timed(q .. " --backend host -i " .. path .. " " .. input, 20)
    T.eq(code, 0, "-i FILE " .. input .. ": " .. out)
    T.truthy(out:find("script ran", 1, true), out)
    out, code = run_timed(q .. " --backend host -i -e 'print(\"code ran\")' " .. input, 20)
    T.eq(code, 0, "-i -e " .. input .. ": " .. out)
    T.truthy(out:find("code ran", 1, true), out)
  end
  os.remove(path)
end)

-- Work queued behind a one-minute sleep on a stream of its own and on the default stream.
local long_work = "local s = cu.stream(); cu.sleep(60000, {stream = s}); local a = cu.ones(1000, {stream = s}); "
  .. "cu.sleep(60000); cu.sleep(60000, {stream = s}); "

T.case("an error exit and os.exit do not wait for queued host work", function()
  local q = shell_quote(exe) .. " --backend host -e "
  for _, c in ipairs({
    { 'error("x")', 1 },
    { "os.exit(0, true)", 0 },
    { "os.exit(3)", 3 },
    { "os.exit(3, true)", 3 },
    { "os.exit(false)", 1 },
  }) do
    local out, code, seconds = run_timed(q .. shell_quote(long_work .. c[1]), 30)
    T.eq(code, c[2], c[1] .. ": " .. out)
    T.truthy(seconds < 10, c[1] .. " took " .. seconds .. " s")
  end
  -- the same from a script file, with its traceback
  local path = temp_script(long_work .. 'error("boom")')
  local out, code, seconds = run_timed(shell_quote(exe) .. " --backend host " .. path, 30)
  os.remove(path)
  T.eq(code, 1, out)
  T.truthy(out:find("boom", 1, true), out)
  T.truthy(seconds < 10, "took " .. seconds .. " s")
  -- a successful end still waits for the queued work (a short sleep here)
  out, code, seconds = run_timed(q .. shell_quote(
    "local s = cu.stream(); cu.sleep(2500, {stream = s}); print('queued')"), 30)
  T.eq(code, 0, out)
  T.eq(out, "queued\n")
  T.truthy(seconds >= 2, "waited for the sleep: " .. seconds .. " s")
end)

-- The environment that runs Debian's lua5.4 with cu.so on the host backend ("env ... "), or nil
-- (the case is skipped, saying why) without the module folder or lua5.4.
local function stock_lua_env()
  if not module_dir then
    print("  (skipped: no module folder given)")
    return nil
  end
  if not os.execute("command -v lua5.4 >/dev/null 2>&1") then
    print("  (skipped: no lua5.4)")
    return nil
  end
  return "env CULUA_BACKEND=host LUA_CPATH=" .. shell_quote(module_dir .. "/?.so") .. " "
end

T.case("stock lua5.4 with the module: os.exit does not wait for queued host work", function()
  local env = stock_lua_env()
  if not env then return end
  for _, c in ipairs({ { "os.exit(0, true)", 0 }, { "os.exit(3)", 3 }, { "os.exit(3, true)", 3 } }) do
    local out, code, seconds = run_timed(env .. "lua5.4 -e " ..
      shell_quote("local cu = require 'cu'; " .. long_work .. c[1]), 30)
    T.eq(code, c[2], c[1] .. ": " .. out)
    T.truthy(seconds < 10, c[1] .. " took " .. seconds .. " s")
  end
end)

T.case("stock lua5.4 with the module: an error end waits for queued work, says so, Ctrl-C ends it", function()
  -- lua.c closes the state after an error as after a normal end: the module cannot tell them apart
  local env = stock_lua_env()
  if not env then return end
  local note = "culua: the Lua state is closing: waiting for the device work still queued (an error does not "
    .. "skip this under stock lua; Ctrl-C ends the process)\n"
  local out, code, seconds = run_timed(env .. "lua5.4 -e " .. shell_quote(
    "local cu = require 'cu'; local s = cu.stream(); cu.sleep(2500, {stream = s}); error('boom')"), 30)
  T.eq(code, 1, out)
  T.truthy(out:find("^lua5%.4: %(command line%):1: boom\n"), out)
  T.truthy(out:find(note, 1, true), "the wait is announced: " .. out)
  T.truthy(seconds >= 2, "waited for the sleep: " .. seconds .. " s")
  -- a close that does not last says nothing
  out, code = run_timed(env .. "lua5.4 -e " .. shell_quote("local cu = require 'cu'; print(cu.ones(3):sum():item())"),
    30)
  T.eq({ out, code }, { "3.0\n", 0 })
  -- Ctrl-C during that wait ends the process at once
  local t0 = os.time()
  local f = assert(io.popen("sh -c " .. shell_quote(env .. "lua5.4 -e " .. shell_quote(
    "local cu = require 'cu'; local s = cu.stream(); cu.sleep(60000, {stream = s}); error('boom')")
    .. " 2>&1 & pid=$!; sleep 2; kill -INT $pid; wait $pid; echo status:$?")))
  out = f:read("a")
  f:close()
  T.truthy(out:find(note, 1, true), out)
  T.truthy(out:find("status:130\n$"), "ended by SIGINT: " .. out)
  T.truthy(os.time() - t0 < 20, "took " .. (os.time() - t0) .. " s")
end)

os.exit(T.run())
