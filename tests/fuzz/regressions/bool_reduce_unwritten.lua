-- Found by the fuzzer (seed 5096, an ASan+UBSan build): a comparison recorded in a graph and not
-- replayed leaves its bool output unwritten, and a full mean of that array loaded its bytes as C++
-- bools (src/kernels/reduce_host.cpp). ASan fills fresh memory with 0xbe; a byte other than 0 or 1
-- loaded as a bool is undefined behaviour (UBSan's report), and the sum of such bytes was their
-- value. Reductions now read bool elements as bytes, any nonzero byte true (as numpy), so the
-- count of true elements is at most the size whatever the array holds. (Without ASan the array
-- gets memory that held earlier arrays here: before the fix its sum was 436231 for 4096 elements.)
local n = 4096
for _ = 1, 3 do
  local x = cu.rand(n)
  local b
  local g = cu.graph(function() b = cu.lt(0.5, x) end)
  assert(b.dtype == "bool")
  local nz = b:astype("u8"):ne(0):sum():item()
  local sum, mean = b:sum():item(), b:mean():item()
  assert(sum == nz, "sum " .. sum .. " of a bool array whose nonzero bytes number " .. nz)
  assert(mean >= 0 and mean <= 1, "mean " .. mean)
  assert(b:any():item() == (nz > 0) and b:all():item() == (nz == n), "any/all")
  assert(b:max():item() == (nz > 0), "max")
  local v = b:var():item()
  assert(v >= 0 and v <= 0.25 + 1e-12, "var " .. v)
  g:launch()
  cu.sync()
  local want = x:gt(0.5):sum():item()
  assert(b:sum():item() == want, "after the launch: " .. b:sum():item() .. ", want " .. want)
  g:free()
end
print("ok")
