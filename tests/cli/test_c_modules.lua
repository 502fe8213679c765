-- C modules in culua: Debian's lua-filesystem, lua-lpeg and lua-cjson (installed by tools/dev:
-- a missing one fails the test), and a probe module of our own (c_module_probe.c) built without
-- any Lua library, all resolving the Lua C API that the culua program exports. Lua errors are C++
-- exceptions in culua's Lua: they must unwind through the modules' C frames and leave the
-- runtime working.
--   culua tests/cli/test_c_modules.lua PATH_TO_CULUA PROBE_DIR
local T = require "cu.testing"

local exe = assert(arg[1], "usage: test_c_modules.lua PATH_TO_CULUA PROBE_DIR")
local probe_dir = assert(arg[2], "usage: test_c_modules.lua PATH_TO_CULUA PROBE_DIR")
table.remove(arg, 1)
table.remove(arg, 1) -- T.run() reads arg[1] as a filter

local function q(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs `ENV culua ARGS`; returns output and errors together, and the exit status.
local function run(env, args)
  local f = assert(io.popen(("%s %s %s 2>&1 </dev/null"):format(env, q(exe), args), "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  return out, code
end

-- The runtime is intact: Lua, and culua's own module.
local function still_working()
  T.eq(select(2, pcall(error, "x", 0)), "x")
  T.eq(cu.arange(5):sum():item(), 10)
  T.eq(select("#", pcall(string.rep)), 2)
end

T.case("lfs lists a folder, reads attributes, makes and removes folders", function()
  local lfs = require "lfs"
  local dir = os.tmpname()
  os.remove(dir)
  assert(lfs.mkdir(dir))
  for _, name in ipairs({ "a.txt", "b.txt", "c.lua" }) do
    local f = assert(io.open(dir .. "/" .. name, "w"))
    f:write(name)
    f:close()
  end
  local names = {}
  for name in lfs.dir(dir) do
    if name ~= "." and name ~= ".." then names[#names + 1] = name end
  end
  table.sort(names)
  T.eq(names, { "a.txt", "b.txt", "c.lua" })
  T.eq(lfs.attributes(dir, "mode"), "directory")
  T.eq(lfs.attributes(dir .. "/c.lua").size, 5)
  for _, name in ipairs(names) do assert(os.remove(dir .. "/" .. name)) end
  assert(lfs.rmdir(dir))
  T.eq(lfs.attributes(dir), nil)
  -- an error raised inside lfs (luaL_error in C) is caught, and the runtime goes on
  local ok, err = pcall(lfs.dir, dir)
  T.eq(ok, false)
  T.truthy(tostring(err):find("cannot open " .. dir, 1, true), err)
  still_working()
end)

T.case("lpeg parses with a grammar; errors inside it and in Lua callbacks unwind", function()
  local lpeg = require "lpeg"
  local P, R, S, V, C, Ct = lpeg.P, lpeg.R, lpeg.S, lpeg.V, lpeg.C, lpeg.Ct
  local space = S(" \t") ^ 0
  local number = C(P("-") ^ -1 * R("09") ^ 1) / tonumber * space
  local function token(p) return p * space end
  local function fold(t)
    local acc = t[1]
    for i = 2, #t, 2 do
      local op, v = t[i], t[i + 1]
      if op == "+" then acc = acc + v elseif op == "-" then acc = acc - v
      elseif op == "*" then acc = acc * v else acc = acc // v end
    end
    return acc
  end
  local expr = P({
    "Exp",
    Exp = Ct(V("Term") * (C(S("+-")) * space * V("Term")) ^ 0) / fold,
    Term = Ct(V("Factor") * (C(S("*/")) * space * V("Factor")) ^ 0) / fold,
    Factor = number + token(P("(")) * V("Exp") * token(P(")")),
  }) * -1
  T.eq(expr:match("2 + 3 * (4 - 1) - 10 / 5"), 9)
  T.eq(expr:match("2 +"), nil)
  local csv = Ct(C((1 - P(",")) ^ 0) * ("," * C((1 - P(",")) ^ 0)) ^ 0)
  T.eq(csv:match("a,b,,d"), { "a", "b", "", "d" })
  -- an error raised by lpeg itself
  local ok, err = pcall(lpeg.P, {})
  T.eq(ok, false)
  T.truthy(tostring(err):find("grammar has no initial rule", 1, true), err)
  -- a Lua error in a match-time capture, raised inside lpeg's C matcher
  for _ = 1, 200 do
    ok, err = pcall(lpeg.match, lpeg.Cmt(P(1), function() error({ code = 7 }) end), "x")
    T.eq(ok, false)
    T.eq(err.code, 7)
  end
  T.eq(expr:match("(1+2)*3"), 9)
  still_working()
end)

T.case("cjson round-trips nested values; its errors are caught", function()
  local cjson = require "cjson"
  local value = { name = "culua", sizes = { 1, 2, 3 }, nested = { ok = true, ratio = 0.5 } }
  local back = cjson.decode(cjson.encode(value))
  T.eq(back.name, "culua")
  T.eq(back.sizes, { 1, 2, 3 })
  T.eq(back.nested.ok, true)
  T.eq(back.nested.ratio, 0.5)
  T.eq(cjson.encode(cjson.decode('[1,"two",{"three":3}]')), '[1,"two",{"three":3}]')
  for _ = 1, 500 do
    local ok, err = pcall(cjson.decode, "{bad json")
    T.eq(ok, false)
    T.truthy(tostring(err):find("Expected object key string", 1, true), err)
  end
  local ok, err = pcall(cjson.encode, { f = print })
  T.eq(ok, false)
  T.truthy(tostring(err):find("Cannot serialise function", 1, true), err)
  -- an array's values, through JSON
  T.eq(cjson.decode(cjson.encode(cu.arange(4):totable())), { 0, 1, 2, 3 })
  still_working()
end)

T.case("a C module built without Lua: calls, errors, protected calls, yields, finalizers", function()
  local saved = package.cpath
  package.cpath = probe_dir .. "/?.so"
  local probe, file = require "culua_probe"
  package.cpath = saved
  T.eq(probe.name, "culua_probe")
  T.eq(file, probe_dir .. "/culua_probe.so")
  T.eq({ probe.swap(1, "b") }, { "b", 1 })
  -- raised in C, with a string and with a table
  T.eq({ pcall(probe.fail, "here") }, { false, "probe failed: here" })
  local object = {}
  T.eq({ pcall(probe.fail, object) }, { false, object })
  T.raises(function() probe.fail() end, "bad argument #1 to 'fail' (string expected, got no value)")
  -- a Lua error unwinding through the C frame, nested C calls included
  T.eq({ pcall(probe.call, probe.call, error, "deep", 0) }, { false, "deep" })
  T.eq({ probe.call(function(a, b) return b, a end, 1, 2) }, { 2, 1 })
  -- a protected call made by C: it catches the error, and the C function returns normally
  T.eq({ probe.protected_call(function() error("inner", 0) end) }, { 2, "inner" }) -- status 2: LUA_ERRRUN
  T.eq({ probe.protected_call(function() return "fine" end) }, { 0, "fine" })
  -- culua's errors (cu.Error) pass through C frames as any error object
  local ok, err = pcall(probe.call, cu.empty, -1)
  T.eq(ok, false)
  T.truthy(tostring(err):find("size -1 in shape {-1} is negative", 1, true), tostring(err))
  -- a coroutine yielding across the C function (lua_callk continuation)
  local co = coroutine.wrap(function(x)
    return probe.call_k(function(y) return coroutine.yield(y + 1) end, x)
  end)
  T.eq(co(10), 11)
  T.eq(co("resumed"), "k:resumed")
  -- finalizers of C userdata run
  local before = probe.finalized()
  for _ = 1, 100 do probe.new_object() end
  collectgarbage()
  collectgarbage()
  T.eq(probe.finalized() - before, 100)
  -- the all-in-one loader: a submodule's luaopen_ in the parent's file
  package.cpath = probe_dir .. "/?.so"
  local sub = require "culua_probe.sub"
  package.cpath = saved
  T.eq(sub.name, "culua_probe.sub")
  T.eq(sub.file, probe_dir .. "/culua_probe.so")
  -- package.loadlib: a named function, a missing symbol, a missing file
  local answer = assert(package.loadlib(probe_dir .. "/culua_probe.so", "culua_probe_answer"))
  T.eq(answer(), 42)
  local f, msg, where = package.loadlib(probe_dir .. "/culua_probe.so", "no_such_function")
  T.eq({ f, type(msg), where }, { nil, "string", "init" })
  f, msg, where = package.loadlib(probe_dir .. "/no_such_library.so", "x")
  T.eq({ f, type(msg), where }, { nil, "string", "open" })
  still_working()
end)

T.case("require of C modules follows LUA_CPATH_5_4, LUA_CPATH and -E", function()
  local lfs_probe = "-e 'print(type(require(\"lfs\").dir))'"
  local out, code = run("env LUA_CPATH_5_4=/nonexistent/?.so", lfs_probe)
  T.eq(code, 1)
  T.truthy(out:find("no file '/nonexistent/lfs.so'", 1, true), out)
  T.truthy(not out:find("/usr/lib", 1, true), "the default path is not searched: " .. out)
  out, code = run("env LUA_CPATH_5_4=/nonexistent/?.so", "-E " .. lfs_probe)
  T.eq({ out, code }, { "function\n", 0 })
  local probe = "-e 'print(require(\"culua_probe\").swap(1, 2))'"
  out, code = run("env LUA_CPATH=" .. q(probe_dir .. "/?.so"), probe)
  T.eq({ out, code }, { "2\t1\n", 0 })
  out, code = run("env LUA_CPATH_5_4=" .. q(probe_dir .. "/?.so") .. " LUA_CPATH=/nonexistent/?.so", probe)
  T.eq({ out, code }, { "2\t1\n", 0 })
  out, code = run("env LUA_CPATH=" .. q(probe_dir .. "/?.so"), "-E " .. probe)
  T.eq(code, 1)
  T.truthy(out:find("module 'culua_probe' not found", 1, true), out)
  -- ";;" adds the default path
  out, code = run("env LUA_CPATH=" .. q(probe_dir .. "/?.so;;"), "-e 'require \"culua_probe\"' " .. lfs_probe)
  T.eq({ out, code }, { "function\n", 0 })
end)

T.case("the program exports the Lua C API, and of culua's own symbols only the engine's", function()
  local f = assert(io.popen("nm -D --defined-only " .. q(exe) .. " 2>&1", "r"))
  local symbols = f:read("a")
  T.truthy(f:close(), "nm -D failed: " .. symbols)
  for _, name in ipairs({ "lua_gettop", "lua_pcallk", "lua_callk", "lua_newuserdatauv", "luaL_error",
    "luaL_checklstring", "luaL_newmetatable", "luaL_setfuncs", "luaopen_base", "luaopen_package" }) do
    T.truthy(symbols:find(" " .. name .. "\n", 1, true), name .. " is exported")
  end
  -- culua's functions are C++ (mangled in the culua namespace: _ZN5culua...). Where the engine is a
  -- library of its own (libculua_engine.so beside the program), the program also exports its copies
  -- of the inline functions the engine exports (the dynamic linker then binds both to one copy):
  -- those, and only those, may appear.
  local engine = exe:gsub("[^/]*$", "") .. "libculua_engine.so"
  local shared = {}
  local e = io.open(engine, "rb")
  if e then
    e:close()
    f = assert(io.popen("nm -D --defined-only " .. q(engine) .. " 2>&1", "r"))
    for name in f:read("a"):gmatch("%S+ %a (%S+)") do shared[name] = true end
    T.truthy(f:close(), "nm -D failed on " .. engine)
  end
  for name in symbols:gmatch("%S+ %a (_ZN5culua%S*)") do
    T.truthy(shared[name], "culua's own symbol " .. name .. " is exported by the program")
  end
end)

os.exit(T.run())
