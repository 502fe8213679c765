-- The allocation and small-operation paths' own cost, for culua-launch-profile --null-device under
-- callgrind (see bench/launch_profile.cpp: device allocation, frees and elementwise operations do
-- nothing there, so what is counted is culua's own work):
--   valgrind --tool=callgrind build/culua-launch-profile --null-device \
--     scripts/bench/alloc_profile.lua N FORM
-- runs FORM N times from a Lua loop, as the suite's rows do (scripts/bench/suite.lua):
--   empty        cu.empty(4096, 'u8'):free()            (the alloc group)
--   add          cu.add(a, b, {out = c}), 1024 f32      (launch_add1k)
--   add_reused   cu.add(a, b, opts), opts = {out = c}   (launch_add1k_reused)
--   sum          a:sum(), 4 Mi f32, a new result each call  (the bandwidth group's sum)
--   sum_out      a:sum({out = r}), r made once
-- Instructions per call = the difference between two counts, divided by the calls added.
local n = math.tointeger(tonumber(arg[1])) or 10000
local form = arg[2] or "empty"
local s = cu.stream()
if form == "empty" then
  for _ = 1, n do cu.empty(4096, "u8"):free() end
elseif form == "add" or form == "add_reused" then
  local _ <close> = cu.use_stream(s)
  local a, b, c = cu.empty(1024), cu.empty(1024), cu.empty(1024)
  if form == "add" then
    for _ = 1, n do cu.add(a, b, { out = c }) end
  else
    local reused = { out = c }
    for _ = 1, n do cu.add(a, b, reused) end
  end
elseif form == "sum" or form == "sum_out" then
  local _ <close> = cu.use_stream(s)
  local a = cu.empty(4 * 1024 * 1024)
  if form == "sum" then
    for _ = 1, n do a:sum() end
  else
    local opts = { out = cu.empty({}) }
    for _ = 1, n do a:sum(opts) end
  end
else
  error("alloc_profile.lua: unknown form " .. form .. " (empty, add, add_reused, sum, sum_out)", 0)
end
cu.sync()
