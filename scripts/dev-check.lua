local s = cu.stream()
local function t(fn, reps)
  for _=1,2 do fn() end
  local e0, e1 = cu.event(), cu.event()
  local v = {}
  for i=1,(reps or 10) do e0:record(s); fn(); e1:record(s); v[i] = e0:elapsed(e1) end
  table.sort(v); return v[(#v+1)//2]
end
local n = 1 << 28
local a = cu.rand(n, {stream=s}); local b = cu.rand(n, {stream=s}); local c = cu.empty(n, {stream=s})
local ms = t(function() cu.add(a, b, {out=c, stream=s}) end)
print(string.format("add f32: %.1f GB/s", 12*n/(ms*1e6)))
local m = a:view({n//4096, 4096}); local r = b:narrow(1,1,4096); local cm = c:view({n//4096,4096})
ms = t(function() cu.add(m, r, {out=cm, stream=s}) end)
print(string.format("add row bcast: %.1f GB/s", 8*n/(ms*1e6)))
ms = t(function() cu.add(m, b:narrow(1,1,n//4096):view({n//4096,1}), {out=cm, stream=s}) end)
print(string.format("add col bcast: %.1f GB/s", 8*n/(ms*1e6)))
ms = t(function() cu.add(m:transpose(), 1, {out=cm:view({4096, n//4096}), stream=s}) end)
print(string.format("transposed + 1: %.1f GB/s", 8*n/(ms*1e6)))
ms = t(function() cu.rand(n, {stream=s}) end)
print(string.format("rand f32: %.1f GB/s", 4*n/(ms*1e6)))
ms = t(function() cu.randn(n, {stream=s}) end)
print(string.format("randn f32: %.1f GB/s", 4*n/(ms*1e6)))
a, b, c, m, cm = nil; collectgarbage()
for _, dt in ipairs({"f32","bf16"}) do
  local N = 8192
  local x = cu.rand({N,N}, dt, {stream=s}); local y = cu.rand({N,N}, dt, {stream=s}); local z = cu.empty({N,N}, dt, {stream=s})
  ms = t(function() cu.matmul(x, y, {out=z, stream=s}) end, 5)
  print(string.format("matmul %s: %.1f TFLOP/s", dt, 2*N^3/(ms*1e9)))
end
