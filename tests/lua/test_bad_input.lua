-- Every bad input raises a clear Lua error naming the key fact, and the runtime keeps working
-- afterwards (S.raises allocates and uses arrays after each error).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local raises = S.raises

-- Creation functions taking a shape first, with how to call them.
local creators = {
  ["cu.empty"] = function(shape, ...) return cu.empty(shape, ...) end,
  ["cu.zeros"] = function(shape, ...) return cu.zeros(shape, ...) end,
  ["cu.ones"] = function(shape, ...) return cu.ones(shape, ...) end,
  ["cu.full"] = function(shape, ...) return cu.full(shape, 1, ...) end,
  ["cu.host.empty"] = function(shape, ...) return cu.host.empty(shape, ...) end,
  ["cu.host.zeros"] = function(shape, ...) return cu.host.zeros(shape, ...) end,
  ["cu.host.ones"] = function(shape, ...) return cu.host.ones(shape, ...) end,
  ["cu.host.full"] = function(shape, ...) return cu.host.full(shape, 1, ...) end,
}

-- sizes ---------------------------------------------------------------------------------------

T.case("negative sizes", function()
  for name, f in pairs(creators) do
    raises(function() f(-1) end, { "negative", "-1" }, name)
    raises(function() f({ 2, -3 }) end, { "negative", "-3", "{2,-3}" }, name)
  end
  raises(function() cu.arange(6):view({ 2, -2 }) end, { "-2" }, "view")
  raises(function() cu.arange(6):reshape(-2, 3) end, { "-2" }, "reshape")
end)

T.case("the contract's example message (in Lua's argument style)", function()
  local tail = "bad argument #1 to 'empty' (size -1 in shape {-1} is negative)"
  local msg = T.raises(function() cu.empty(-1) end, tail)
  T.eq(msg:sub(-#tail), tail, "the message ends with the example")
  S.check_runtime()
end)

T.case("fractional sizes", function()
  for name, f in pairs(creators) do
    raises(function() f(2.5) end, { "2.5", "integer" }, name)
    raises(function() f({ 3, 2.5 }) end, { "2.5", "integer" }, name)
  end
  raises(function() cu.arange(6):view(2.5, 2) end, { "2.5" }, "view")
  raises(function() cu.arange(6):reshape({ 1.5, 4 }) end, { "1.5" }, "reshape")
end)

T.case("non-numeric sizes, strings included", function()
  for name, f in pairs(creators) do
    raises(function() f("3") end, { "string" }, name)
    raises(function() f({ "3" }) end, { "string" }, name)
    raises(function() f({ 2, "3" }) end, { "string" }, name)
    raises(function() f(true) end, { "boolean" }, name)
    raises(function() f({ {} }) end, { "table" }, name)
    raises(function() f(nil) end, { "nil" }, name)
  end
  raises(function() cu.arange(6):view("6") end, { "string" }, "view")
  raises(function() cu.arange(6):view({ "6" }) end, { "string" }, "view")
  raises(function() cu.arange(6):reshape("2", 3) end, { "string" }, "reshape")
end)

T.case("infinite and NaN sizes", function()
  raises(function() cu.empty(math.huge) end, { "integer", "inf" })
  raises(function() cu.empty({ 2, 0 / 0 }) end, { "integer", "nan" })
  raises(function() cu.zeros(1e300) end, { "1e+300" })
end)

T.case("overflowing shapes raise before allocating", function()
  for name, f in pairs(creators) do
    local msg = raises(function() f({ 2 ^ 40, 2 ^ 40 }) end, { "overflow" }, name)
    T.truthy(not msg:find("out of", 1, true), name .. ": " .. msg)
    raises(function() f({ 2 ^ 31, 2 ^ 31, 2 ^ 31 }) end, { "overflow" }, name)
    raises(function() f({ 1 << 62, 4 }) end, { "overflow" }, name)
  end
  raises(function() cu.empty(1 << 61, "f64") end, { "overflow" }, "bytes overflow")
end)

T.case("more than 8 dimensions", function()
  for name, f in pairs(creators) do
    raises(function() f({ 1, 1, 1, 1, 1, 1, 1, 1, 1 }) end, { "8" }, name)
  end
  raises(function() cu.array({ { { { { { { { { 1 } } } } } } } } }) end, { "8" }, "cu.array")
  raises(function() cu.zeros(9):view(1, 1, 1, 1, 1, 1, 1, 1, 9) end, { "8" }, "view")
  raises(function() cu.zeros(9):reshape({ 1, 1, 1, 1, 1, 1, 1, 1, 9 }) end, { "8" }, "reshape")
end)

T.case("shapes of the wrong type", function()
  raises(function() cu.empty(cu.zeros(3)) end, { "shape" })
  raises(function() cu.empty() end, { "shape" })
  raises(function() cu.zeros(function() end) end, { "function" })
end)

-- dtypes -------------------------------------------------------------------------------------

T.case("unknown dtypes name the dtype", function()
  for name, f in pairs(creators) do
    raises(function() f(3, "f33") end, { "unknown dtype 'f33'" }, name)
    raises(function() f(3, { dtype = "float128" }) end, { "unknown dtype 'float128'" }, name)
  end
  raises(function() cu.array({ 1, 2 }, "int4") end, { "unknown dtype 'int4'" })
  raises(function() cu.host.array({ 1, 2 }, "F32") end, { "unknown dtype 'F32'" }, "dtype names are case-sensitive")
  raises(function() cu.arange(5, "i33") end, { "unknown dtype 'i33'" })
  raises(function() cu.arange(0, 5, 1, "u128") end, { "unknown dtype 'u128'" })
  raises(function() cu.linspace(0, 1, 5, "half") end, { "unknown dtype 'half'" })
  raises(function() cu.zeros(3):astype("f128") end, { "unknown dtype 'f128'" })
  raises(function() cu.zeros(3):astype("") end, { "unknown dtype ''" })
  raises(function() cu.zeros(3):astype(32) end, { "dtype" })
  raises(function() cu.zeros(3):astype() end, { "dtype" })
end)

-- options ------------------------------------------------------------------------------------

T.case("unknown option keys are named", function()
  local s = cu.stream()
  local calls = {
    ["cu.empty"] = function(o) return cu.empty(3, o) end,
    ["cu.zeros"] = function(o) return cu.zeros(3, "i32", o) end,
    ["cu.ones"] = function(o) return cu.ones(3, o) end,
    ["cu.full"] = function(o) return cu.full(3, 1, o) end,
    ["cu.array"] = function(o) return cu.array({ 1 }, o) end,
    ["cu.arange"] = function(o) return cu.arange(3, o) end,
    ["cu.linspace"] = function(o) return cu.linspace(0, 1, 3, o) end,
    ["cu.host.empty"] = function(o) return cu.host.empty(3, o) end,
    ["cu.host.zeros"] = function(o) return cu.host.zeros(3, o) end,
    ["cu.host.ones"] = function(o) return cu.host.ones(3, o) end,
    ["cu.host.full"] = function(o) return cu.host.full(3, 1, o) end,
    ["cu.host.array"] = function(o) return cu.host.array({ 1 }, o) end,
    ["to_host"] = function(o) return cu.zeros(3):to_host(o) end,
    ["to_device"] = function(o) return cu.zeros(3):to_device(o) end,
    ["cu.copy"] = function(o) return cu.copy(cu.zeros(3), cu.zeros(3), o) end,
    ["fill"] = function(o) return cu.zeros(3):fill(1, o) end,
    ["astype"] = function(o) return cu.zeros(3):astype("f64", o) end,
    ["clone"] = function(o) return cu.zeros(3):clone(o) end,
    ["contiguous"] = function(o) return cu.zeros({ 2, 2 }):transpose():contiguous(o) end,
    ["cu.stream"] = function(o) return cu.stream(o) end,
    ["cu.event"] = function(o) return cu.event(o) end,
    ["cu.sleep"] = function(o) return cu.sleep(1, o) end,
  }
  for name, f in pairs(calls) do
    raises(function() f({ bogus = 1 }) end, { "unknown option 'bogus'" }, name)
    raises(function() f({ strem = s }) end, { "unknown option 'strem'" }, name)
  end
  -- keys valid elsewhere are still unknown here
  raises(function() cu.zeros(3, { pinned = true }) end, { "unknown option 'pinned'" }, "device arrays are not pinned")
  raises(function() cu.host.zeros(3, { stream = s }) end, { "unknown option 'stream'" }, "host creation has no stream")
  raises(function() cu.zeros(3):to_device({ pinned = true }) end, { "unknown option 'pinned'" })
  raises(function() cu.event({ priority = "high" }) end, { "unknown option 'priority'" })
end)

T.case("option values of the wrong type", function()
  raises(function() cu.zeros(3, { stream = 5 }) end, { "stream" })
  raises(function() cu.zeros(3):fill(1, { stream = "s" }) end, { "stream" })
  raises(function() cu.copy(cu.zeros(3), cu.zeros(3), { stream = cu.event() }) end, { "stream" })
  raises(function() cu.host.zeros(3, { pinned = "yes" }) end, { "pinned" })
  raises(function() cu.zeros(3):to_host({ pinned = 1 }) end, { "pinned" })
  raises(function() cu.event({ timing = "no" }) end, { "timing" })
  raises(function() cu.stream({ priority = "urgent" }) end, { "urgent" })
  raises(function() cu.stream({ priority = 1 }) end, { "priority" })
  raises(function() cu.sleep(10, { stream = {} }) end, { "stream" })
end)

-- indices ------------------------------------------------------------------------------------

T.case("index 0, past the end, before the start and fractional", function()
  local a = cu.arange(5, "i32")
  raises(function() return a[0] end, { "0", "out of range" }, "a[0]")
  raises(function() return a[6] end, { "6", "out of range" }, "a[6]")
  raises(function() return a[-6] end, { "-6", "out of range" }, "a[-6]")
  raises(function() return a[2.5] end, { "2.5" }, "a[2.5]")
  raises(function() return a[1 / 0] end, { "inf" }, "a[inf]")
  raises(function() return a[true] end, { "boolean" }, "a[true]")
  raises(function() return a[{ "x" }] end, { "slice start", "string" }, "a[{\"x\"}]") -- a[{}] is a slice
  raises(function() a[0] = 1 end, { "0", "out of range" }, "a[0] = 1")
  raises(function() a[6] = 1 end, { "6", "out of range" }, "a[6] = 1")
  raises(function() a[-6] = 1 end, { "-6", "out of range" }, "a[-6] = 1")
  raises(function() a[1.5] = 1 end, { "1.5" }, "a[1.5] = 1")
  T.eq(a:totable(), { 0, 1, 2, 3, 4 }, "failed writes changed nothing")
  local m = cu.zeros({ 2, 3 })
  raises(function() return m[3] end, { "3", "out of range" }, "row 3 of 2")
  raises(function() return m[1][4] end, { "4", "out of range" }, "column 4 of 3")
  raises(function() return m[-3] end, { "-3", "out of range" })
  raises(function() m[3] = 1 end, { "3", "out of range" })
  raises(function() return m[0.5] end, { "0.5" })
  local h = cu.host.zeros(3)
  raises(function() return h[4] end, { "4", "out of range" }, "host array")
  raises(function() return h[0] end, { "0", "out of range" }, "host array")
  local e = cu.zeros(0)
  raises(function() return e[1] end, { "1", "out of range" }, "empty array")
end)

T.case("0-d arrays have no length and no index", function()
  local z = cu.array(5)
  raises(function() return #z end, { "0-d" })
  raises(function() return z[1] end, { "0-d" })
  raises(function() z[1] = 2 end, { "0-d" })
  T.eq(z:item(), 5.0)
end)

T.case("bad values assigned to elements and rows", function()
  local a = cu.zeros({ 2, 3 })
  raises(function() a[1] = "x" end, { "string" })
  raises(function() a[1][1] = {} end, { "table" })
  raises(function() a[1] = cu.zeros(2) end, { "{3}", "{2}" }, "row of the wrong shape")
  raises(function() a[1] = cu.zeros({ 1, 3 }) end, { "{3}", "{1,3}" }, "row of the wrong ndim")
  raises(function() a[2] = nil end, { "nil" })
  T.eq(a:totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
end)

-- value rules --------------------------------------------------------------------------------

-- Every way of writing a value into a `t` array.
local function writers(t)
  return {
    ["a[i] = v"] = function(v) local a = cu.zeros(3, t); a[2] = v end,
    ["row fill"] = function(v) local a = cu.zeros({ 2, 2 }, t); a[1] = v end,
    ["fill"] = function(v) cu.zeros(3, t):fill(v) end,
    ["full"] = function(v) cu.full(3, v, t) end,
    ["host.full"] = function(v) cu.host.full(3, v, t) end,
    ["cu.array"] = function(v) cu.array({ 0, v }, t) end,
    ["host a[i] = v"] = function(v) local a = cu.host.zeros(3, t); a[1] = v end,
  }
end

T.case("fractional values into integer dtypes: not an integer", function()
  for _, t in ipairs({ "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64" }) do
    for how, w in pairs(writers(t)) do
      raises(function() w(2.5) end, { "2.5", "not an integer" }, t .. " " .. how)
      raises(function() w(-0.125) end, { "not an integer" }, t .. " " .. how)
    end
  end
end)

T.case("out-of-range values into integer dtypes", function()
  local cases = {
    i8 = { 128, -129 }, i16 = { 32768, -32769 }, i32 = { 2147483648, -2147483649 },
    i64 = { 2 ^ 63, -2 ^ 64 }, u8 = { 300, -1, 256 }, u32 = { 4294967296, -1 },
    u16 = { 65536, -1, 70000, math.mininteger }, u64 = { -1, 2 ^ 64, -0.5 * 2 ^ 64, math.mininteger, 1e30 },
  }
  for t, bad in pairs(cases) do
    for how, w in pairs(writers(t)) do
      for _, v in ipairs(bad) do
        raises(function() w(v) end, { "out of range" }, t .. " " .. how .. " " .. tostring(v))
      end
      raises(function() w(0 / 0) end, { t }, t .. " " .. how .. " nan")
      raises(function() w(math.huge) end, { t }, t .. " " .. how .. " inf")
    end
  end
  local msg = raises(function() cu.zeros(3, "u8")[1] = 300 end, { "300", "out of range", "u8" })
  T.truthy(msg, msg)
  raises(function() cu.zeros(3, "u16")[1] = 65536 end, { "65536", "out of range", "u16" })
  raises(function() cu.array({ 1, -1 }, "u64") end, { "-1", "out of range", "u64" })
  raises(function() cu.full(2, -5, "u64") end, { "-5", "out of range", "u64" })
  raises(function() cu.zeros(2, "u64"):fill(2 ^ 64) end, { "out of range", "u64" })
end)

T.case("bool arrays take only true, false, 0 and 1", function()
  for how, w in pairs(writers("bool")) do
    raises(function() w(2) end, { "2" }, "bool " .. how)
    raises(function() w(0.5) end, { "0.5" }, "bool " .. how)
    raises(function() w(-1) end, { "-1" }, "bool " .. how)
    raises(function() w(cu.complex(1, 0)) end, { "bool" }, "bool " .. how)
  end
end)

T.case("complex values into real dtypes", function()
  for _, t in ipairs({ "f32", "f64", "f16", "i32", "u8" }) do
    raises(function() cu.zeros(2, t)[1] = cu.complex(1, 2) end, { "complex" }, t)
    raises(function() cu.full(2, cu.complex(0, 1), t) end, { "complex" }, t)
    raises(function() cu.array({ cu.complex(1, 1) }, t) end, { "complex" }, t)
  end
end)

T.case("non-scalar elements in cu.array", function()
  raises(function() cu.array({ 1, "x" }) end, { "string" })
  raises(function() cu.array({ 1, cu.zeros(1) }) end, { "userdata" })
  raises(function() cu.array({ 1, function() end }) end, { "function" })
  raises(function() cu.array("1") end, { "string" })
  raises(function() cu.array() end, {})
  raises(function() cu.full(3, "1") end, { "string" })
  raises(function() cu.full(3) end, {})
  raises(function() cu.zeros(3):fill("x") end, { "string" })
  raises(function() cu.zeros(3):fill() end, {})
end)

T.case("ragged nested tables", function()
  raises(function() cu.array({ { 1, 2 }, { 3 } }) end, { "ragged" })
  raises(function() cu.array({ { 1, 2 }, 3 }) end, { "ragged" })
  raises(function() cu.array({ 1, { 2 } }) end, { "ragged" })
  raises(function() cu.array({ { { 1 } }, { { 1, 2 } } }) end, { "ragged" })
  raises(function() cu.array({ { 1 }, { 2 }, { 3, 4 } }, "i32") end, { "ragged" })
  raises(function() cu.array({ {}, { 1 } }) end, { "ragged" })
  raises(function() cu.array({ {}, 5 }) end, { "ragged" })
  raises(function() cu.array({ { {}, {} }, { { 1 }, {} } }) end, { "ragged" })
  raises(function() cu.host.array({ { 1, 2 }, { 3 } }) end, { "ragged" })
  raises(function() cu.host.array({ { 1, 2 }, { 3, 4, 5 } }, { pinned = true }) end, { "ragged" })
end)

-- sequences ----------------------------------------------------------------------------------

T.case("arange and linspace arguments", function()
  raises(function() cu.arange(0, 5, 0) end, { "step" })
  raises(function() cu.arange(0, 5, 0.0, "i32") end, { "step" })
  raises(function() cu.arange("5") end, {})
  raises(function() cu.arange() end, {})
  raises(function() cu.arange(0, 1e30, 1e-30) end, {})
  raises(function() cu.linspace(0, 1, -1) end, { "-1" })
  raises(function() cu.linspace(0, 1, 2.5) end, { "2.5" })
  raises(function() cu.linspace(0, 1) end, {})
  raises(function() cu.linspace("0", 1, 3) end, { "string" })
end)

-- shapes of copies and views ---------------------------------------------------------------------

T.case("cu.copy with different shapes names both", function()
  raises(function() cu.copy(cu.zeros({ 2, 3 }), cu.zeros({ 3, 2 })) end, { "{2,3}", "{3,2}" })
  raises(function() cu.copy(cu.zeros(6), cu.zeros({ 2, 3 })) end, { "{6}", "{2,3}" })
  raises(function() cu.copy(cu.host.zeros({ 4 }), cu.zeros({ 5 })) end, { "{4}", "{5}" })
  raises(function() cu.copy(cu.zeros({ 1 }), cu.array(1)) end, { "{1}", "{}" })
  raises(function() cu.copy(cu.zeros({ 2, 3 }), cu.host.zeros({ 2, 3, 1 }, { pinned = true }),
    { stream = cu.stream() }) end,
    { "{2,3}", "{2,3,1}" })
  raises(function() cu.copy(cu.zeros(3), { 1, 2, 3 }) end, {})
  raises(function() cu.copy(1, cu.zeros(3)) end, {})
  raises(function() cu.copy(cu.zeros(3)) end, {})
end)

T.case("view, reshape, narrow and transpose errors", function()
  local a = cu.arange(12):view(3, 4)
  raises(function() a:transpose():view(12) end, { "contiguous" })
  raises(function() a:narrow(2, 1, 2):view(6) end, { "contiguous" })
  raises(function() a:view(5) end, { "{5}" })
  raises(function() a:view({ 5, 3 }) end, { "{5,3}" })
  raises(function() a:reshape(13) end, { "{13}" })
  raises(function() a:view(-1, -1) end, { "-1" })
  raises(function() a:reshape(5, -1) end, { "{5,-1}" })
  raises(function() a:view() end, {})
  raises(function() a:narrow(0, 1, 1) end, { "0" })
  raises(function() a:narrow(3, 1, 1) end, { "3" })
  raises(function() a:narrow(1, 0, 1) end, { "0" })
  raises(function() a:narrow(1, 4, 1) end, { "4" })
  raises(function() a:narrow(1, 2, 3) end, { "3" })
  raises(function() a:narrow(2, 1, -1) end, { "-1" })
  raises(function() a:narrow(1, 1.5, 1) end, { "1.5" })
  raises(function() a:narrow(1, 1) end, {})
  raises(function() a:transpose(1, 3) end, { "3" })
  raises(function() a:transpose(0, 1) end, { "0" })
  raises(function() a:transpose(1) end, {})
  raises(function() a:item() end, { "{3,4}" })
  raises(function() cu.zeros(0):item() end, { "{0}" })
  T.eq(a:totable(), { { 0, 1, 2, 3 }, { 4, 5, 6, 7 }, { 8, 9, 10, 11 } })
end)

-- freed arrays ----------------------------------------------------------------------------

T.case("every use of a freed array raises an error of kind 'released'", function()
  local function freed()
    local a = cu.arange(6, "i32"):view(2, 3)
    a:free()
    return a
  end
  local uses = {
    index = function(a) return a[1] end,
    newindex = function(a) a[1] = 0 end,
    len = function(a) return #a end,
    shape = function(a) return a.shape end,
    dtype = function(a) return a.dtype end,
    size = function(a) return a.size end,
    view = function(a) return a:view(6) end,
    reshape = function(a) return a:reshape(6) end,
    narrow = function(a) return a:narrow(1, 1, 1) end,
    transpose = function(a) return a:transpose() end,
    contiguous = function(a) return a:contiguous() end,
    astype = function(a) return a:astype("f32") end,
    clone = function(a) return a:clone() end,
    fill = function(a) return a:fill(1) end,
    item = function(a) return a:item() end,
    totable = function(a) return a:totable() end,
    to_host = function(a) return a:to_host() end,
    to_device = function(a) return a:to_device() end,
    ["copy dst"] = function(a) return cu.copy(a, cu.zeros({ 2, 3 }, "i32")) end,
    ["copy src"] = function(a) return cu.copy(cu.zeros({ 2, 3 }, "i32"), a) end,
    ["cu.array"] = function(a) return cu.array(a) end,
  }
  for name, use in pairs(uses) do
    S.raises_released(function() use(freed()) end, name)
  end
  local h = cu.host.zeros(3)
  h:free()
  S.raises_released(function() return h[1] end, "host array")
  S.raises_released(function() return h:to_device() end, "host array")
end)

-- streams, events, devices --------------------------------------------------------------------

T.case("stream, event and device misuse", function()
  local s = cu.stream()
  local e = cu.event()
  raises(function() s:wait(5) end, { "number" })
  raises(function() s:wait() end, {})
  raises(function() e:record(5) end, {})
  raises(function() e:record(cu.zeros(1)) end, {})
  raises(function() cu.use_stream(5) end, {})
  raises(function() cu.use_stream() end, {})
  raises(function() e:elapsed(5) end, {})
  raises(function() return e - 5 end, {})
  raises(function() cu.sleep("long") end, {})
  raises(function() cu.sleep() end, {})
  local n = #cu.devices()
  raises(function() cu.device(n) end, { tostring(n) })
  raises(function() cu.device(-1) end, { "-1" })
  raises(function() cu.device(0.5) end, { "0.5" })
  T.eq(cu.device(), 0, "the device did not change")
end)

T.case("arguments of the wrong type to methods", function()
  raises(function() cu.zeros(3).view(5) end, {})
  raises(function() cu.zeros(3).totable({}) end, {})
  raises(function() cu.zeros(3).free(5) end, {})
  raises(function() cu.zeros(3):to_host(5) end, {})
  raises(function() cu.complex("a") end, {})
  raises(function() return cu.complex(1, 2) + "x" end, {})
  raises(function() return cu.complex(1, 2) + {} end, {})
end)

-- messages name the function as Lua does -------------------------------------------------------

-- One case per kind of failure, so that a missing name shows which checks lack it: an argument
-- error is "bad argument #n to 'f' (...)", any other error "f: ...".
local prefixed = {
  { "empty", "a negative size", function() cu.empty(-1) end },
  { "empty", "a fractional size", function() cu.empty(2.5) end },
  { "zeros", "a string size", function() cu.zeros("3") end },
  { "ones", "an unknown dtype", function() cu.ones(3, "f33") end },
  { "full", "an unknown option", function() cu.full(3, 1, { bogus = 1 }) end },
  { "full", "a value out of range", function() cu.full(3, 300, "u8") end },
  { "array", "a ragged table", function() cu.array({ { 1, 2 }, { 3 } }) end },
  { "array", "a string element", function() cu.array({ "x" }) end },
  { "arange", "a zero step", function() cu.arange(0, 5, 0) end },
  { "linspace", "a negative count", function() cu.linspace(0, 1, -1) end },
  { "copy", "different shapes", function() cu.copy(cu.zeros(2), cu.zeros(3)) end },
  { "view", "a non-contiguous array", function() cu.zeros({ 2, 2 }):transpose():view(4) end },
  { "narrow", "start 0", function() cu.zeros(3):narrow(1, 0, 1) end },
  { "narrow", "a bad dimension", function() cu.zeros(3):narrow(2, 1, 1) end },
  { "transpose", "a bad dimension", function() cu.zeros({ 2, 2 }):transpose(1, 3) end },
  { "astype", "an unknown dtype", function() cu.zeros(3):astype("x") end },
  { "fill", "a fractional value into i32", function() cu.zeros(3, "i32"):fill(2.5) end },
  { "item", "several elements", function() cu.zeros(3):item() end },
  { "totable", "a freed array", function() local a = cu.zeros(3); a:free(); a:totable() end },
  { "stream", "an unknown priority", function() cu.stream({ priority = "urgent" }) end },
  { "elapsed", "an unrecorded event", function() cu.event():elapsed(cu.event()) end },
  { "device", "a nonexistent device", function() cu.device(#cu.devices()) end },
}
for _, p in ipairs(prefixed) do
  local fname, what, fn = p[1], p[2], p[3]
  T.case("the message for " .. what .. " names '" .. fname .. "'", function()
    local msg = T.raises(fn)
    -- drop the "file:line: " position Lua adds
    local bare = msg:gsub("^[^:]*:%d+: ", "")
    T.truthy(bare:sub(1, #fname + 2) == fname .. ": " or
      bare:find("^bad argument #%d+ to '" .. fname .. "' %(.*%)$"), "message: " .. msg)
  end)
end

os.exit(T.run())
