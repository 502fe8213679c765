-- Copies between devices: culua's cu.copy against culua-baseline's cudaMemcpyPeerAsync in the same
-- run, for every ordered pair of devices. Both sides: the copy on a stream of the destination
-- device, each of `reps` copies timed with events, the median GB/s.
--
--   culua scripts/bench/peer.lua [--bytes 64M] [--reps 20] [--out FILE.json]
--
-- culua-baseline must sit beside culua (a build folder) or be on the PATH. Needs two devices
-- (the host backend's simulated ones, CULUA_HOST_DEVICES=2, give culua's side alone).

local opt = { bytes = 64 << 20, reps = 20 }
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--bytes" and arg[i + 1] then
    local v, unit = arg[i + 1]:match("^(%d+)([KMG]?)$")
    if not v then error("peer.lua: --bytes takes a size like 64M, got " .. arg[i + 1], 0) end
    opt.bytes = math.tointeger(v) * ({ [""] = 1, K = 1 << 10, M = 1 << 20, G = 1 << 30 })[unit]
    i = i + 1
  elseif a == "--reps" and math.tointeger(tonumber(arg[i + 1])) then
    opt.reps = math.tointeger(tonumber(arg[i + 1]))
    i = i + 1
  elseif a == "--out" and arg[i + 1] then
    opt.out = arg[i + 1]
    i = i + 1
  else
    error("peer.lua: unknown argument " .. a .. " (--bytes SIZE, --reps N, --out FILE)", 0)
  end
  i = i + 1
end

local n = #cu.devices()
if n < 2 then
  print(string.format("peer.lua: %d device here; copies between devices need two", n))
  os.exit(77)
end

local function median(t)
  table.sort(t)
  local m = #t // 2
  return #t % 2 == 1 and t[m + 1] or (t[m] + t[m + 1]) / 2
end

-- culua: cu.copy(dst on j, src on i), queued on the destination's stream (cu.use_stream there).
local mine = {}
local count = opt.bytes // 4
for src_dev = 0, n - 1 do
  for dst_dev = 0, n - 1 do
    if src_dev ~= dst_dev then
      local src
      do
        local _ <close> = cu.use_device(src_dev)
        src = cu.ones(count, "f32")
      end
      local _ <close> = cu.use_device(dst_dev)
      local s = cu.stream()
      local _s <close> = cu.use_stream(s) -- luacheck: ignore 211 (held for its scope)
      local dst = cu.empty(count, "f32")
      cu.copy(dst, src)
      cu.copy(dst, src)
      s:sync()
      local t = {}
      for r = 1, opt.reps do
        local a = cu.event({ timing = true }):record(s)
        cu.copy(dst, src)
        local b = cu.event({ timing = true }):record(s)
        b:sync()
        t[r] = count * 4 / (a:elapsed(b) * 1e6)
      end
      mine[#mine + 1] = { src = src_dev, dst = dst_dev, GBps = median(t),
        link = cu.devices()[src_dev + 1].peers[dst_dev].link }
      assert(dst:min():item() == 1 and dst:max():item() == 1, "the copy delivered the data")
    end
  end
end

-- The native side.
local native = {}
if cu.backend == "cuda" then
  local i0 = -1
  while arg[i0 - 1] do i0 = i0 - 1 end -- arg[i0]: the culua program
  local dir = (arg[i0] or ""):match("^(.*)/[^/]*$") or "."
  local f = io.open(dir .. "/culua-baseline", "r")
  local exe = f and dir .. "/culua-baseline" or "culua-baseline"
  if f then f:close() end
  local p = io.popen(string.format("%s peer %d 2>&1", exe, opt.bytes))
  for line in p:lines() do
    local s, d, g = line:match('"src":(%d+),"dst":(%d+),.-"GBps":([%d%.]+)')
    if s then native[s .. ">" .. d] = tonumber(g) end
  end
  p:close()
end

print(string.format("copies between devices, %d MiB, median of %d (events on the destination's stream)",
  opt.bytes >> 20, opt.reps))
print(string.format("%6s %6s %8s %12s %12s %10s", "from", "to", "link", "culua GB/s", "native GB/s", "culua/nat"))
for _, r in ipairs(mine) do
  local nat = native[r.src .. ">" .. r.dst]
  r.native_GBps = nat
  r.ratio = nat and r.GBps / nat or nil
  print(string.format("%6d %6d %8s %12.1f %12s %10s", r.src, r.dst, r.link, r.GBps,
    nat and string.format("%.1f", nat) or "-", r.ratio and string.format("%.3f", r.ratio) or "-"))
end
if opt.out then
  local f = assert(io.open(opt.out, "w"))
  f:write(cu.json.encode({ backend = cu.backend, bytes = opt.bytes, reps = opt.reps, pairs = mine }), "\n")
  f:close()
end
