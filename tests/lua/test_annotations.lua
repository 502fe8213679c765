-- The LuaLS annotation file lua/meta/cu.lua covers the whole live API and names nothing that does
-- not exist: every function of cu (and cu.host, cu.trace, cu.json, cu.testing), every method,
-- field and operator of the types, every option table (against the options the functions accept)
-- and every type it mentions. Run from the repository root (ctest does).
local T = require "cu.testing"
local H = require "cu.help"

local PATH = "lua/meta/cu.lua"

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

local text = read_file(PATH)
local db = H.parse(text)

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- Collects problems and fails once with all of them.
local function checker()
  local problems = {}
  return function(ok, fmt, ...)
    if not ok then problems[#problems + 1] = string.format(fmt, ...) end
  end, function(what)
    if #problems > 0 then
      error(string.format("%s:\n  %s", what, table.concat(problems, "\n  ")), 2)
    end
  end
end

local function class(name)
  return T.truthy(db.classes[name], "the annotations have no ---@class " .. name)
end

local function field_name(f)
  return (f.name:gsub("%?$", ""))
end

local function optional(f)
  return f.name:sub(-1) == "?"
end

-- The names of a class's fields (without [integer] entries), methods and operators.
local function fields_of(c)
  local out = {}
  for _, f in ipairs(c.fields) do
    if not f.name:match("^%[") then out[field_name(f)] = f end
  end
  return out
end

local function methods_of(c)
  local out = {}
  for _, m in ipairs(c.methods) do out[m.method or m.name:match("([%w_]+)$")] = m end
  return out
end

-- Does a Lua value match an annotated type? Only the plain cases are judged; others pass.
local function type_matches(value, t)
  t = t:gsub("%?$", "")
  local lua_type = type(value)
  for part in t:gmatch("[^|]+") do
    if part == "integer" then
      if math.type(value) == "integer" then return true end
    elseif part == "number" or part == "string" or part == "boolean" or part == "table" then
      if lua_type == part then return true end
    elseif part == "lightuserdata" then
      if lua_type == "userdata" and getmetatable(value) == nil then return true end
    elseif part:match("%[%]$") or part:match("^{") or part:match("^cu%.") or part:match('^"') then
      if part:match('^"') then
        if value == part:sub(2, -2) then return true end
      elseif lua_type == "table" or lua_type == "userdata" or lua_type == "string" then
        return true
      end
    else
      return true
    end
  end
  return false
end

-- A table value against its class: every key annotated (with a matching type), every required
-- field present. `exact` = false skips the first direction (tables with run-defined keys).
local function check_record(value, class_name, exact)
  local check, done = checker()
  local c = class(class_name)
  local fields = fields_of(c)
  if exact ~= false then
    for _, k in ipairs(sorted_keys(value)) do
      local f = fields[k]
      check(f ~= nil, "%s has a field '%s' that is not annotated", class_name, tostring(k))
      if f then
        check(type_matches(value[k], f.type), "%s.%s is a %s, annotated as %s", class_name, k,
          type(value[k]), f.type)
      end
    end
  end
  for name, f in pairs(fields) do
    check(optional(f) or value[name] ~= nil, "%s.%s is annotated but absent", class_name, name)
  end
  done("fields of " .. class_name)
end

-- A userdata (or a table with methods) against its class: every annotated field readable with a
-- matching type, every annotated method a function, and the live methods all annotated.
local function check_object(obj, class_name, live_methods)
  local check, done = checker()
  local c = class(class_name)
  for name, f in pairs(fields_of(c)) do
    local ok, v = pcall(function() return obj[name] end)
    check(ok, "%s.%s is annotated but reading it raises: %s", class_name, name, tostring(v))
    if ok then
      check(v ~= nil or optional(f), "%s.%s is annotated but nil", class_name, name)
      check(v == nil or type_matches(v, f.type), "%s.%s is a %s, annotated as %s", class_name,
        name, type(v), f.type)
    end
  end
  local annotated = methods_of(c)
  for name in pairs(annotated) do
    local ok, v = pcall(function() return obj[name] end)
    check(ok and type(v) == "function", "%s:%s is annotated but is not a method", class_name, name)
  end
  for _, name in ipairs(sorted_keys(live_methods or {})) do
    check(annotated[name] ~= nil, "%s:%s exists but is not annotated", class_name, name)
  end
  done("methods and fields of " .. class_name)
end

-- The metamethods named by ---@operator lines against the registry's metatable.
local OPERATOR_EVENTS = { "add", "sub", "mul", "div", "idiv", "mod", "pow", "unm", "len", "concat",
  "band", "bor", "bxor", "shl", "shr", "bnot" }
local function check_operators(class_name)
  local check, done = checker()
  local c = class(class_name)
  local mt = debug.getregistry()[class_name]
  T.truthy(type(mt) == "table", "a metatable " .. class_name)
  local annotated = {}
  for _, o in ipairs(c.operators) do annotated[o:match("^(%w+)")] = true end
  for _, event in ipairs(OPERATOR_EVENTS) do
    local live = rawget(mt, "__" .. event) ~= nil
    check(live == (annotated[event] == true), "%s: __%s is %s but %s", class_name, event,
      live and "defined" or "not defined", annotated[event] and "annotated" or "not annotated")
  end
  local callable = rawget(mt, "__call") ~= nil
  check(callable == (#c.overloads > 0), "%s: __call is %s but the class has %s ---@overload",
    class_name, callable and "defined" or "not defined", #c.overloads > 0 and "an" or "no")
  done("operators of " .. class_name)
end

-- ---------------------------------------------------------------------------------------------

T.case("the file is a LuaLS meta file that compiles and is not embedded as a module", function()
  T.eq(text:match("^[^\n]*"), "---@meta cu")
  local chunk, err = load(text, "@" .. PATH, "t", {})
  T.truthy(chunk, "compiles: " .. tostring(err))
  T.eq(package.preload["meta.cu"], nil)
  T.eq(package.preload["cu.meta.cu"], nil)
end)

T.case("every stub is documented, and every parameter is a parameter of its stub", function()
  local check, done = checker()
  local stubs = 0
  for _ in text:gmatch("\nfunction ") do stubs = stubs + 1 end
  local functions = 0
  for _, e in ipairs(db.entries) do
    if e.kind == "function" then
      functions = functions + 1
      check(#e.desc > 0, "%s has no description", e.name)
      local args = {}
      for a in e.args:gmatch("[^,%s]+") do args[#args + 1] = a end
      local params = {}
      for _, p in ipairs(e.params) do params[#params + 1] = (p.name:gsub("%?$", "")) end
      check(table.concat(args, ",") == table.concat(params, ","),
        "%s: the stub's arguments (%s) differ from its ---@param lines (%s)", e.name,
        table.concat(args, ", "), table.concat(params, ", "))
    elseif e.kind == "class" and e.var then
      check(#e.desc > 0, "%s has no description", e.name)
    end
  end
  check(stubs == functions, "%d stubs, %d documented functions", stubs, functions)
  done("annotations")
end)

T.case("every type the annotations mention is defined", function()
  local check, done = checker()
  local function types_in(t, where)
    for name in t:gmatch("cu%.[%w_%.]+") do
      name = name:gsub("%.$", "")
      check(db.classes[name] or (db.by_name[name] and db.by_name[name].kind == "alias"),
        "%s mentions %s, which is not defined", where, name)
    end
  end
  for _, e in ipairs(db.entries) do
    for _, p in ipairs(e.params or {}) do types_in(p.type, e.name) end
    for _, r in ipairs(e.returns or {}) do types_in(r.type, e.name) end
    for _, f in ipairs(e.fields or {}) do types_in(f.type, e.name .. "." .. f.name) end
    for _, o in ipairs(e.operators or {}) do types_in(o, e.name) end
    for _, o in ipairs(e.overloads or {}) do types_in(o, e.name) end
    if e.type then types_in(e.type, e.name) end
  end
  done("types")
end)

T.case("every function of cu, cu.host, cu.trace and cu.json is annotated, and nothing else", function()
  local check, done = checker()
  local cu_fields = fields_of(class("cu"))
  for _, k in ipairs(sorted_keys(cu)) do
    local v = cu[k]
    if type(v) == "function" then
      local e = db.by_name["cu." .. k]
      check(e and e.kind == "function", "cu.%s is not annotated", k)
    else
      check(cu_fields[k] ~= nil, "cu.%s (a %s) is not a ---@field of cu", k, type(v))
    end
  end
  for name, f in pairs(cu_fields) do
    local v = cu[name]
    check(v ~= nil, "cu.%s is annotated but does not exist", name)
    check(v == nil or type_matches(v, f.type), "cu.%s is a %s, annotated as %s", name, type(v),
      f.type)
  end
  for _, sub in ipairs({ "host", "trace", "json", "mpi", "fft" }) do
    local c = class("cu." .. sub)
    local annotated = methods_of(c)
    local fields = fields_of(c)
    for _, k in ipairs(sorted_keys(cu[sub])) do
      local v = cu[sub][k]
      if type(v) == "function" then
        check(annotated[k], "cu.%s.%s is not annotated", sub, k)
      else
        check(fields[k] and type_matches(v, fields[k].type),
          "cu.%s.%s (a %s) is not a ---@field of cu.%s", sub, k, type(v), sub)
      end
    end
    for name in pairs(fields) do
      -- cu.mpi's fields raise on a build without MPI (and exist there)
      if sub ~= "mpi" or cu.mpi.available() then
        check(cu[sub][name] ~= nil, "cu.%s.%s is annotated but does not exist", sub, name)
      end
    end
    for name in pairs(annotated) do
      check(type(cu[sub][name]) == "function", "cu.%s.%s is annotated but does not exist", sub,
        name)
    end
  end
  -- Every annotated function outside the types exists.
  for _, e in ipairs(db.entries) do
    if e.kind == "function" and not e.owner then
      local v = _G
      for part in e.name:gmatch("[^%.]+") do v = type(v) == "table" and v[part] or nil end
      check(type(v) == "function", "%s is annotated but does not exist", e.name)
    end
  end
  check(rawequal(help, cu.help), "the global help is cu.help")
  done("cu")
end)

T.case("every registered type is annotated", function()
  local check, done = checker()
  for _, k in ipairs(sorted_keys(debug.getregistry())) do
    local v = debug.getregistry()[k]
    if type(k) == "string" and k:match("^cu%.") and type(v) == "table" and
        rawget(v, "__name") == k then
      check(db.classes[k] ~= nil, "the type %s has no ---@class", k)
    end
  end
  done("types")
end)

T.case("cu.Array: methods, fields and operators", function()
  local a = cu.array({ { 1, 2, 3 }, { 4, 5, 6 } })
  check_object(a, "cu.Array", H.methods_of("cu.Array"))
  check_object(cu.host.zeros({ 3, 2 }), "cu.Array", H.methods_of("cu.Array")) -- a.mT needs 2-D
  check_operators("cu.Array")
  -- Methods that are also cu functions carry the same name there.
  local check, done = checker()
  for name, f in pairs(H.methods_of("cu.Array")) do
    if cu[name] ~= nil then
      check(rawequal(cu[name], f), "a:%s and cu.%s differ", name, name)
    end
  end
  done("cu.Array")
end)

T.case("cu.Stream, cu.Event, cu.StreamScope", function()
  local s = cu.stream()
  check_object(s, "cu.Stream", H.methods_of("cu.Stream"))
  check_operators("cu.Stream")
  local e = cu.event()
  e:record(s)
  check_object(e, "cu.Event", H.methods_of("cu.Event"))
  check_operators("cu.Event")
  local scope <close> = cu.use_stream(cu.current_stream())
  T.eq(getmetatable(scope).__name, "cu.StreamScope")
  class("cu.StreamScope")
end)

T.case("cu.Graph", function()
  local a = cu.ones(4)
  local g = cu.graph(function() cu.add(a, 1, { out = a }) end)
  check_object(g, "cu.Graph", H.methods_of("cu.Graph"))
  check_operators("cu.Graph")
  check_record(g.ledger, "cu.Ledger")
  g:free()
end)

T.case("cu.Complex", function()
  local z = cu.complex(1, 2)
  check_object(z, "cu.Complex", { abs = z.abs, conj = z.conj })
  check_operators("cu.Complex")
end)

T.case("records: devices, ledger, trace summary", function()
  check_record(cu.devices()[1], "cu.DeviceInfo")
  local l = cu.ledger()
  check_record(l, "cu.Ledger")
  check_operators("cu.Ledger")
  check_record(cu.ledger(function() end), "cu.Ledger")
  cu.trace.start()
  cu.zeros(16)
  local summary = cu.trace.stop()
  check_record(summary, "cu.TraceSummary")
  T.truthy(#summary.streams >= 1, "a stream in the trace")
  check_record(summary.streams[1], "cu.TraceStream")
end)

T.case("cu.bench result", function()
  local res = cu.bench(function() cu.zeros(16) end,
    { min_samples = 2, min_time = 0.001, max_time = 0.05, warmup = 1, bytes = 64, flops = 16 })
  check_record(res, "cu.BenchResult")
  check_object(res, "cu.BenchResult", H.methods_of("cu.BenchResult"))
  check_record(res.gpu, "cu.BenchStats")
  check_record(res.cpu, "cu.BenchStats")
  check_record(res.hot, "cu.BenchHot")
  check_record(res.hot.gpu, "cu.BenchStats")
  check_record(res.options, "cu.BenchSettings")
end)

T.case("cu.sweep results", function()
  local r = cu.sweep { name = "annotations", axes = { { "n", { 1, 2 } } }, quiet = true,
    run = function(p) return p.n end }
  check_record(r, "cu.SweepResults")
  check_object(r, "cu.SweepResults", H.methods_of("cu.SweepResults"))
end)

T.case("cu.tune results and rows", function()
  local _, tbl = cu.tune { kernel = function(p) return function() return p.n end end, space = { n = { 1, 2 } },
    check = function(_, p) return p.n == 2, "not 2" end, quiet = true,
    bench = { min_samples = 2, min_time = 0.001, max_time = 0.2, hot = false } }
  check_record(tbl, "cu.TuneResults")
  check_object(tbl, "cu.TuneResults", { markdown = true, list = true, json = true, plot = true })
  check_record(tbl.rows[1], "cu.TuneRow", false)
  check_record(tbl.rows[2], "cu.TuneRow", false)
end)

T.case("cu.elementwise and cu.reduction objects", function()
  local ew = cu.elementwise("f32 x -> f32 y", "y = x")
  check_object(ew, "cu.ElementwiseKernel")
  check_record(ew.info, "cu.TemplateInfo")
  check_operators("cu.ElementwiseKernel")
  local r = cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0 })
  check_object(r, "cu.ReductionKernel")
  check_record(r.info, "cu.TemplateInfo")
  check_operators("cu.ReductionKernel")
end)

T.case("cu.compile modules and kernels", function()
  check_operators("cu.Module")
  check_operators("cu.Kernel")
  check_operators("cu.ConfiguredKernel")
  if cu.backend ~= "cuda" then T.skip("run-time kernels need the CUDA backend") end
  local m = cu.compile([[
extern "C" __global__ void fill(float* x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}]], { name = "annotations.cu" })
  check_object(m, "cu.Module")
  check_record(m.info, "cu.ModuleInfo")
  local k = m.fill
  check_object(k, "cu.Kernel")
  check_record(k.attributes, "cu.KernelAttributes")
  check_record(k.params[1], "cu.KernelParam")
  check_record(k:occupancy(128), "cu.Occupancy")
  local kc = k:configure({ grid = 1, block = 32 })
  T.eq(getmetatable(kc).__name, "cu.ConfiguredKernel")
  -- The launch configuration's keys are the fields of cu.LaunchConfig.
  local ok, err = pcall(k, { grid = 1, block = 32, zz_bogus = 1 }, cu.zeros(32), 1, 32)
  T.eq(ok, false)
  local live = {}
  for key in tostring(err):match("the options are ([^)]*)"):gmatch("[^,%s]+") do
    live[#live + 1] = key
  end
  local annotated = {}
  for key in pairs(fields_of(class("cu.LaunchConfig"))) do annotated[#annotated + 1] = key end
  table.sort(live)
  table.sort(annotated)
  T.eq(annotated, live, "cu.LaunchConfig")
end)

T.case("cu.testing", function()
  local check, done = checker()
  local annotated = methods_of(class("cu.testing"))
  for _, k in ipairs(sorted_keys(T)) do
    check(type(T[k]) ~= "function" or annotated[k], "cu.testing.%s is not annotated", k)
  end
  for name in pairs(annotated) do
    check(type(T[name]) == "function", "cu.testing.%s is annotated but does not exist", name)
  end
  done("cu.testing")
end)

-- Each call raises "unknown option 'zz_bogus'; the options are ..."; the list must be the
-- fields of the options class of the annotated parameter.
local OPTION_CALLS = {
  ["cu.empty"] = function() cu.empty(1, { zz_bogus = 1 }) end,
  ["cu.zeros"] = function() cu.zeros(1, { zz_bogus = 1 }) end,
  ["cu.ones"] = function() cu.ones(1, { zz_bogus = 1 }) end,
  ["cu.full"] = function() cu.full(1, 0, { zz_bogus = 1 }) end,
  ["cu.array"] = function() cu.array({ 1 }, { zz_bogus = 1 }) end,
  ["cu.arange"] = function() cu.arange(3, { zz_bogus = 1 }) end,
  ["cu.linspace"] = function() cu.linspace(0, 1, 3, { zz_bogus = 1 }) end,
  ["cu.copy"] = function() local a = cu.zeros(1) cu.copy(a, a, { zz_bogus = 1 }) end,
  ["cu.host.empty"] = function() cu.host.empty(1, { zz_bogus = 1 }) end,
  ["cu.host.zeros"] = function() cu.host.zeros(1, { zz_bogus = 1 }) end,
  ["cu.host.ones"] = function() cu.host.ones(1, { zz_bogus = 1 }) end,
  ["cu.host.full"] = function() cu.host.full(1, 0, { zz_bogus = 1 }) end,
  ["cu.host.array"] = function() cu.host.array({ 1 }, { zz_bogus = 1 }) end,
  ["cu.host.rand"] = function() cu.host.rand(1, { zz_bogus = 1 }) end,
  ["cu.host.randn"] = function() cu.host.randn(1, { zz_bogus = 1 }) end,
  ["cu.sleep"] = function() cu.sleep(0, { zz_bogus = 1 }) end,
  ["cu.add"] = function() cu.add(1, cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.where"] = function() local a = cu.zeros(1) cu.where(a, a, a, { zz_bogus = 1 }) end,
  ["cu.exp"] = function() cu.exp(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.sum"] = function() cu.sum(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.rand"] = function() cu.rand(1, { zz_bogus = 1 }) end,
  ["cu.sort"] = function() cu.sort(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.argsort"] = function() cu.argsort(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.nonzero"] = function() cu.nonzero(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.count_nonzero"] = function() cu.count_nonzero(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.searchsorted"] = function() local a = cu.zeros(1) cu.searchsorted(a, a, { zz_bogus = 1 }) end,
  ["cu.unique_values"] = function() cu.unique_values(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.unique_all"] = function() cu.unique_all(cu.zeros(1), { zz_bogus = 1 }) end,
  ["cu.Array:sort"] = function() cu.zeros(1):sort({ zz_bogus = 1 }) end,
  ["cu.randn"] = function() cu.randn(1, { zz_bogus = 1 }) end,
  ["cu.matmul"] = function() local a = cu.zeros({ 2, 2 }) cu.matmul(a, a, { zz_bogus = 1 }) end,
  ["cu.dot"] = function() local a = cu.zeros(2) cu.dot(a, a, { zz_bogus = 1 }) end,
  ["cu.stream"] = function() cu.stream({ zz_bogus = 1 }) end,
  ["cu.event"] = function() cu.event({ zz_bogus = 1 }) end,
  ["cu.compile"] = function() cu.compile("", { zz_bogus = 1 }) end,
  ["cu.elementwise"] = function() cu.elementwise("f32 x -> f32 y", "y = x", { zz_bogus = 1 }) end,
  ["cu.reduction"] = function() cu.reduction("f32 x -> f32 y", { zz_bogus = 1 }) end,
  ["cu.time"] = function() cu.time(function() end, { zz_bogus = 1 }) end,
  ["cu.clock"] = function() cu.clock({ zz_bogus = 1 }) end,
  ["cu.trace.start"] = function() cu.trace.start({ zz_bogus = 1 }) end,
  ["cu.trace.summary"] = function() cu.trace.summary({ zz_bogus = 1 }) end,
  ["cu.bench"] = function() cu.bench(function() end, { zz_bogus = 1 }) end,
  ["cu.sweep"] = function() cu.sweep({ zz_bogus = 1 }) end,
  ["cu.plot"] = function() cu.plot({}, { zz_bogus = 1 }) end,
  ["cu.tune"] = function() cu.tune({ zz_bogus = 1 }) end,
  ["cu.help"] = function() cu.help("zeros", { zz_bogus = 1 }) end,
  ["cu.json.encode"] = function() cu.json.encode({}, { zz_bogus = 1 }) end,
  ["cu.Array:contiguous"] = function() cu.zeros(1):contiguous({ zz_bogus = 1 }) end,
  ["cu.Array:astype"] = function() cu.zeros(1):astype("f64", { zz_bogus = 1 }) end,
  ["cu.Array:clone"] = function() cu.zeros(1):clone({ zz_bogus = 1 }) end,
  ["cu.Array:fill"] = function() cu.zeros(1):fill(0, { zz_bogus = 1 }) end,
  ["cu.Array:to_host"] = function() cu.zeros(1):to_host({ zz_bogus = 1 }) end,
  ["cu.Array:to_device"] = function() cu.host.zeros(1):to_device({ zz_bogus = 1 }) end,
  ["cu.Array:add"] = function() cu.zeros(1):add(1, { zz_bogus = 1 }) end,
  ["cu.Array:exp"] = function() cu.zeros(1):exp({ zz_bogus = 1 }) end,
  ["cu.Array:sum"] = function() cu.zeros(1):sum({ zz_bogus = 1 }) end,
  ["cu.Array:matmul"] = function() local a = cu.zeros({ 2, 2 }) a:matmul(a, { zz_bogus = 1 }) end,
  ["cu.fft.fft"] = function() cu.fft.fft(cu.zeros(4), { zz_bogus = 1 }) end,
  ["cu.fft.fftn"] = function() cu.fft.fftn(cu.zeros(4), { zz_bogus = 1 }) end,
  ["cu.fft.fftshift"] = function() cu.fft.fftshift(cu.zeros(4), { zz_bogus = 1 }) end,
  ["cu.fft.fftfreq"] = function() cu.fft.fftfreq(4, { zz_bogus = 1 }) end,
  ["cu.can_cast"] = function() cu.can_cast("f32", "f64", { zz_bogus = 1 }) end,
  ["cu.SweepResults:plot"] = function()
    cu.sweep({ axes = { { "n", { 1 } } }, run = function() end, quiet = true })
        :plot({ zz_bogus = 1 })
  end,
  ["cu.ElementwiseKernel()"] = function()
    cu.elementwise("f32 x -> f32 y", "y = x")(cu.zeros(1), { zz_bogus = 1 })
  end,
  ["cu.ReductionKernel()"] = function()
    cu.reduction("f32 x -> f32 y", { reduce = "a + b", identity = 0 })(cu.zeros(1),
      { zz_bogus = 1 })
  end,
}

if cu.mpi.available() then -- MPI starts as a singleton (size 1)
  OPTION_CALLS["cu.mpi.bcast"] = function() cu.mpi.bcast(1, 0, { zz_bogus = 1 }) end
  OPTION_CALLS["cu.mpi.allreduce"] = function() cu.mpi.allreduce(1, { zz_bogus = 1 }) end
  OPTION_CALLS["cu.mpi.recv"] = function() cu.mpi.recv(0, 0, { zz_bogus = 1 }) end
end

-- The options class of a call: the last table-class parameter of the annotated function (or the
-- ---@overload of a callable class).
local function option_class(name)
  local callable = name:match("^(.-)%(%)$")
  if callable then
    local c = class(callable)
    local t = c.overloads[1]:match("|(cu%.[%w_]+)%)")
    return db.classes[t]
  end
  local e = T.truthy(db.by_name[name], name .. " is annotated")
  for i = #e.params, 1, -1 do
    local t = e.params[i].type:gsub("%?$", "")
    for part in t:gmatch("[^|]+") do
      if db.classes[part] and (part:match("Options?$") or part:match("Spec$")) then
        return db.classes[part]
      end
    end
  end
  return nil
end

T.case("options classes list exactly the options the functions accept", function()
  local check, done = checker()
  for _, name in ipairs(sorted_keys(OPTION_CALLS)) do
    local ok, err = pcall(OPTION_CALLS[name])
    local list = not ok and
        tostring(err):match("unknown option 'zz_bogus'; the options are ([^)]*)")
    check(list, "%s: expected an unknown-option error, got %s", name, ok and "success" or err)
    local c = option_class(name)
    check(c, "%s: no options class among its parameters", name)
    if list and c then
      local live, annotated = {}, {}
      for k in list:gmatch("[^,%s]+") do live[#live + 1] = k end
      for k in pairs(fields_of(c)) do annotated[#annotated + 1] = k end
      table.sort(live)
      table.sort(annotated)
      check(table.concat(live, " ") == table.concat(annotated, " "),
        "%s takes {%s}, %s lists {%s}", name, table.concat(live, ", "), c.name,
        table.concat(annotated, ", "))
    end
  end
  done("options")
end)

os.exit(T.run())
