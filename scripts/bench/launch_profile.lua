-- The launch path's own cost, for culua-launch-profile under callgrind (see bench/launch_profile.cpp):
--   valgrind --tool=callgrind build/culua-launch-profile scripts/bench/launch_profile.lua N [ARGS] [configured]
-- launches an empty kernel with ARGS (0, 4 or 8) arguments N times from a Lua loop, as k(cfg, ...)
-- or, with "configured", through k:configure(cfg).
local n = math.tointeger(tonumber(arg[1])) or 10000
local nargs = math.tointeger(tonumber(arg[2])) or 0
local m = cu.compile([[extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, const float* b, float c, int n) {}
extern "C" __global__ void empty8(float* a, const float* b, float c, int n, float* d, const float* e, double f, long long g) {}
]])
local a = cu.empty(256)
local cfg = { grid = 1, block = 1, stream = cu.stream() } -- as the suite's
local k = m["empty" .. nargs]
local kc = k:configure(cfg)
-- The loops are closures written out per arity, as the suite's (scripts/bench/suite.lua) are: the
-- line lookup of a launch's site costs what it costs there.
local run
if arg[3] == "configured" then
  if nargs == 0 then
    run = function(count) for _ = 1, count do kc() end end
  elseif nargs == 4 then
    run = function(count) for _ = 1, count do kc(a, a, 1.5, 256) end end
  else
    run = function(count) for _ = 1, count do kc(a, a, 1.5, 256, a, a, 2.5, 7) end end
  end
elseif nargs == 0 then
  run = function(count) for _ = 1, count do k(cfg) end end
elseif nargs == 4 then
  run = function(count) for _ = 1, count do k(cfg, a, a, 1.5, 256) end end
else
  run = function(count) for _ = 1, count do k(cfg, a, a, 1.5, 256, a, a, 2.5, 7) end end
end
run(n)
