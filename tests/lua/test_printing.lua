-- tostring of arrays (numpy-like), of complex values, streams and events.
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

-- Collapses runs of white space to one space and drops spaces after "[" (numpy pads elements
-- to a common width).
local function norm(s)
  return (s:gsub("%s+", " "):gsub("%[ ", "["):gsub(" %]", "]"))
end

-- The element texts of a 1-D array's tostring.
local function elements(s)
  local body = s:match("^cu%.array%(%[(.*)%], shape=")
  T.truthy(body, "no [...] body in " .. s)
  local out = {}
  for item in body:gmatch("[^,]+") do out[#out + 1] = item:match("^%s*(.-)%s*$") end
  return out
end

T.case("1-D f32 array, exactly as in the contract", function()
  T.eq(tostring(cu.array({ 0, 1, 2 })), "cu.array([0., 1., 2.], shape={3}, dtype=f32, device)")
  T.eq(tostring(cu.arange(3)), "cu.array([0., 1., 2.], shape={3}, dtype=f32, device)")
end)

T.case("0-d arrays", function()
  T.eq(tostring(cu.array(3)), "cu.array(3., shape={}, dtype=f32, device)")
  T.eq(tostring(cu.array(3, "i32")), "cu.array(3, shape={}, dtype=i32, device)")
  T.eq(tostring(cu.array(true)), "cu.array(true, shape={}, dtype=bool, device)")
  T.eq(tostring(cu.array(-2.5, "f64")), "cu.array(-2.5, shape={}, dtype=f64, device)")
end)

T.case("integers print without a point", function()
  local vals = S.randints(5, -1000, 1000)
  local s = tostring(cu.array(vals, "i32"))
  T.eq(norm(s), "cu.array([" .. table.concat(vals, ", ") .. "], shape={5}, dtype=i32, device)")
  T.eq(norm(tostring(cu.array({ math.maxinteger, math.mininteger }, "i64"))),
    "cu.array([" .. math.maxinteger .. ", " .. math.mininteger .. "], shape={2}, dtype=i64, device)")
  for _, t in ipairs({ "i8", "i16", "i64", "u8", "u16", "u32", "u64" }) do
    T.eq(norm(tostring(cu.array({ 1, 2, 100 }, t))), "cu.array([1, 2, 100], shape={3}, dtype=" .. t .. ", device)")
  end
end)

T.case("bools print as true/false", function()
  T.eq(norm(tostring(cu.array({ true, false, true }))), "cu.array([true, false, true], shape={3}, dtype=bool, device)")
end)

T.case("floats print a text that reads back", function()
  local vals = S.randoms(8, -1000, 1000)
  local s = tostring(cu.array(vals, "f32"))
  local items = elements(s)
  T.eq(#items, 8)
  for i, item in ipairs(items) do
    local x = tonumber(item)
    T.truthy(x, "not a number: " .. item)
    T.eq(S.f32(x), S.f32(vals[i]), "element " .. i .. " printed as " .. item)
  end
  -- f64 prints with numpy's 8 significant digits
  local s64 = tostring(cu.array({ 1 / 3, 2 / 3 }, "f64"))
  T.truthy(s64:find("0.33333333", 1, true) and not s64:find("0.333333333", 1, true), s64)
  T.truthy(s64:find("0.66666667", 1, true), s64)
  T.eq(norm(tostring(cu.array({ 0.5, 0.25 }, "f64"))), "cu.array([0.5 , 0.25], shape={2}, dtype=f64, device)")
  T.eq(norm(tostring(cu.array({ 1, 2 }, "f64"))), "cu.array([1., 2.], shape={2}, dtype=f64, device)")
  T.eq(norm(tostring(cu.array({ -1, 2 }, "f16"))), "cu.array([-1., 2.], shape={2}, dtype=f16, device)")
  T.eq(norm(tostring(cu.array({ -1, 2 }, "bf16"))), "cu.array([-1., 2.], shape={2}, dtype=bf16, device)")
end)

T.case("nan and inf", function()
  local items = elements(tostring(cu.array({ 0 / 0, math.huge, -math.huge, 1.5 })))
  T.eq(items, { "nan", "inf", "-inf", "1.5" })
end)

T.case("complex values", function()
  T.eq(norm(tostring(cu.array({ cu.complex(1, 2), cu.complex(3, 0) }))),
    "cu.array([1.+2.j, 3.+0.j], shape={2}, dtype=c64, device)")
  local items = elements(tostring(cu.array({ cu.complex(1, -2), cu.complex(0.5, 0) }, "c128")))
  T.eq(items, { "1.-2.j", "0.5+0.j" })
end)

T.case("2-D arrays print one row per line", function()
  local s = tostring(cu.array({ { 1, 2 }, { 3, 4 } }, "i32"))
  local lines = {}
  for line in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  T.eq(#lines, 2, s)
  T.eq(norm(s), "cu.array([[1, 2], [3, 4]], shape={2,2}, dtype=i32, device)")
  T.truthy(lines[1]:find("^cu%.array%(%[%[1, 2%],$"), lines[1])
  -- the second row lines up under the first
  T.eq(lines[2]:find("[", 1, true), ("cu.array(["):len() + 1, lines[2])
  local vals = S.randints(12, 0, 9)
  local m = tostring(cu.array(S.matrix(vals, 3, 4), "i32"))
  local _, rows = m:gsub("\n", "")
  T.eq(rows, 2)
  local expect = {}
  for r = 1, 3 do
    expect[r] = "[" .. table.concat({ vals[r * 4 - 3], vals[r * 4 - 2], vals[r * 4 - 1], vals[r * 4] }, ", ") .. "]"
  end
  T.eq(norm(m), "cu.array([" .. table.concat(expect, ", ") .. "], shape={3,4}, dtype=i32, device)")
end)

T.case("3-D arrays separate blocks with a blank line", function()
  local s = tostring(cu.arange(8, "i32"):view(2, 2, 2))
  T.truthy(s:find("\n\n", 1, true), s)
  T.eq(norm(s), "cu.array([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], shape={2,2,2}, dtype=i32, device)")
end)

T.case("more than 1000 elements are summarized", function()
  T.eq(norm(tostring(cu.arange(1001, "i32"))),
    "cu.array([0, 1, 2, ..., 998, 999, 1000], shape={1001}, dtype=i32, device)")
  local full = tostring(cu.arange(1000, "i32"))
  T.truthy(not full:find("...", 1, true), "1000 elements are not summarized")
  T.truthy(full:find(" 500,", 1, true) and full:find(" 999]", 1, true))
  local big = tostring(cu.arange(1 << 20, "f32"))
  -- numpy switches to scientific notation when max/min > 1e3, and so does culua
  T.eq(norm(big), "cu.array([0.000000e+00, 1.000000e+00, 2.000000e+00, ..., 1.048573e+06, 1.048574e+06, " ..
    "1.048575e+06], shape={1048576}, dtype=f32, device)")
  local m = norm(tostring(cu.arange(1500, "i32"):view(50, 30)))
  T.eq(m, "cu.array([[0, 1, 2, ..., 27, 28, 29], [30, 31, 32, ..., 57, 58, 59], [60, 61, 62, ..., 87, 88, 89], " ..
    "..., [1410, 1411, 1412, ..., 1437, 1438, 1439], [1440, 1441, 1442, ..., 1467, 1468, 1469], " ..
    "[1470, 1471, 1472, ..., 1497, 1498, 1499]], shape={50,30}, dtype=i32, device)")
  -- a long thin array: only the long dimension is cut
  local thin = norm(tostring(cu.arange(2000, "i32"):view(1000, 2)))
  T.truthy(thin:find("^cu%.array%(%[%[0, 1%], %[2, 3%], %[4, 5%], %.%.%., "
    .. "%[1994, 1995%], %[1996, 1997%], %[1998, 1999%]%]"), thin)
end)

T.case("long rows wrap", function()
  local s = tostring(cu.arange(100, "i32"))
  local lines = {}
  for line in (s .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  T.truthy(#lines > 1, "100 elements on one line")
  for i = 1, #lines - 1 do T.truthy(#lines[i] <= 80, "line too long: " .. lines[i]) end
  T.eq(norm(s):match("%[(.*)%]"):gsub(",", ""):gsub("%s+", " "), table.concat((function()
    local t = {}
    for i = 0, 99 do t[#t + 1] = tostring(i) end
    return t
  end)(), " "))
end)

T.case("locations", function()
  T.truthy(tostring(cu.host.zeros(2)):find(", pageable%)$"), tostring(cu.host.zeros(2)))
  T.truthy(tostring(cu.host.zeros(2, { pinned = true })):find(", pinned%)$"))
  T.truthy(tostring(cu.zeros(2)):find(", device%)$"))
end)

T.case("empty arrays", function()
  T.eq(tostring(cu.zeros(0)), "cu.array([], shape={0}, dtype=f32, device)")
  T.eq(tostring(cu.zeros({ 2, 0 }, "i32")), "cu.array([], shape={2,0}, dtype=i32, device)")
end)

T.case("views print their own elements", function()
  local a = cu.array({ { 1, 2, 3 }, { 4, 5, 6 } }, "i32")
  T.eq(norm(tostring(a:transpose())), "cu.array([[1, 4], [2, 5], [3, 6]], shape={3,2}, dtype=i32, device)")
  T.eq(norm(tostring(a:narrow(2, 2, 2))), "cu.array([[2, 3], [5, 6]], shape={2,2}, dtype=i32, device)")
  T.eq(norm(tostring(a[2])), "cu.array([4, 5, 6], shape={3}, dtype=i32, device)")
  local big = cu.arange(3000, "i32"):view(1000, 3):transpose() -- {3,1000}, strided
  T.eq(norm(tostring(big)), "cu.array([[0, 3, 6, ..., 2991, 2994, 2997], [1, 4, 7, ..., 2992, 2995, 2998], " ..
    "[2, 5, 8, ..., 2993, 2996, 2999]], shape={3,1000}, dtype=i32, device)")
end)

T.case("tostring of a freed array does not fail", function()
  local a = cu.zeros(3)
  a:free()
  local s = tostring(a)
  T.truthy(s:find("freed", 1, true), s)
end)

T.case("cu.complex tostring", function()
  T.eq(tostring(cu.complex(1, 2)), "1+2j")
  T.eq(tostring(cu.complex(1, -2)), "1-2j")
  T.eq(tostring(cu.complex(1.5, 0)), "1.5+0j")
  T.eq(tostring(cu.complex(-0.5, -0.25)), "-0.5-0.25j")
  -- the imaginary part's sign once, -0.0 included (numpy: 0-0j); nan has no sign
  T.eq(tostring(cu.complex(0, -0.0)), "0-0j")
  T.eq(tostring(cu.complex(-0.0, -0.0)), "-0-0j")
  T.eq(tostring(cu.complex(-0.0, 0.0)), "-0+0j")
  T.eq(tostring(cu.complex(0, -math.huge)), "0-infj")
  T.eq(tostring(cu.complex(0, 0 / 0)), "0+nanj")
  T.eq(tostring(cu.complex(0, -(0 / 0))), "0+nanj")
end)

T.case("complex elements with a -0.0 imaginary part: one sign, in arrays and items", function()
  local a = cu.array({ cu.complex(0, -0.0), cu.complex(1, 2) }, "c64")
  T.eq(norm(tostring(a)), "cu.array([0.-0.j, 1.+2.j], shape={2}, dtype=c64, device)")
  T.eq(tostring(a[1]), "0-0j")
  T.eq(tostring(a:astype("c128")[1]), "0-0j")
  T.eq(tostring(a[1]:conj()), "0+0j")
end)

os.exit(T.run())
