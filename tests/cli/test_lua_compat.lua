-- culua as `lua` 5.4: each behaviour of the stand-alone interpreter that the Lua 5.4 test suite
-- checks in its non-portable parts (testes/main.lua, testes/attrib.lua), checked here on culua.
-- Run as `culua tests/cli/test_lua_compat.lua PATH_TO_CULUA`. Differences that culua documents
-- (docs/cli.md, "Differences from lua") are checked as culua does them.
local _ -- the values a call returns that a check does not look at
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_lua_compat.lua PATH_TO_CULUA")
table.remove(arg, 1) -- T.run() reads arg[1] as a filter
-- Messages start with the program's name as invoked (argv[0], here exe), as lua's do; P is the
-- pattern that matches that prefix at the start of stderr.
local P = "^" .. (exe .. ": "):gsub("%p", "%%%0")

local function q(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local tmp = os.tmpname()
local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end
local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- Runs `culua ARGS` through the shell (ARGS already quoted; ENV a prefix such as "env X=1";
-- STDIN text piped in). Returns stdout, stderr and the exit status.
local function run(args, opts)
  opts = opts or {}
  local err = tmp .. ".err"
  local cmd = ("%s %s %s 2>%s"):format(opts.env or "", q(exe), args, err)
  if opts.stdin then
    cmd = cmd .. " <" .. write_file(tmp .. ".in", opts.stdin)
  elseif not opts.keep_stdin then
    cmd = cmd .. " </dev/null"
  end
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  local errors = read_file(err)
  os.remove(err)
  os.remove(tmp .. ".in")
  return out, errors, code
end

-- Runs the shell command CMD (standard input empty); returns stdout, stderr and the exit status.
local function capture(cmd)
  local err = tmp .. ".err"
  local f = assert(io.popen(("%s 2>%s </dev/null"):format(cmd, err), "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  local errors = read_file(err)
  os.remove(err)
  return out, errors, code
end

-- Runs culua with ARGV0 as its argv[0] (bash's exec -a).
local function run_path(argv0, args)
  return capture("bash -c " .. q(("exec -a %s %s %s"):format(q(argv0), q(exe), args)))
end

local script = tmp .. ".lua"
local function prog(text)
  return write_file(script, text)
end

T.case("'-' runs standard input as a script, with its arguments", function()
  local out, err, code = run("-", { stdin = "" })
  T.eq({ out, err, code }, { "", "", 0 })
  out, err, code = run("-", { stdin = "  print(\n1, a\n)\n" })
  T.eq({ out, err, code }, { "1\tnil\n", "", 0 })
  out = run("- -h --frob", { stdin = "print(arg[1], arg[2], arg[0], ...)" })
  T.eq(out, "-h\t--frob\t-\t-h\t--frob\n")
  -- no script and no terminal: standard input is the script
  out = run("", { stdin = "print(10)\nprint(2)\n" })
  T.eq(out, "10\n2\n")
  -- after "--", "-" names a file
  _, err, code = run("-- -", { stdin = "print(1)" })
  T.eq(code, 1)
  T.truthy(err:find("cannot open -", 1, true), err)
  -- "--" with nothing after it: no script, standard input runs
  out = run("--", { stdin = "print('stdin')" })
  T.eq(out, "stdin\n")
end)

T.case("a UTF-8 byte-order mark starts a file; a broken one is a syntax error", function()
  T.eq({ run(prog("\xEF\xBB\xBF")) }, { "", "", 0 })
  T.eq(run(prog("\xEF\xBB\xBFprint(3)")), "3\n")
  T.eq(run(prog("\xEF\xBB\xBF# comment!!\nprint(3)")), "3\n")
  for _, bad in ipairs({ "\xEF", "\xEF\xBB", "\xEFprint(3)", "\xEF\xBBprint(3)" }) do
    local _, err, code = run(prog(bad))
    T.eq(code, 1)
    T.truthy(err:find("unexpected symbol", 1, true), err)
  end
end)

T.case("a first-line # comment, also before a binary chunk", function()
  T.eq({ run(prog("#comment in 1st line without \\n at the end")) }, { "", "", 0 })
  T.eq(run(prog("#comment\n" .. string.dump(load("print(3)")))), "3\n")
end)

T.case("LUA_PATH, LUA_PATH_5_4, LUA_CPATH, LUA_CPATH_5_4 set package.path and package.cpath", function()
  prog("print(package.path)")
  T.eq(run(script, { env = "env LUA_INIT= LUA_PATH=x" }), "x\n")
  T.eq(run(script, { env = "env LUA_INIT= LUA_PATH_5_4=y LUA_PATH=x" }), "y\n")
  prog("print(package.cpath)")
  T.eq(run(script, { env = "env LUA_INIT= LUA_CPATH=xuxu" }), "xuxu\n")
  T.eq(run(script, { env = "env LUA_INIT= LUA_CPATH_5_4=yacc LUA_CPATH=x" }), "yacc\n")
end)

T.case("-E ignores LUA_INIT and the path variables: the default paths, as with no environment", function()
  prog("print(package.path, package.cpath)")
  local out, err, code = run("-E " .. script,
    { env = "env LUA_INIT='error(10)' LUA_PATH=xxx LUA_CPATH=xxx LUA_PATH_5_4=xxx LUA_CPATH_5_4=xxx" })
  T.eq({ err, code }, { "", 0 })
  local path, cpath = out:match("^(.-)\t(.-)\n$")
  T.truthy(path and not path:find("xxx") and path:find("lua", 1, true), out)
  T.truthy(cpath and not cpath:find("xxx") and cpath:find("lua", 1, true), out)
  -- No environment but the loader's path (a carried build finds its libraries through it).
  local loader = os.getenv("LD_LIBRARY_PATH")
  T.eq(run(script, { env = "env -i" .. (loader and " LD_LIBRARY_PATH=" .. q(loader) or "") }), out)
end)

T.case("';;' in LUA_PATH stands for the default path", function()
  local default = run("-E -e 'print(package.path)'"):sub(1, -2)
  prog("print(package.path)")
  for _, p in ipairs({ ";", ";;", "a;;b", ";;b", "a;;", "a;b;;c" }) do
    local expected = p
    if p:find(";;", 1, true) then
      expected = p:gsub(";;", ";" .. default:gsub("%%", "%%%%") .. ";"):gsub("^;", ""):gsub(";$", "")
    end
    T.eq(run(script, { env = "env LUA_PATH=" .. q(p) }), expected .. "\n", "LUA_PATH=" .. p)
  end
end)

T.case("LUA_INIT runs first and sees arg; LUA_INIT_5_4 wins; @FILE runs a file", function()
  prog("print(X)")
  T.eq(run(script .. " 3.2", { env = "env LUA_INIT='X=tonumber(arg[1])'" }), "3.2\n")
  T.eq(run(script, { env = "env LUA_INIT_5_4='X=10' LUA_INIT='X=3'" }), "10\n")
  prog("x = x or 10; print(x); x = x + 1")
  T.eq(run(script, { env = "env LUA_INIT=@" .. q(script) }), "10\n11\n")
  local out, err, code = run("-e 'print(1)'", { env = "env LUA_INIT=\"error('msg')\"" })
  T.eq({ out, code }, { "", 1 })
  T.truthy(err:find(P .. "LUA_INIT:1: msg"), err)
  _, err, code = run("-e 'print(1)'", { env = "env LUA_INIT_5_4=\"error('msg')\"" })
  T.eq(code, 1)
  T.truthy(err:find(P .. "LUA_INIT_5_4:1: msg"), err)
end)

T.case("-l in every form, in order with -e; modules see arg", function()
  local dir = tmp .. ".d"
  assert(os.execute("mkdir -p " .. q(dir)))
  write_file(dir .. "/m1.lua", "print(1); a = 2; return {x = 15}")
  write_file(dir .. "/m2.lua", "print(a); print(m1.x); assert(arg)")
  local env = "env LUA_PATH=" .. q(dir .. "/?.lua;;")
  T.eq(run("-l m1 -lm2 -lstring -l io -e 'print(type(string), type(io), m2)'", { env = env }),
    "1\n2\n15\ntable\ttable\ttrue\n")
  T.eq(run("-l 'str=string' '-lm=math' -e 'print(m.sin(0))' -e \"print(str.upper'alo alo', m.max(10, 20))\""),
    "0.0\nALO ALO\t20\n")
  os.remove(dir .. "/m1.lua")
  os.remove(dir .. "/m2.lua")
  os.remove(dir)
end)

T.case("arg: the script at 0, its arguments above, the interpreter and options below", function()
  prog(([[
    assert(#arg == 3 and arg[1] == 'a' and arg[2] == 'b' and arg[3] == 'c')
    assert(arg[-1] == '--' and arg[-2] == "-e " and arg[-3] == %q)
    assert(arg[4] == nil and arg[-4] == nil)
    local a, b, c = ...
    assert(... == 'a' and a == 'a' and b == 'b' and c == 'c')
    print("ok")
  ]]):format(exe))
  T.eq({ run("'-e ' -- " .. script .. " a b c") }, { "ok\n", "", 0 })
  -- without a script arg[0] is the interpreter and arg[1..] its options
  T.eq(run("-W -e 'print(#arg, arg[0], arg[1], arg[2], arg[-1])'"), "3\t" .. exe .. "\t-W\t-e\tnil\n")
  -- thirty arguments
  prog("print(({...})[30], select('#', ...))")
  T.eq(run(script .. (" a"):rep(29) .. " z"), "z\t30\n")
end)

T.case("the script's ... is arg as -e left it; a non-table arg is an error", function()
  T.eq(run("-e 'arg[1] = 100' -", { stdin = "print(...)" }), "100\n")
  T.eq(run("-e 'arg[2] = \"x\"' - a", { stdin = "print(...)" }), "a\tx\n")
  local out, err, code = run("-e 'arg = 1' -", { stdin = "print('ran')" })
  T.eq({ out, code }, { "", 1 })
  T.truthy(err:find(P .. "'arg' is not a table"), err)
end)

T.case("-e with the code attached or apart, several in order", function()
  T.eq(run("'-eprint(1)' -ea=3 -e 'print(a)'"), "1\n3\n")
  local _, err, code = run("-e a")
  T.eq(code, 1)
  T.truthy(err:find("syntax error", 1, true), err)
end)

T.case("warnings: off by default, -W turns them on, @on/@off control them", function()
  local out, err = run("", { stdin = "io.stderr:write(1); warn[[XXX]]" })
  T.eq({ out, err }, { "", "1" })
  prog([[
warn("@allow")
warn("@off", "XXX", "@off")
warn("@off")
warn("@on", "YYY", "@on")
warn("@off")
warn("@on")
warn("", "@on")
warn("@on")
warn("Z", "Z", "Z")
]])
  _, err = run("-W " .. script)
  T.eq(err, "Lua warning: @offXXX@off\nLua warning: @on\nLua warning: ZZZ\n")
  -- -W takes effect where it stands among -e and -l
  _, err = run("-e 'warn(\"early\")' -W -e 'warn(\"late\")'")
  T.eq(err, "Lua warning: late\n")
  -- errors in finalizers run at the close become warnings
  prog([[
warn("@allow")
u1 = setmetatable({}, {__gc = function () error("XYZ") end})
u2 = setmetatable({}, {__gc = function () error("ZYX") end})
]])
  local code
  _, err, code = run("-W " .. script)
  T.eq(code, 0)
  T.truthy(err:find("ZYX)\n", 1, true) and err:find("XYZ)\n", 1, true), err)
  -- warn needs strings
  T.eq(run("-e 'print(pcall(warn))' -e 'print(pcall(warn, \"A\", {}))'"):gsub("\n.*", ""),
    "false\tbad argument #1 to 'warn' (string expected, got no value)")
end)

T.case("finalizers at the close run in order; os.exit inside one ends the program", function()
  prog([[
print("creating 1")
setmetatable({}, {__gc = function () print(1) end})
print("creating 2")
setmetatable({}, {__gc = function ()
  print("2")
  print("creating 3")
  setmetatable({}, {__gc = function () print(3) end})
  print(collectgarbage())
  os.exit(0, true)
end})
]])
  T.eq({ run("-W " .. script) }, { "creating 1\ncreating 2\n2\ncreating 3\nnil\n1\n", "", 0 })
end)

-- The interactive loop reading a file: prompts and echoed lines as lua (built with readline)
-- prints them when standard input is no terminal.
local function repl(input, opts)
  opts = opts or {}
  return run((opts.args or "") .. " -i", { stdin = input })
end

T.case("-i on piped input: expressions, =expr, multi-line chunks, empty prompts", function()
  local out, _, code = repl("(6*2-6) -- ===\na =\n10\nprint(a)\na",
    { args = "-e\"_PROMPT='' _PROMPT2=''\"" })
  T.eq(code, 0)
  -- each line echoed after its (empty) prompt, then its result; a newline when input ends
  T.truthy(out:find("\n(6*2-6) -- ===\n6\na =\n10\nprint(a)\n10\na\n10\n\n", 1, true), out)
  out = repl("a = [[b\nc\nd\ne]]\n=a", { args = "-e\"_PROMPT='' _PROMPT2=''\"" })
  T.truthy(out:find("=a\nb\nc\nd\ne\n\n", 1, true), out)
  -- a function broken into many lines
  local s = [=[ --
function f ( x )
  local a = [[
xuxu
]]
  local b = "\
xuxu\n"
  if x == 11 then return 1 + 12 , 2 + 20 end  --[[ test multiple returns ]]
  return x + 1
  --\\
end
return( f( 100 ) )
assert( a == b )
do return f( 11 ) end  ]=]
  out = repl(s:gsub(" ", "\n\n"), { args = "-e\"_PROMPT='' _PROMPT2=''\"" })
  T.truthy(out:find("\n101\n", 1, true) and out:find("\n13\t22\n", 1, true), out)
end)

T.case("-i on piped input prints the prompts: _PROMPT, the default, a __tostring prompt", function()
  local out = repl(" --\na = 2\n", { args = "\"-e_PROMPT='alo'\"" })
  T.truthy(out:find("alo --\naloa = 2\nalo\n", 1, true), out)
  out = repl(" --\na = 2\n")
  T.truthy(out:find(">  --\n> a = 2\n> \n", 1, true), out)
  out = repl(" --\na = 2\n", { args = "-e \"local C = 0; "
    .. "_PROMPT=setmetatable({},{__tostring = function () C = C + 1; return C end})\"" })
  T.truthy(out:find("1 --\n2a = 2\n3\n", 1, true), out)
  -- _PROMPT2 on continuation lines
  out = repl("for i = 1, 2 do\nprint(i)\nend\n", { args = "-e \"_PROMPT2='...'\"" })
  T.truthy(out:find("> for i = 1, 2 do\n...print(i)\n...end\n1\n2\n", 1, true), out)
end)

T.case("-i on piped input: errors keep the session; an error in print is named", function()
  local out, err, code = repl("error('x')\ny = 5\n=y\n")
  T.eq(code, 0)
  T.truthy(err:find(exe .. ": stdin:1: x", 1, true), err)
  T.truthy(out:find("\n5\n", 1, true), out)
  _, err, code = repl("10\n", { args = "-e 'print = nil'" })
  T.eq(code, 0)
  T.truthy(err:find("error calling 'print'", 1, true), err)
  -- an unfinished chunk at the end of input is reported
  _, err, code = repl("x = \n")
  T.eq(code, 0)
  T.truthy(err:find("<eof>", 1, true), err)
end)

T.case("print and the REPL show values through __tostring and __name", function()
  local out = run("-e 'print(setmetatable({}, {__tostring = function() return \"T!\" end}))'"
    .. " -e 'print((tostring(setmetatable({}, {__name = \"MyType\"})):match(\"^MyType: \")))'")
  T.eq(out, "T!\nMyType: \n")
  out = repl("setmetatable({}, {__tostring = function() return 'shown' end})\n")
  T.truthy(out:find("\nshown\n", 1, true), out)
end)

T.case("error objects: __tostring gives the message, other values are named", function()
  prog([[
debug = require "debug"
m = {x=0}
setmetatable(m, {__tostring = function(x)
  return tostring(debug.getinfo(4).currentline + x.x)
end})
error(m)
]])
  local _, err, code = run(script)
  T.eq({ err, code }, { exe .. ": 6\n", 1 })
  _, err, code = run(prog("error{}"))
  T.eq(code, 1)
  T.truthy(err:find(P .. "%(error object is a table value%)"), err)
  _, err = run("-e 'error()'")
  T.truthy(err:find(P .. "%(error object is a nil value%)"), err)
end)

T.case("messages start with the program's name as invoked (argv[0]), as lua's progname", function()
  local dir = tmp .. ".bin"
  -- (the link's target absolute: the test may be given a relative path to culua)
  local target = exe:sub(1, 1) == "/" and exe or (os.getenv("PWD") .. "/" .. exe)
  assert(os.execute("mkdir -p " .. q(dir) .. " && ln -sf " .. q(target) .. " " .. q(dir .. "/mylua")))
  local path = "env PATH=" .. q(dir) .. ":\"$PATH\""
  local function mylua(args)
    return capture(path .. " mylua " .. args)
  end
  -- found on PATH: argv[0] is "mylua"; a script error, a missing script, a bad option
  local out, err, code = mylua("-e 'error(\"boom\")'")
  T.eq({ out, code }, { "", 1 })
  T.truthy(err:find("^mylua: %(command line%):1: boom\nstack traceback:\n"), err)
  _, err, code = mylua(q(tmp .. ".missing.lua"))
  T.eq({ err, code }, { "mylua: cannot open " .. tmp .. ".missing.lua: No such file or directory\n", 1 })
  _, err, code = mylua("-x")
  T.eq(code, 1)
  T.truthy(err:find("^mylua: unrecognized option '%-x'\nusage: mylua %[options%]"), err)
  _, err, code = mylua("--device abc")
  T.eq({ err, code }, { "mylua: --device: expected a device number (0, 1, ...), got 'abc'\n", 1 })
  _, err, code = mylua("-e 'error(setmetatable({}, {__tostring = function() return \"obj\" end}))'")
  T.eq({ err, code }, { "mylua: obj\n", 1 })
  -- run through a path: the path, as typed
  _, err = run_path(dir .. "/mylua", "-e 'error(\"boom\")'")
  T.truthy(err:find("^" .. (dir .. "/mylua: (command line):1: boom"):gsub("%p", "%%%0")), err)
  -- an empty argv[0]: "culua" (lua.c says "lua")
  _, err, code = run_path("", "-e 'error(\"boom\")'")
  T.eq(code, 1)
  T.truthy(err:find("^culua: %(command line%):1: boom\n"), err)
  os.remove(dir .. "/mylua")
  os.remove(dir)
end)

T.case("debug.debug reads commands from standard input", function()
  local _, err = run("-e \"require'debug'.debug()\"", { stdin = "io.stderr:write(1000)\ncont\n" })
  T.eq(err, "lua_debug> 1000lua_debug> ")
end)

T.case("the state is closed at the end: open files are flushed", function()
  local out_file = tmp .. ".out"
  prog(("io.output(%q); io.write('alo')"):format(out_file))
  T.eq({ run(script) }, { "", "", 0 })
  T.eq(read_file(out_file), "alo")
  os.remove(out_file)
end)

T.case("-v prints culua's version and Lua's, then goes on", function()
  local out, _, code = run("-v  -e\"print'hello'\"")
  T.eq(code, 0)
  T.truthy(out:find("^culua %d+%.%d+%.%d+ %(Lua 5%.4"), out)
  T.truthy(out:find("PUC%-Rio\nhello\n$"), out)
  -- -v alone does not enter the REPL or read standard input
  out = run("-v", { stdin = "print('not run')" })
  T.truthy(not out:find("not run", 1, true), out)
end)

T.case("os.exit: statuses, no message, the state closed when asked", function()
  for _, c in ipairs({ { "nil, true", 0 }, { "0, true", 0 }, { "true, true", 0 }, { "1, true", 1 },
    { "false, true", 1 }, { "false", 1 }, { "7", 7 }, { "true", 0 } }) do
    local out, err, code = run(prog("os.exit(" .. c[1] .. ")"))
    T.eq({ out, err, code }, { "", "", c[2] }, "os.exit(" .. c[1] .. ")")
  end
  prog([[
  local x <close> = setmetatable({},
        {__close = function (self, err)
                     assert(err == nil)
                     print("Ok")
                   end})
  local e1 <close> = setmetatable({}, {__close = function () print(120) end})
  os.exit(true, true)
]])
  T.eq({ run(script) }, { "120\nOk\n", "", 0 })
end)

T.case("bad options: named with the usage, exit 1, nothing runs", function()
  for _, c in ipairs({ { "-h", "unrecognized option '-h'" }, { "---", "unrecognized option '---'" },
    { "-Ex", "unrecognized option '-Ex'" }, { "-vv", "unrecognized option '-vv'" },
    { "-iv", "unrecognized option '-iv'" }, { "-Wx", "unrecognized option '-Wx'" },
    { "-e", "'-e' needs argument" }, { "-l", "'-l' needs argument" },
    { "-e -x", "'-e' needs argument" }, { "-l -E", "'-l' needs argument" },
    { "--frob", "unrecognized option '--frob'" }, { "--backend", "'--backend' needs argument" },
    { "--strict=1", "unrecognized option '--strict=1'" } }) do
    -- (culua's own options take any next argument as their value)
    local after = c[1]:find("^%-%-%a") and "" or " -e 'print(\"ran\")'"
    local out, err, code = run(c[1] .. after, { stdin = "print('ran')" })
    T.eq({ out, code }, { "", 1 }, c[1])
    T.truthy(err:find(P .. c[2]:gsub("%p", "%%%0") .. "\nusage: " .. exe:gsub("%p", "%%%0") .. " "),
      c[1] .. ": " .. err)
    T.truthy(err:find("  -W        turn warnings on\n", 1, true), err)
  end
  -- culua's options take their value apart or after '='
  T.eq(run("--backend=host -e 'print(cu.backend)'"), "host\n")
  local _, err, code = run("--backend=gpu -e 'print(1)'")
  T.eq(code, 1)
  T.eq(err, exe .. ": --backend: expected cuda, host or auto, got 'gpu'\n")
  -- --help lists lua's options and culua's own
  local out
  out, _, code = run("--help")
  T.eq(code, 0)
  T.truthy(out:find("^usage: " .. exe:gsub("%p", "%%%0") .. " %[options%] %[script %[args%]%]\n"), out)
  T.truthy(out:find("\n  --backend NAME ", 1, true), out)
end)

-- Starts `culua -e CODE` in the background of a shell; reads its pid (printed before culua
-- starts), then its output, then "status:N" when it ends.
local launcher = write_file(tmp .. ".sh", [[
sh -c 'echo $$; exec "$0" -e "$1"' "$1" "$2" &
wait $!
echo "status:$?"
]])
local function start(code)
  local f = assert(io.popen(("sh %s %s %s"):format(launcher, q(exe), q(code)), "r"))
  return f, f:read("l")
end
local function interrupt(pid)
  return os.execute("kill -INT " .. pid .. " 2>/dev/null")
end

T.case("Ctrl-C raises an error that pcall catches; a second one ends a run stuck in C", function()
  local f, pid = start("pcall(function () print(12); io.stdout:flush(); while true do end end); print(42)")
  T.eq(f:read("l"), "12")
  interrupt(pid)
  T.eq(f:read("l"), "42")
  T.eq(f:read("l"), "status:0")
  f:close()
  -- a long search inside string.find: the hook cannot run there; the second SIGINT kills
  f, pid = start("print(15); io.stdout:flush(); string.find(string.rep('a', 100000), '.*b')")
  T.eq(f:read("l"), "15")
  os.execute("sleep 0.3")
  interrupt(pid)
  os.execute("sleep 0.3")
  interrupt(pid)
  T.eq(f:read("l"), "status:130")
  f:close()
end)

local ok = T.run()
os.remove(script)
os.remove(launcher)
os.remove(tmp)
os.exit(ok)
