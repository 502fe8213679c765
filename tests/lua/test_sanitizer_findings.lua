-- Undefined behaviour that UBSan found in fuzz programs (tools/sanitize, docs/sanitizers.md). Each
-- case is clean in any build; under -fsanitize=undefined (no recovery) the old code aborted.
local T = require "cu.testing"

T.case("the most negative integer as an index is out of range (no negation overflow)", function()
  local a = cu.arange(3)
  T.raises(function() return a[math.mininteger] end, "out of range")
  T.raises(function() return a[math.mininteger + 1] end, "out of range")
  T.eq(a[-3], 0, "negative indices still count from the end")
  T.eq(a[-1], 2)
end)

T.case("the most negative integer as an axis is out of range (no negation overflow)", function()
  local a = cu.ones({ 2, 3 })
  T.raises(function() return a:sum({ axis = math.mininteger }) end, "out of range")
  T.eq(a:sum({ axis = -1 }):totable(), { 3, 3 }, "negative axes still count from the end")
end)

T.case("an empty array whose other dimensions' product overflows gets strides (no overflow)", function()
  local e = cu.empty({ 0, 3, 1 << 62 }, "u8")
  T.eq(e.size, 0)
  T.eq(e.shape, { 0, 3, 1 << 62 })
  T.eq(cu.zeros({ 2, 0, 3, 1 << 61 }, "u8").size, 0)
end)

T.case("cu.empty's bool arrays start false: kernels and indexing never load another byte", function()
  -- (ASan fills fresh allocations with byte 190: that is how UBSan saw the loads)
  for _, e in ipairs({ cu.empty(64, "bool"), cu.host.empty(64, "bool") }) do
    T.eq(e:sum():item(), 0)
    T.eq(type(e[1]), "boolean")
    T.eq((e + 1):sum():item(), 64)
    T.eq(e:fill(true):sum():item(), 64)
  end
end)

os.exit(T.run())
