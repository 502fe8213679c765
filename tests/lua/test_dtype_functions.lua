-- The data-type functions: cu.can_cast, cu.result_type, cu.finfo, cu.iinfo and cu.isdtype, exact
-- values for every dtype (bf16 included, which numpy lacks), the same rules as the operations'
-- promotion, and their argument errors. tests/numpy/test_fft_numpy.lua compares them with numpy.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

T.case("finfo: bits, eps, max, min, smallest_normal and dtype", function()
  local want = {
    f16 = { 16, 2 ^ -10, 65504, 2 ^ -14, "f16" },
    bf16 = { 16, 2 ^ -7, (2 - 2 ^ -7) * 2 ^ 127, 2 ^ -126, "bf16" },
    f32 = { 32, 2 ^ -23, (2 - 2 ^ -23) * 2 ^ 127, 2 ^ -126, "f32" },
    f64 = { 64, 2 ^ -52, math.huge, 2 ^ -1022, "f64" },
    c64 = { 32, 2 ^ -23, (2 - 2 ^ -23) * 2 ^ 127, 2 ^ -126, "f32" },
    c128 = { 64, 2 ^ -52, math.huge, 2 ^ -1022, "f64" },
  }
  for t, w in pairs(want) do
    local f = cu.finfo(t)
    T.eq(f.bits, w[1], t .. " bits")
    T.eq(f.eps, w[2], t .. " eps")
    if w[3] == math.huge then
      T.eq(f.max, 1.7976931348623157e308, t .. " max")
    else
      T.eq(f.max, w[3], t .. " max")
    end
    T.eq(f.min, -f.max, t .. " min")
    T.eq(f.smallest_normal, w[4], t .. " smallest_normal")
    T.eq(f.dtype, w[5], t .. " dtype")
    -- eps is the gap above 1 in the dtype itself; max converts to the dtype and back unchanged
    if t == "f32" or t == "f16" or t == "bf16" then
      T.eq(cu.array({ 1 + f.eps }, t)[1], 1 + f.eps, t .. " 1 + eps")
      T.eq(cu.array({ 1 + f.eps / 2 }, t)[1], 1, t .. " 1 + eps/2 rounds to 1")
      T.eq(cu.array({ f.max }, t)[1], f.max, t .. " max is a value of the dtype")
    end
  end
  T.eq(cu.finfo(cu.zeros({ 2 }, "f32")).bits, 32, "an array's dtype")
end)

T.case("iinfo: bits, min, max and dtype of every integer dtype", function()
  for _, t in ipairs(S.DTYPES) do
    local info = S.INFO[t]
    if info.kind == "int" then
      local i = cu.iinfo(t)
      T.eq(i.bits, info.bits, t .. " bits")
      T.eq(i.min, info.min, t .. " min")
      T.eq(i.max, info.sat_max or info.max, t .. " max")
      -- u64's max (2^64 - 1) is no Lua integer: the nearest float, 2^64
      T.eq(math.type(i.max), t == "u64" and "float" or "integer", t .. " max's Lua type")
      T.eq(i.dtype, t, t .. " dtype")
    end
  end
  T.eq(cu.iinfo(cu.zeros({ 1 }, "u8")).max, 255)
end)

T.case("result_type follows the operations' promotion", function()
  local pairs_ = { { "i8", "u8", "i16" }, { "i32", "u32", "i64" }, { "f16", "bf16", "f32" },
    { "i8", "bf16", "bf16" }, { "i16", "f16", "f32" }, { "f32", "c64", "c64" }, { "f64", "c64", "c128" },
    { "bool", "bool", "bool" }, { "bool", "i8", "i8" }, { "i64", "f32", "f64" }, { "u8", "f16", "f16" },
    { "u16", "i8", "i32" }, { "u16", "i16", "i32" }, { "u16", "u8", "u16" }, { "u16", "f16", "f32" },
    { "u16", "bf16", "f32" }, { "u64", "i8", "f64" }, { "u64", "i64", "f64" }, { "u64", "u32", "u64" },
    { "u64", "bool", "u64" }, { "u64", "f32", "f64" }, { "u64", "c64", "c128" }, { "u32", "u16", "u32" } }
  for _, p in ipairs(pairs_) do
    T.eq(cu.result_type(p[1], p[2]), p[3], p[1] .. " " .. p[2])
    T.eq(cu.result_type(p[2], p[1]), p[3], p[2] .. " " .. p[1])
    -- the same as the dtype of an operation's result
    local r = cu.add(cu.zeros({ 2 }, p[1]), cu.zeros({ 2 }, p[2]))
    if p[3] ~= "bool" then T.eq(r.dtype, p[3], "add " .. p[1] .. " " .. p[2]) end
  end
  T.eq(cu.result_type("i8"), "i8")
  T.eq(cu.result_type(cu.zeros({ 1 }, "u8"), "i8", "f16"), "f16")
  -- Lua numbers are weak scalars: they keep the array's type within their kind
  T.eq(cu.result_type("u8", 1000), "u8")
  T.eq(cu.result_type("u64", 1), "u64")
  T.eq(cu.result_type("u16", -1), "u16")
  T.eq(cu.result_type("i32", 1.5), "f64")
  T.eq(cu.result_type("f16", 1.5), "f16")
  T.eq(cu.result_type("f32", cu.complex(1, 2)), "c64")
  T.eq(cu.result_type("i8", true), "i8")
  T.eq(cu.result_type(cu.zeros({ 1 }, "f32"), 2), "f32")
end)

T.case("can_cast: numpy's safe rule by default, and the other castings", function()
  local yes = { { "i8", "i16" }, { "u8", "i16" }, { "u8", "u32" }, { "i64", "f64" }, { "i16", "f32" },
    { "f32", "c64" }, { "f16", "f32" }, { "bf16", "f32" }, { "bool", "u8" }, { "i8", "bf16" }, { "f32", "f32" },
    { "u16", "i32" }, { "u16", "f32" }, { "u8", "u16" }, { "u64", "f64" }, { "u32", "u64" }, { "bool", "u64" } }
  local no = { { "i16", "i8" }, { "i8", "u8" }, { "u32", "i32" }, { "f64", "f32" }, { "f64", "c64" },
    { "c64", "f64" }, { "f16", "bf16" }, { "bf16", "f16" }, { "i32", "f32" }, { "f32", "i64" }, { "u8", "bool" },
    { "u16", "i16" }, { "u16", "f16" }, { "u64", "i64" }, { "i8", "u64" }, { "u64", "u32" }, { "u64", "f32" } }
  for _, p in ipairs(yes) do T.eq(cu.can_cast(p[1], p[2]), true, p[1] .. " -> " .. p[2]) end
  for _, p in ipairs(no) do T.eq(cu.can_cast(p[1], p[2]), false, p[1] .. " -> " .. p[2]) end
  T.eq(cu.can_cast(cu.zeros({ 2 }, "i8"), "f32"), true, "from an array")
  T.eq(cu.can_cast("f64", "f32", { casting = "same_kind" }), true)
  T.eq(cu.can_cast("f32", "i64", { casting = "same_kind" }), false)
  T.eq(cu.can_cast("u8", "i8", { casting = "same_kind" }), true)
  T.eq(cu.can_cast("f64", "i8", { casting = "unsafe" }), true)
  T.eq(cu.can_cast("i8", "i16", { casting = "no" }), false)
  T.eq(cu.can_cast("i8", "i8", { casting = "equiv" }), true)
end)

T.case("isdtype: the standard's kinds, dtype names and tables of them", function()
  local kinds = {
    bool = { bool = true },
    ["signed integer"] = { i8 = true, i16 = true, i32 = true, i64 = true },
    ["unsigned integer"] = { u8 = true, u16 = true, u32 = true, u64 = true },
    integral = { i8 = true, i16 = true, i32 = true, i64 = true, u8 = true, u16 = true, u32 = true,
      u64 = true },
    ["real floating"] = { f16 = true, bf16 = true, f32 = true, f64 = true },
    ["complex floating"] = { c64 = true, c128 = true },
  }
  for _, t in ipairs(S.DTYPES) do
    for kind, members in pairs(kinds) do
      T.eq(cu.isdtype(t, kind), members[t] == true, t .. " " .. kind)
    end
    T.eq(cu.isdtype(t, "numeric"), t ~= "bool", t .. " numeric")
    T.eq(cu.isdtype(t, t), true, t .. " itself")
    T.eq(cu.isdtype(t, { "bool", "complex floating" }), t == "bool" or t == "c64" or t == "c128", t .. " tuple")
  end
  T.eq(cu.isdtype("f32", "float32"), true, "an alias names the dtype")
  T.eq(cu.isdtype(cu.zeros({ 1 }, "f32"), "real floating"), true, "an array's dtype")
end)

T.case("bad arguments name the argument", function()
  T.raises(function() cu.finfo("i32") end, "bad argument #1 to 'finfo' (a floating or complex dtype expected, got i32")
  T.raises(function() cu.finfo("x64") end, "bad argument #1 to 'finfo' (unknown dtype 'x64'")
  T.raises(function() cu.finfo(3) end, "bad argument #1 to 'finfo' (dtype name or cu.Array expected")
  T.raises(function() cu.iinfo("f32") end, "bad argument #1 to 'iinfo' (an integer dtype expected, got f32")
  T.raises(function() cu.iinfo("bool") end, "bad argument #1 to 'iinfo'")
  T.raises(function() cu.can_cast("f32") end, "bad argument #2 to 'can_cast'")
  T.raises(function() cu.can_cast("f32", cu.zeros({ 1 })) end, "bad argument #2 to 'can_cast' (dtype name expected")
  T.raises(function() cu.can_cast("f32", "f64", { casting = "maybe" }) end,
    "bad argument #3 to 'can_cast' (option 'casting'")
  T.raises(function() cu.can_cast("f32", "f64", { cast = "safe" }) end, "bad argument #3 to 'can_cast'")
  T.raises(function() cu.result_type() end, "bad argument #1 to 'result_type' (at least one array or dtype")
  T.raises(function() cu.result_type(1, 2) end, "bad argument #1 to 'result_type'")
  T.raises(function() cu.result_type("f32", {}) end, "bad argument #2 to 'result_type'")
  T.raises(function() cu.result_type("f32", "q8") end, "bad argument #2 to 'result_type' (unknown dtype")
  T.raises(function() cu.isdtype("f32", "floating") end, "bad argument #2 to 'isdtype' (unknown kind \"floating\"")
  T.raises(function() cu.isdtype("f32", {}) end, "bad argument #2 to 'isdtype'")
  T.raises(function() cu.isdtype("f32", 3) end, "bad argument #2 to 'isdtype'")
  T.raises(function() cu.isdtype("f32") end, "bad argument #2 to 'isdtype'")
  S.check_runtime()
end)

T.case("the standard's constants cu.e, cu.pi, cu.inf, cu.nan", function()
  T.eq(cu.e, math.exp(1))
  T.eq(cu.pi, math.pi)
  T.eq(cu.inf, math.huge)
  T.truthy(cu.nan ~= cu.nan, "cu.nan is a NaN")
  T.eq(cu.full({ 2 }, cu.inf):totable(), { math.huge, math.huge })
end)

os.exit(T.run())
