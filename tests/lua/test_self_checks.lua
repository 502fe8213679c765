-- Every metamethod and method of every culua type checks its `self`: called with a value of
-- another type (a number, nil, a string, a table, io.stdout, another culua object), it raises a
-- clear error naming the type it expected; it never crashes and never releases an object of
-- another type. The types are found in the registry (every "cu.*" metatable), so a type added
-- later is covered without changing this test; the userdata the registry itself holds (the
-- module's context, the sweep session) are covered too.
local T = require "cu.testing"

local registry = debug.getregistry()

-- Objects of every type this backend makes; they must keep working after every refused call.
local a = cu.ones(3)
local stream = cu.stream()
local event = cu.event()
event:record(stream)
event:sync()
local z = cu.complex(1, 2)
local scope = cu.use_stream(cu.current_stream()) -- the current stream stays as it was
local g = cu.graph(function() cu.add(a, 0, { out = a }) end)
local bench = cu.bench(function() end, { warmup = 0, min_samples = 1, min_time = 0, max_time = 0.05, hot = false })
local ledger = cu.ledger()
local sweep = cu.sweep { quiet = true, axes = { n = { 1, 2 } }, run = function(p) return { v = p.n } end }
local ew = cu.elementwise("f32 x -> f32 y", "y = x + 1")
local red = cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0 })
local profile = cu.profile(function() local _ = a + 1 end)
local objects = { a, stream, event, z, scope, g, bench, ledger, sweep, ew, red, profile }
local module, kernel, configured
if cu.backend == "cuda" then
  module = cu.compile([[extern "C" __global__ void add1(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
  }]])
  kernel = module.add1
  configured = kernel:configure({ grid = 1, block = 32 })
  objects[#objects + 1] = module
  objects[#objects + 1] = kernel
  objects[#objects + 1] = configured
end

local FOREIGN = { 5, 2.5, true, "x", {}, print, coroutine.create(function() end), io.stdout }
for _, o in ipairs(objects) do FOREIGN[#FOREIGN + 1] = o end

-- Functions that are also functions of the cu module (a:add(b) is cu.add(a, b)) follow that
-- function's own contract (cu.add(2, 3) is fine): for them only "no crash" is checked.
local MODULE_FUNCTIONS = {}
local function collect_module(t, depth)
  for _, v in pairs(t) do
    if type(v) == "function" then
      MODULE_FUNCTIONS[v] = true
    elseif type(v) == "table" and depth < 2 then
      collect_module(v, depth + 1)
    end
  end
end
collect_module(cu, 0)

-- The registered culua types: name -> metatable.
local function culua_types()
  local types = {}
  for k, v in pairs(registry) do
    if type(k) == "string" and k:match("^cu%.") and type(v) == "table" and rawget(v, "__name") == k then
      types[k] = v
    end
  end
  return types
end

-- The functions of a metatable: its own, and the methods its __index reaches (a table, or the
-- methods table that an __index function keeps as its first upvalue).
local function functions_of(mt)
  local fns = {}
  for k, v in pairs(mt) do
    if type(v) == "function" then fns[#fns + 1] = { name = tostring(k), fn = v } end
  end
  local index = rawget(mt, "__index")
  local methods = type(index) == "table" and index or nil
  if type(index) == "function" then
    local _, up = debug.getupvalue(index, 1)
    if type(up) == "table" then methods = up end
  end
  for k, v in pairs(methods or {}) do
    if type(v) == "function" then fns[#fns + 1] = { name = "method " .. tostring(k), fn = v } end
  end
  table.sort(fns, function(x, y) return x.name < y.name end)
  return fns
end

-- Everything still works: the runtime, and every object (none was released by a refused call).
local function check_alive(what)
  T.eq(cu.ones(3):sum():item(), 3, what .. ": the runtime works")
  T.eq(a:sum():item(), 3, what .. ": the array")
  stream:sync()
  T.eq(cu.ones(4, { stream = stream }):sum({ stream = stream }):item(), 4, what .. ": the stream")
  event:record(stream)
  event:sync()
  T.eq(z.re + z.im, 3, what .. ": the complex value")
  g:launch()
  T.eq(a[1], 1, what .. ": the graph")
  T.truthy(bench:json():find('"samples"', 1, true), what .. ": the bench result")
  T.truthy(tostring(ledger - ledger):find("host->device", 1, true), what .. ": the ledger")
  T.truthy(sweep:csv():find("n", 1, true), what .. ": the sweep results")
  T.eq(ew.specializations, 0, what .. ": the elementwise template")
  T.eq(type(red.name), "string", what .. ": the reduction template")
  for _, o in ipairs(objects) do T.eq(type(tostring(o)), "string", what) end
  if kernel then
    local x = cu.zeros(32)
    configured(x, 32)
    kernel({ grid = 1, block = 32 }, x, 32)
    T.eq(x:sum():item(), 64, what .. ": the kernels")
  end
end

-- Calls fn with foreign values in several shapes (self alone, a binary operator's two operands,
-- __index/__newindex's key and value); each must raise, naming `expected` when given.
local function refuses(label, fn, foreign, expected)
  for _, args in ipairs({ { foreign }, { foreign, foreign }, { foreign, "name", 1 } }) do
    local ok, err = pcall(fn, table.unpack(args, 1, 3))
    if expected then
      T.truthy(not ok, string.format("%s(%s) raises", label, tostring(foreign)))
      T.truthy(err ~= nil and tostring(err):find(expected, 1, true),
        string.format("%s(%s): the error names %s: %s", label, tostring(foreign), expected, tostring(err)))
    end
  end
end

T.case("the registry holds every culua type", function()
  local types = culua_types()
  local expected = { "cu.Array", "cu.Stream", "cu.Event", "cu.Complex", "cu.StreamScope", "cu.Graph",
    "cu.BenchResult", "cu.Ledger", "cu.SweepResults", "cu.ElementwiseKernel",
    "cu.ReductionKernel", "cu.Module", "cu.Kernel", "cu.ConfiguredKernel", "cu.Error", "cu.Profile" }
  for _, name in ipairs(expected) do T.truthy(types[name], name .. " is registered") end
  for _, o in ipairs(objects) do
    local mt = getmetatable(o)
    T.truthy(type(mt) == "table" and types[rawget(mt, "__name")] == mt, tostring(o) .. " has a registered type")
  end
end)

T.case("the examples of the issue", function()
  local mt = getmetatable(cu.ones(3))
  T.raises(function() mt.__gc(5) end, "bad argument #1 to '__gc' (cu.Array expected, got number)")
  T.raises(function() mt.__gc(io.stdout) end, "bad argument #1 to '__gc' (cu.Array expected, got FILE*)")
  T.raises(function() mt.__gc(stream) end, "bad argument #1 to '__gc' (cu.Array expected, got cu.Stream)")
  T.raises(function() mt.__close(stream) end, "(cu.Array expected, got cu.Stream)")
  T.raises(function() getmetatable(scope).__gc(5) end, "(cu.StreamScope expected, got number)")
  T.raises(function() getmetatable(scope).__close(a) end, "(cu.StreamScope expected, got cu.Array)")
  T.raises(function() getmetatable(ew).__gc(red) end, "(cu.ElementwiseKernel expected, got cu.ReductionKernel)")
  T.raises(function() getmetatable(red).__call(ew, a) end, "(cu.ReductionKernel expected, got cu.ElementwiseKernel)")
  T.raises(function() getmetatable(stream).__gc(a) end, "(cu.Stream expected, got cu.Array)")
  T.raises(function() getmetatable(a).__index(stream, "free") end, "(cu.Array expected, got cu.Stream)")
  T.raises(function() getmetatable(a).__add(2, 3) end, "(cu.Array expected, got number)")
  T.raises(function() getmetatable(z).__add(2, 3) end, "(cu.Complex expected, got number)")
  T.raises(function() getmetatable(z).__eq(2, 3) end, "(cu.Complex expected, got number)")
  T.raises(function() getmetatable(z).__tostring(7) end, "(cu.Complex expected, got number)")
  -- Methods that __index makes rather than keeps in a table.
  T.raises(function() z.abs(5) end, "(cu.Complex expected, got number)")
  T.raises(function() z.conj(a) end, "(cu.Complex expected, got cu.Array)")
  T.eq(z:conj().im, -2)
  T.raises(function() getmetatable(bench).__tostring({}) end, "(cu.BenchResult expected, got table)")
  T.raises(function() bench.json(sweep) end, "(cu.BenchResult expected, got cu.SweepResults)")
  T.raises(function() getmetatable(ledger).__sub(ledger, {}) end,
    "bad argument #2 to '__sub' (cu.Ledger expected, got table)")
  -- The stream was not released: it still runs work.
  T.eq(cu.ones(5, { stream = stream }):sum({ stream = stream }):item(), 5)
  -- The operators keep their meaning.
  T.eq((2 * a):sum():item(), 6)
  T.eq((z + a):sum():item().re, 6)
  T.eq((z + 1).re, 2)
  T.eq(z == cu.complex(1, 2), true)
  T.eq(z == io.stdout, false)
  T.eq((event - event), 0)
  check_alive("after the examples")
end)

T.case("every function of every culua type refuses foreign values", function()
  local count = 0
  for name, mt in pairs(culua_types()) do
    for _, f in ipairs(functions_of(mt)) do
      local label = name .. " " .. f.name
      for _, v in ipairs(FOREIGN) do
        if getmetatable(v) ~= mt then
          refuses(label, f.fn, v, not MODULE_FUNCTIONS[f.fn] and name or nil)
          count = count + 1
        end
      end
      -- No argument at all.
      local ok = pcall(f.fn)
      if not MODULE_FUNCTIONS[f.fn] then T.truthy(not ok, label .. "() raises") end
    end
    check_alive("after " .. name)
  end
  T.truthy(count > 500, "calls made: " .. count)
end)

T.case("the userdata the registry holds refuse foreign values", function()
  local seen = 0
  for _, v in pairs(registry) do
    local mt = type(v) == "userdata" and getmetatable(v)
    if type(mt) == "table" then
      for _, f in ipairs(functions_of(mt)) do
        for _, foreign in ipairs(FOREIGN) do
          if getmetatable(foreign) ~= mt then
            T.truthy(not pcall(f.fn, foreign), tostring(v) .. " " .. f.name .. " raises")
          end
        end
        seen = seen + 1
      end
    end
  end
  T.truthy(seen >= 2, "the context's and the sweep session's finalizers: " .. seen)
  check_alive("after the registry's userdata")
end)

T.case("unknown fields raise naming the field and the type", function()
  T.raises(function() return a.nope end, "cu.Array has no field or method 'nope'")
  T.raises(function() return stream.nope end, "cu.Stream has no field or method 'nope'")
  T.raises(function() return event.nope end, "cu.Event has no field or method 'nope'")
  T.raises(function() return g.nope end, "cu.Graph has no field or method 'nope'")
  T.raises(function() return z.nope end, "cu.complex has no field 'nope'")
  T.raises(function() return ew.nope end, "cu.ElementwiseKernel has no field 'nope'")
  T.raises(function() return red.nope end, "cu.ReductionKernel has no field 'nope'")
  T.raises(function() return bench.gpu_median end, "cu.BenchResult has no field or method 'gpu_median'")
  -- The fields a bench result may lack read as nil; the others as they are.
  T.eq(bench.graph, nil)
  T.eq(bench.hot, nil)
  T.eq(bench.samples, 1)
  T.eq(type(bench.json), "function")
  T.eq(ew.specializations, 0)
  T.eq(red.signature, "f32 x -> f32 y")
  local fresh = cu.ledger()
  T.raises(function() return fresh.nope end, "cu.Ledger has no field 'nope' (it has h2d_bytes,")
  T.eq(math.type(fresh.launches), "integer")
  T.eq(math.type((fresh - fresh).syncs), "integer")
  local res = cu.sweep({ name = "self", axes = { n = { 1, 2 } }, run = function(p) return { v = p.n } end,
    quiet = true })
  T.raises(function() return res.nope end, "cu.SweepResults has no field or method 'nope'")
  T.eq(res.interrupted, false)
  T.eq(#res.rows, 2)
  T.eq(type(res.json), "function")
  T.eq(res.name, "self")
  check_alive("after unknown fields")
end)

os.exit(T.run())
