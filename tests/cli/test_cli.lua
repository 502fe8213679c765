-- The culua command line: run as `culua tests/cli/test_cli.lua PATH_TO_CULUA`.
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_cli.lua PATH_TO_CULUA")
table.remove(arg, 1) -- T.run() reads arg[1] as a filter

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

T.case("an error prints culua: file:line: message and a traceback, exit 1", function()
  local path = temp_script("local x = 1\nlocal function f() error('boom') end\nf()\n")
  local out, code = run("--backend host " .. path)
  os.remove(path)
  T.eq(code, 1)
  T.truthy(out:find("^culua: [^\n]*:2: boom\n"), "message with file:line: " .. out)
  T.truthy(out:find("stack traceback:", 1, true), "traceback: " .. out)
  T.truthy(out:find(":3: in ", 1, true), "traceback names the calling line: " .. out)
end)

T.case("errors from cu functions carry the script location", function()
  local path = temp_script("\n\ncu.empty(-1)\n")
  local out, code = run("--backend host " .. path)
  os.remove(path)
  T.eq(code, 1)
  T.truthy(out:find(":3: empty: size %-1 in shape {%-1} is negative"), out)
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

T.case("-v prints the version", function()
  local out, code = run("-v")
  T.eq(code, 0)
  T.truthy(out:find("^culua %d+%.%d+%.%d+ %(Lua 5%.4"), out)
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

T.case("--device out of range is a clear error", function()
  local out, code = run("--backend host --device 5 -e 'cu.empty(1)'")
  T.eq(code, 1)
  T.truthy(out:find("device 5 does not exist", 1, true), out)
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

os.exit(T.run())
