-- Classic mistake 5: copying every iteration instead of keeping the data on the device.
--
-- RK4 integration of two coupled complex64 N x N matrices F and G:
--   dF/dt = -2i F - i delta (2G - 1)
--   dG/dt = -i (conj(delta) F - delta conj(F))
-- with delta held fixed during a step and updated after it from the state: delta_0 = 1, then
--   delta <- sum(F) / N^2   (the mean of F)
-- The experiment as first posed used delta <- sum(F); with N^2 = 262144 elements that makes
-- delta grow by a factor of about N^2 * dt = 26 per step, so it overflows within a few dozen
-- steps. The mean keeps it bounded; the cost structure (a full reduction of F per step, one
-- complex number to the host) is the same.
-- Initial state (m = 0 .. N^2-1, row-major): F = 0.1 exp(2i m/N^2), G = 0.2 m/N^2 (real).
--
-- Version A, the naive loop: each step copies F and G to the host (a:to_host()) and sums F
-- there (a host-array reduction). Version B keeps everything on the device: ping-pong buffers,
-- out= for every operation (no allocation per step), the sum on the device, and one complex
-- number to the host per step (F:sum({out=s}):item()). Both run the same RK4 operations, so the
-- difference is the copies. On CUDA a third version (C) fuses each RK4 stage into one
-- cu.elementwise kernel (complex arithmetic with cuda::std::complex).
--
--   culua scripts/device_resident_loop.lua [n=512] [steps=1000] [dt=1e-4] [--quick] [--results] [--deltas]
-- --deltas prints every delta as RESULT delta_k=re,im for versions A and B (for the tests).

local opt, flags = {}, {}
for _, a in ipairs(arg or {}) do
  local k, v = a:match("^([%w_]+)=(.*)$")
  if k then
    opt[k] = v
  elseif a:match("^%-%-%w") then
    flags[a:sub(3)] = true
  else
    error("unknown argument '" .. a .. "' (expected key=value, --quick, --results or --deltas)", 0)
  end
end
local results = {}
local function result(key, value) results[#results + 1] = string.format("RESULT %s=%s", key, value) end
local function int(key, default) return math.tointeger(tonumber(opt[key])) or default end

local gpu = cu.backend == "cuda"
local N = int("n", flags.quick and 16 or (gpu and 512 or 64))
local steps = int("steps", flags.quick and 20 or (gpu and 1000 or 200))
local dt = tonumber(opt.dt) or 1e-4
local NN = N * N
local device = cu.devices()[cu.device() + 1]
print(string.format("device_resident_loop: RK4 on two %dx%d c64 matrices, %d steps of dt = %g, on the %s backend (%s)",
  N, N, steps, dt, cu.backend, device.name))

local s = cu.stream()
local _ <close> = cu.use_stream(s)

-- The initial state, computed in f64 and rounded to c64 once.
local m = cu.arange(NN, "f64"):reshape(N, N)
local F0 = (cu.exp(m * cu.complex(0, 2 / NN)) * 0.1):astype("c64")
local G0 = (m * (0.2 / NN)):astype("c64")
m:free()

local I, MINUS_I, MINUS_2I = cu.complex(0, 1), cu.complex(0, -1), cu.complex(0, -2)

-- The state of one run: F, G, and the buffers the step reuses (nothing is allocated per step).
local function new_state()
  local st = {}
  for _, name in ipairs({ "F", "G", "Fa", "Ga", "Fb", "Gb", "X1", "Y1", "X2", "Y2", "kF", "kG", "tmp" }) do
    st[name] = cu.empty({ N, N }, "c64")
  end
  cu.copy(st.F, F0)
  cu.copy(st.G, G0)
  st.sum = cu.empty({}, "c64")
  return st
end

-- kF = -2i X - i d (2Y - 1);  kG = -i (conj(d) X - d conj(X)) = -i conj(d) X + i d conj(X)
local function derivatives(st, X, Y, d)
  local tmp, kF, kG = st.tmp, st.kF, st.kG
  cu.mul(Y, 2, { out = tmp })
  cu.sub(tmp, 1, { out = tmp })
  cu.mul(tmp, MINUS_I * d, { out = tmp })
  cu.mul(X, MINUS_2I, { out = kF })
  cu.add(kF, tmp, { out = kF })
  cu.conj(X, { out = tmp })
  cu.mul(tmp, I * d, { out = tmp })
  cu.mul(X, MINUS_I * d:conj(), { out = kG })
  cu.add(kG, tmp, { out = kG })
end

-- Xn = F + h kF, Yn = G + h kG (the next stage's input; skipped when Xn is nil) and
-- bF = aF + w kF, bG = aG + w kG (the running RK4 sum, F + dt/6 (k1 + 2 k2 + 2 k3 + k4)).
local function combine(st, h, Xn, Yn, w, aF, aG, bF, bG)
  local tmp = st.tmp
  if Xn then
    cu.mul(st.kF, h, { out = Xn })
    cu.add(Xn, st.F, { out = Xn })
    cu.mul(st.kG, h, { out = Yn })
    cu.add(Yn, st.G, { out = Yn })
  end
  cu.mul(st.kF, w, { out = tmp })
  cu.add(aF, tmp, { out = bF })
  cu.mul(st.kG, w, { out = tmp })
  cu.add(aG, tmp, { out = bG })
end

-- One RK4 step with the built-in operations (about 70 kernel launches); the new state ends in
-- Fb/Gb, which then swap with F/G (ping-pong).
local function step_builtin(st, d)
  derivatives(st, st.F, st.G, d)
  combine(st, dt / 2, st.X1, st.Y1, dt / 6, st.F, st.G, st.Fa, st.Ga)
  derivatives(st, st.X1, st.Y1, d)
  combine(st, dt / 2, st.X2, st.Y2, dt / 3, st.Fa, st.Ga, st.Fb, st.Gb)
  derivatives(st, st.X2, st.Y2, d)
  combine(st, dt, st.X1, st.Y1, dt / 3, st.Fb, st.Gb, st.Fa, st.Ga)
  derivatives(st, st.X1, st.Y1, d)
  combine(st, nil, nil, nil, dt / 6, st.Fa, st.Ga, st.Fb, st.Gb)
  st.F, st.Fb = st.Fb, st.F
  st.G, st.Gb = st.Gb, st.G
end

-- The same step with one fused kernel per RK4 stage (CUDA only: run-time compiled).
local step_fused
if gpu then
  local DERIV = [[
const cuda::std::complex<float> I(0.0f, 1.0f);
const cuda::std::complex<float> kF = -2.0f * I * X - I * d * (2.0f * Y - 1.0f);
const cuda::std::complex<float> kG = -I * (cuda::std::conj(d) * X - d * cuda::std::conj(X));
]]
  local stage = cu.elementwise(
    "c64 F, c64 G, c64 X, c64 Y, c64 aF, c64 aG, c64 d, f32 h, f32 w -> c64 Xn, c64 Yn, c64 bF, c64 bG",
    DERIV .. [[
Xn = F + h * kF;
Yn = G + h * kG;
bF = aF + w * kF;
bG = aG + w * kG;
]], { name = "rk4_stage" })
  local last = cu.elementwise("c64 X, c64 Y, c64 aF, c64 aG, c64 d, f32 w -> c64 bF, c64 bG", DERIV .. [[
bF = aF + w * kF;
bG = aG + w * kG;
]], { name = "rk4_last_stage" })
  step_fused = function(st, d)
    local F, G = st.F, st.G
    stage(F, G, F, G, F, G, d, dt / 2, dt / 6, { out = { st.X1, st.Y1, st.Fa, st.Ga } })
    stage(F, G, st.X1, st.Y1, st.Fa, st.Ga, d, dt / 2, dt / 3, { out = { st.X2, st.Y2, st.Fb, st.Gb } })
    stage(F, G, st.X2, st.Y2, st.Fb, st.Gb, d, dt, dt / 3, { out = { st.X1, st.Y1, st.Fa, st.Ga } })
    last(st.X1, st.Y1, st.Fa, st.Ga, d, dt / 6, { out = { st.Fb, st.Gb } })
    st.F, st.Fb = st.Fb, st.F
    st.G, st.Gb = st.Gb, st.G
  end
end

-- delta after a step. A: copy F and G to the host (fresh pageable arrays, as a:to_host() gives)
-- and reduce there. B: reduce on the device into a 0-d array; one complex number comes back.
local function delta_host(st)
  local hF = st.F:to_host()
  local hG = st.G:to_host() -- copied "to look at", as a naive loop does; not needed for delta
  local z = hF:sum():item()
  hF:free()
  hG:free()
  return z / NN
end
local function delta_device(st)
  return st.F:sum({ out = st.sum }):item() / NN
end

local function run(step, delta, nsteps)
  local st = new_state()
  local deltas = {}
  local d = cu.complex(1, 0)
  s:sync()
  local l0 = cu.ledger()
  local ms = cu.time(function()
    for k = 1, nsteps do
      step(st, d)
      d = delta(st)
      deltas[k] = d
    end
  end, { stream = s })
  local l = cu.ledger() - l0
  for _, a in pairs(st) do a:free() end
  return { ms = ms, deltas = deltas, ledger = l }
end

-- Warm-up (first launches, kernel compilation, pool growth), then the measured runs.
local warm = math.min(steps, 3)
run(step_builtin, delta_host, warm)
run(step_builtin, delta_device, warm)
if step_fused then run(step_fused, delta_device, warm) end
local A = run(step_builtin, delta_host, steps)
local B = run(step_builtin, delta_device, steps)
local C = step_fused and run(step_fused, delta_device, steps)

local function maxdiff(x, y)
  local worst = 0
  for k = 1, steps do worst = math.max(worst, (x.deltas[k] - y.deltas[k]):abs()) end
  return worst
end
local diff_ab = maxdiff(A, B)
local diff_ac = C and maxdiff(A, C)
local final = B.deltas[steps]

print(string.format("\n%-52s %12s %12s %9s", "version", "total", "per step", "speed-up"))
local function line(name, r)
  print(string.format("%-52s %9.2f ms %9.3f ms %8.1fx", name, r.ms, r.ms / steps, A.ms / r.ms))
end
line("A: copy F and G to the host each step, sum there", A)
line("B: device-resident (ping-pong, out=, device sum)", B)
if C then line("C: B with one fused elementwise kernel per stage", C) end

print("\nper step (cu.ledger):      bytes to host  copies to host  synchronizations  allocations")
local function per(name, r)
  local l = r.ledger
  print(string.format("  %-22s %14.0f %15.1f %17.1f %12.1f", name, l.d2h_bytes / steps, l.d2h_calls / steps,
    l.syncs / steps, l.allocs / steps))
end
per("A (copies)", A)
per("B (device-resident)", B)
if C then per("C (fused)", C) end
result("a_d2h_bytes_per_step", A.ledger.d2h_bytes / steps)
result("b_d2h_bytes_per_step", B.ledger.d2h_bytes / steps)
result("b_allocs_per_step", B.ledger.allocs / steps)

print(string.format("\ndelta after %d steps: %.6f%+.6fi (|delta| = %.6f); max |delta_A - delta_B| over all steps = %.3e%s",
  steps, final.re, final.im, final:abs(), diff_ab, C and string.format(", A - C: %.3e", diff_ac) or ""))
assert(diff_ab < 1e-4, "versions A and B disagree")
if C then assert(diff_ac < 1e-4, "versions A and C disagree") end

print(string.format("\nA moves 2 x %d x 8 bytes = %.2f MB to the host every step and waits for it: each copy", NN,
  2 * NN * 8 / 1e6))
print("synchronizes (the device drains, then idles while the host copies and sums). B sends one complex")
print("number per step; its only synchronization is reading it. Keep state on the device, reduce there,")
print("and bring back scalars.")
if C then
  print("C shows the next step once the copies are gone: the step is a chain of small kernels, and")
  print("fusing each RK4 stage into one kernel cuts both the launches and the memory traffic.")
else
  print("(On the host backend copies are memcpy and the \"device\" is a CPU thread, so the gap is small;")
  print("on a GPU A also pays PCIe and a full device drain per step.)")
end

result("n", N)
result("steps", steps)
result("a_ms", string.format("%.6f", A.ms))
result("b_ms", string.format("%.6f", B.ms))
result("speedup", string.format("%.4f", A.ms / B.ms))
result("max_delta_diff", string.format("%.6e", diff_ab))
if C then
  result("c_ms", string.format("%.6f", C.ms))
  result("max_delta_diff_fused", string.format("%.6e", diff_ac))
end
if flags.deltas then
  for k = 1, steps do
    result(string.format("delta_a_%d", k), string.format("%.9g,%.9g", A.deltas[k].re, A.deltas[k].im))
    result(string.format("delta_b_%d", k), string.format("%.9g,%.9g", B.deltas[k].re, B.deltas[k].im))
  end
end
if flags.results or flags.deltas then print(table.concat(results, "\n")) end
