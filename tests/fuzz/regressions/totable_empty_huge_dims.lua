-- Found by the fuzzer (tools/fuzz, seed 1460): a:totable() of an empty array with a huge
-- dimension before its 0 ({2^62, 0, 3}) built empty tables until memory ran out (a hang). It is
-- now an error; empty arrays of reasonable shapes still give their nested empty tables.
local a = cu.zeros({2 ^ 62, 0, 3})
assert(a.size == 0)
local ok, err = pcall(a.totable, a)
assert(not ok, "totable of shape {2^62, 0, 3} must fail")
assert(tostring(err):find("would make more than 16777216 Lua tables", 1, true), tostring(err))
assert(cu.error_kind(err) == "value")
ok, err = pcall(function() return cu.zeros({2 ^ 40, 2 ^ 20, 0}):totable() end)
assert(not ok and tostring(err):find("Lua tables", 1, true), tostring(err))

local t = cu.zeros({4, 0}):totable()
assert(#t == 4 and #t[1] == 0 and #t[4] == 0)
t = cu.zeros({3, 0, 2 ^ 62}):totable()
assert(#t == 3 and #t[2] == 0)
t = cu.arange(24, "i32"):view({2, 3, 4}):totable()
assert(t[2][3][4] == 23 and #t == 2 and #t[1] == 3 and #t[1][1] == 4)
assert(#cu.zeros(0):totable() == 0)
-- arrays with elements are not limited: one table per row, as many as the array has rows
t = cu.zeros({2 ^ 24 + 1, 1}, "u8"):totable()
assert(#t == 2 ^ 24 + 1 and t[2 ^ 24 + 1][1] == 0)
print("ok")
