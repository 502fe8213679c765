-- The error model: one message style (Lua's own) in every binding family, and culua's error
-- object (cu.Error) with err.kind, err.message, err.arg, err.func and err.where, which still
-- behaves as the string it replaces.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- The error fn raises (fn must fail).
local function caught(fn)
  local ok, err = pcall(fn)
  T.truthy(not ok, "the call must fail")
  return err
end

-- fn raises a cu.Error of `kind` whose text contains `text`; returns the error.
local function raises(fn, kind, text)
  local err = caught(fn)
  T.eq(cu.error_kind(err), kind, "kind of: " .. tostring(err))
  local s = tostring(err)
  T.truthy(s:find(text, 1, true), string.format("expected %q in %q", text, s))
  S.check_runtime(text)
  return err
end

T.case("argument errors follow Lua's style in every binding family", function()
  local a = cu.zeros({ 2, 2 })
  local b = cu.zeros({ 2, 2 })
  -- arrays
  raises(function() cu.empty(3, "f33") end, "value", "bad argument #2 to 'empty' (unknown dtype 'f33'")
  raises(function() cu.zeros("x") end, "type", "bad argument #1 to 'zeros' (shape must be")
  raises(function() cu.zeros(3, "f32", {}, 5) end, "value",
    "bad argument #4 to 'zeros' (no value expected, got number)")
  raises(function() cu.zeros(3, "f32", { dtype = "f64" }) end, "value",
    "bad argument #3 to 'zeros' (option 'dtype': the dtype is also given as an argument)")
  raises(function() cu.zeros(3, { dtype = "x" }) end, "value",
    "bad argument #2 to 'zeros' (option 'dtype': unknown dtype 'x'")
  raises(function() cu.zeros(3, { stream = 1 }) end, "type",
    "bad argument #2 to 'zeros' (option 'stream': cu.Stream expected, got number)")
  raises(function() a:narrow(5, 1, 1) end, "index", "bad argument #1 to 'narrow' (dimension 5 is out of range 1..2)")
  raises(function() return a[7] end, "index", "index 7 is out of range 1..2")
  -- streams and events
  local s = cu.stream()
  raises(function() s:wait(5) end, "type", "bad argument #1 to 'wait' (cu.Event or cu.Stream expected, got number)")
  raises(function() cu.stream({ priority = "urgent" }) end, "value", "bad argument #1 to 'stream' (option 'priority': ")
  raises(function() cu.event({ timing = 1 }) end, "type",
    "bad argument #1 to 'event' (option 'timing': boolean expected, got number)")
  -- kernels
  raises(function() cu.compile(5) end, "type", "bad argument #1 to 'compile' (string of CUDA C++ expected, got number)")
  raises(function() cu.compile("", { options = { 5 } }) end, "type",
    "bad argument #2 to 'compile' (option 'options': [1] must be a string, got number)")
  raises(function() cu.compile("", { bogus = 1 }) end, "value",
    "bad argument #2 to 'compile' (unknown option 'bogus'; the options are name, options")
  raises(function() cu.elementwise(5, "z = x") end, "type",
    "bad argument #1 to 'elementwise' (string expected for the signature, got number)")
  raises(function() a:fill("x") end, "type",
    "bad argument #1 to 'fill' (number, boolean or cu.complex expected, got string)")
  raises(function() cu.array({ { 1, 2 }, { 3 } }) end, "value", "bad argument #1 to 'array' (ragged nested table")
  -- bench, sweep, graph, measure, json
  raises(function() cu.bench(3) end, "type", "bad argument #1 to 'bench' (function or cu.Graph expected, got number)")
  raises(function() cu.bench(function() end, { warmup = -1 }) end, "value",
    "bad argument #2 to 'bench' (warmup must be 0 or more, got -1)")
  raises(function() cu.bench(function() end, { name = 5 }) end, "type",
    "bad argument #2 to 'bench' (option 'name': string expected, got number)")
  raises(function() cu.sweep(5) end, "type",
    "bad argument #1 to 'sweep' (table {name=, axes=, run=} expected, got number)")
  raises(function() cu.sweep({ axes = { n = {} }, run = print }) end, "value",
    "bad argument #1 to 'sweep' (axis 'n' has no values)")
  raises(function() cu.sweep({ axes = { n = { 1 } }, run = print, bogus = 1 }) end, "value",
    "bad argument #1 to 'sweep' (unknown option 'bogus'; the options are ")
  raises(function() cu.graph(5) end, "type", "bad argument #1 to 'graph' (function expected, got number)")
  raises(function() cu.time(5) end, "type", "bad argument #1 to 'time' (function expected, got number)")
  raises(function() cu.strict("no") end, "type", "bad argument #1 to 'strict' (function expected, got string)")
  raises(function() cu.json.encode(print) end, "value", "bad argument #1 to 'encode' (cannot encode a function)")
  -- random, linalg, reductions
  raises(function() cu.rand(3, "f32", { dtype = "f64" }) end, "value", "bad argument #3 to 'rand' (option 'dtype': ")
  raises(function() cu.seed(1, 2) end, "value", "bad argument #2 to 'seed' (no value expected, got number)")
  raises(function() cu.matmul(a, b, {}, 4) end, "value", "bad argument #4 to 'matmul' (no value expected, got number)")
  raises(function() cu.matmul(a, b, { alpha = "x" }) end, "type",
    "bad argument #3 to 'matmul' (option 'alpha': number or cu.complex expected, got string)")
  raises(function() cu.sum(a, { axis = 3 }) end, "index",
    "bad argument #2 to 'sum' (option 'axis': axis 3 is out of range")
  raises(function() cu.sum(5) end, "type", "bad argument #1 to 'sum' (cu.Array expected, got number)")
  -- called through pcall, the function is named as luaL_argerror names it
  local ok, direct = pcall(cu.empty, 3, "f33")
  T.truthy(not ok, "cu.empty(3, 'f33') fails")
  T.eq(direct.func, "cu.empty")
  T.truthy(tostring(direct):find("^bad argument #2 to 'cu.empty' %(unknown dtype"), tostring(direct))
end)

T.case("no message names its function twice", function()
  local a = cu.zeros({ 2 })
  local samples = {
    function() cu.bench(3) end,
    function() cu.bench(function() end, { min_samples = 0 }) end,
    function() cu.trace.summary() end,
    function() cu.json.encode({ a = print }) end,
    function() cu.time(5) end,
    function() cu.help(cu.zeros, { bad = true }) end,
    function() a:item() end,
  }
  for i, f in ipairs(samples) do
    local s = tostring(caught(f))
    T.truthy(not s:find("cu%.[%w_.]+: "), "sample " .. i .. " names cu.*: " .. s)
    local name = s:match("^[^:]+:%d+: ([%w_]+): ")
    if name then
      T.truthy(not s:find(name .. ": " .. name, 1, true), "sample " .. i .. " doubles its name: " .. s)
    end
  end
  T.truthy(tostring(caught(function() a:item() end)):find("item: an array of one element expected", 1, true))
end)

T.case("err.kind, err.message, err.arg, err.func, err.where", function()
  local err = caught(function() cu.empty(3, "f33") end)
  T.eq(type(err), "table")
  T.eq(err.kind, "value")
  T.eq(err.arg, 2)
  T.eq(err.func, "empty")
  T.truthy(err.message:find("^bad argument #2 to 'empty' %(unknown dtype 'f33'"), err.message)
  T.truthy(err.where:find("test_errors.lua:%d+$"), err.where)
  T.eq(tostring(err), err.where .. ": " .. err.message)
  T.eq(getmetatable(err).__name, "cu.Error")

  local a = cu.zeros({ 3 })
  a:free()
  local freed = caught(function() return a:sum() end)
  T.eq(freed.kind, "released")
  T.eq(freed.arg, nil)
  T.truthy(freed.message:find("^sum: "), freed.message)
  T.eq(freed.func, "sum")
end)

-- The one message for every object used after its release, as liolib's "attempt to use a closed
-- file". The other tests check only the kind ("released"); the text is checked here.
T.case("a released object of any type: 'attempt to use a released <what>', kind released", function()
  local hint = "free() was called on it or on a view of its memory"
  -- The message without the position and the function's name ("sync: ").
  local function released(fn, what)
    local err = caught(fn)
    T.eq(cu.error_kind(err), "released", "kind of: " .. tostring(err))
    T.eq((err.message:gsub("^[%w_]+: ", "", 1)), "attempt to use a released " .. what)
    return err
  end

  local a = cu.zeros({ 2, 3 })
  local row = a[1]
  a:free()
  local err = released(function() return a:sum() end, "array (" .. hint .. ")")
  T.eq(err.message, "sum: attempt to use a released array (" .. hint .. ")")
  released(function() return row:sum() end, "array (" .. hint .. ")")
  released(function() return cu.array(row) end, "array (the source array; " .. hint .. ")")
  err = caught(function() return cu.sum(cu.ones(3), { out = row }) end)
  T.eq(err.kind, "released")
  T.eq(err.message, "bad argument #2 to 'sum' (option 'out': attempt to use a released array (" .. hint .. "))")

  local s = cu.stream()
  getmetatable(s).__close(s)
  released(function() s:sync() end, "stream")

  local e = cu.event()
  getmetatable(e).__close(e)
  released(function() e:sync() end, "event")

  local x = cu.ones(3)
  local g = cu.graph(function() cu.add(x, 1, { out = x }) end)
  g:free()
  released(function() g:launch() end, "graph")

  local p = cu.profile(function() local _ = x + 1 end)
  getmetatable(p).__gc(p)
  released(function() return p.rows end, "profile")

  local ew = cu.elementwise("f32 x -> f32 y", "y = x + 1")
  getmetatable(ew).__gc(ew)
  released(function() return ew.name end, "kernel template")

  if cu.backend == "cuda" then
    local m = cu.compile([[extern "C" __global__ void k(float* x) { x[0] = 1.0f; }]])
    local k = m.k
    getmetatable(k).__gc(k)
    released(function() k({ grid = 1, block = 1 }, x) end, "kernel")
    getmetatable(m).__gc(m)
    released(function() return m.k end, "module")
  end
  S.check_runtime("after the released objects")
end)

T.case("a cu.Error behaves as its text", function()
  local err = caught(function() cu.zeros(3, "nope") end)
  local text = tostring(err)
  T.truthy(text:find("^.-test_errors%.lua:%d+: bad argument #2 to 'zeros'"), text)
  T.eq("<" .. err, "<" .. text)
  T.eq(err .. ">", text .. ">")
  T.eq(#err, #text)
  T.eq(string.format("%s", err), text)
  T.eq(err:find("nope", 1, true), text:find("nope", 1, true))
  T.eq(err:match("'(%w+)'"), "zeros")
  T.eq(err:upper(), text:upper())
  T.eq(err:sub(1, 5), text:sub(1, 5))
  T.eq(select("#", err:gsub("bad", "good")), 2)
  T.eq(err.nosuchmethod, nil)
end)

T.case("errors re-raised keep their kind", function()
  local first = caught(function() cu.empty(3, "f33") end)
  local again = caught(function() error(first, 0) end)
  T.truthy(rawequal(first, again), "error(err, 0) raises the same object")
  T.eq(cu.error_kind(again), "value")
  local leveled = caught(function() error(first, 2) end)
  T.eq(tostring(leveled), tostring(first), "a level adds no second position to an error object")
  -- across coroutines
  local co = coroutine.create(function() cu.zeros({ 2 })[5] = 1 end)
  local ok, err = coroutine.resume(co)
  T.truthy(not ok)
  T.eq(cu.error_kind(err), "index")
  local wrapped = caught(coroutine.wrap(function() cu.empty(-1) end))
  T.eq(cu.error_kind(wrapped), "value")
  -- xpcall with a handler that sees the object
  local seen
  xpcall(function() cu.time(5) end, function(e) seen = cu.error_kind(e) end)
  T.eq(seen, "type")
end)

T.case("cu.error_kind is nil for other errors", function()
  T.eq(cu.error_kind("a string"), nil)
  T.eq(cu.error_kind(nil), nil)
  T.eq(cu.error_kind({ kind = "value" }), nil)
  local plain = caught(function() error("mine") end)
  T.eq(type(plain), "string")
  T.eq(cu.error_kind(plain), nil)
  local lua_arg = caught(function() string.rep() end)
  T.eq(type(lua_arg), "string")
  T.eq(cu.error_kind(lua_arg), nil)
end)

T.case("a failed sweep point records the error as a string", function()
  local res = cu.sweep({
    name = "errors",
    axes = { n = { 1, 2 } },
    run = function(p)
      if p.n == 2 then cu.empty(3, "f33") end
      return 1.0
    end,
    quiet = true,
  })
  local failed
  for _, row in ipairs(res.rows) do
    if row.status == "failed" then failed = row end
  end
  T.truthy(failed, "one point failed")
  T.eq(type(failed.error), "string")
  T.truthy(failed.error:find("bad argument #2 to 'empty' (unknown dtype 'f33'", 1, true), failed.error)
end)

os.exit(T.run())
