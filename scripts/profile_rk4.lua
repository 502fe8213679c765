-- Where the device time of an RK4 loop goes, line by line (cu.profile, docs/profiling.md).
--
-- The loop of scripts/device_resident_loop.lua (two coupled c64 N x N matrices F and G,
-- dF/dt = -2i F - i d (2G - 1), dG/dt = -i (conj(d) F - d conj(F)), d = mean(F) read after each
-- step) written three ways, each profiled:
--   B  plain array operations with out= (about 70 launches a step): the table by line shows which
--      operations cost the device most, and the idle gaps between the launches;
--   C  each RK4 stage one cu.elementwise kernel (CUDA only: NVRTC);
--   D  B's step captured once as a graph and launched once per step: the same kernels, no gaps.
--
--   culua scripts/profile_rk4.lua [n=512] [steps=50] [--quick]
-- Prints each version's profile, then a line per version (RESULT lines for the tests).

local script = require "cu.script"
local opt, flags = script.args(arg, "n=, steps= or --quick")
local gpu = cu.backend == "cuda"
local N = script.int(opt, "n", flags.quick and 16 or (gpu and 512 or 64))
local steps = script.int(opt, "steps", flags.quick and 4 or 50)
local NN, dt = N * N, 1e-4
local I, MINUS_I, MINUS_2I = cu.complex(0, 1), cu.complex(0, -1), cu.complex(0, -2)
print(string.format("profile_rk4: %d steps on two %dx%d c64 matrices, %s backend (%s)", steps, N, N, cu.backend,
  cu.devices()[cu.device() + 1].name))

local s = cu.stream()
local _ <close> = cu.use_stream(s)

local function new_state()
  local m = cu.arange(NN, "f64"):reshape(N, N)
  local st = {
    F = (cu.exp(m * cu.complex(0, 2 / NN)) * 0.1):astype("c64"),
    G = (m * (0.2 / NN)):astype("c64"),
    sum = cu.empty({}, "c64"),
  }
  for _, name in ipairs({ "Fa", "Ga", "Fb", "Gb", "X", "Y", "Xn", "Yn", "kF", "kG", "t" }) do
    st[name] = cu.empty({ N, N }, "c64")
  end
  return st
end

-- B: one RK4 stage with built-in operations. k = f(X, Y); Xn = F + h k (unless last);
-- b = a + w k (the running sum).
local function stage_ops(st, c, X, Y, h, Xn, Yn, w, aF, aG, bF, bG)
  local t, kF, kG = st.t, st.kF, st.kG
  cu.mul(Y, 2, { out = t })
  cu.sub(t, 1, { out = t })
  cu.mul(t, c.mid, { out = t })
  cu.mul(X, MINUS_2I, { out = kF })
  cu.add(kF, t, { out = kF })
  cu.conj(X, { out = t })
  cu.mul(t, c.id, { out = t })
  cu.mul(X, c.micd, { out = kG })
  cu.add(kG, t, { out = kG })
  if Xn then
    cu.mul(kF, h, { out = Xn })
    cu.add(Xn, st.F, { out = Xn })
    cu.mul(kG, h, { out = Yn })
    cu.add(Yn, st.G, { out = Yn })
  end
  cu.mul(kF, w, { out = t })
  cu.add(aF, t, { out = bF })
  cu.mul(kG, w, { out = t })
  cu.add(aG, t, { out = bG })
end

local function coefficients(d)
  return { mid = MINUS_I * d, id = I * d, micd = MINUS_I * d:conj() }
end

local function step_B(st, d)
  local c = coefficients(d)
  stage_ops(st, c, st.F, st.G, dt / 2, st.X, st.Y, dt / 6, st.F, st.G, st.Fa, st.Ga)
  stage_ops(st, c, st.X, st.Y, dt / 2, st.Xn, st.Yn, dt / 3, st.Fa, st.Ga, st.Fb, st.Gb)
  stage_ops(st, c, st.Xn, st.Yn, dt, st.X, st.Y, dt / 3, st.Fb, st.Gb, st.Fa, st.Ga)
  stage_ops(st, c, st.X, st.Y, nil, nil, nil, dt / 6, st.Fa, st.Ga, st.Fb, st.Gb)
  st.F, st.Fb = st.Fb, st.F
  st.G, st.Gb = st.Gb, st.G
end

-- C: each stage one generated kernel.
local step_C
if gpu then
  local K = [[
const cuda::std::complex<float> I(0.0f, 1.0f);
const cuda::std::complex<float> kF = -2.0f * I * X - I * d * (2.0f * Y - 1.0f);
const cuda::std::complex<float> kG = -I * (cuda::std::conj(d) * X - d * cuda::std::conj(X));
]]
  local stage = cu.elementwise(
    "c64 F, c64 G, c64 X, c64 Y, c64 aF, c64 aG, c64 d, f32 h, f32 w -> c64 Xn, c64 Yn, c64 bF, c64 bG",
    K .. "Xn = F + h * kF; Yn = G + h * kG; bF = aF + w * kF; bG = aG + w * kG;", { name = "rk4_stage" })
  local last = cu.elementwise("c64 X, c64 Y, c64 aF, c64 aG, c64 d, f32 w -> c64 bF, c64 bG",
    K .. "bF = aF + w * kF; bG = aG + w * kG;", { name = "rk4_last" })
  step_C = function(st, d)
    local F, G = st.F, st.G
    stage(F, G, F, G, F, G, d, dt / 2, dt / 6, { out = { st.X, st.Y, st.Fa, st.Ga } })
    stage(F, G, st.X, st.Y, st.Fa, st.Ga, d, dt / 2, dt / 3, { out = { st.Xn, st.Yn, st.Fb, st.Gb } })
    stage(F, G, st.Xn, st.Yn, st.Fb, st.Gb, d, dt, dt / 3, { out = { st.X, st.Y, st.Fa, st.Ga } })
    last(st.X, st.Y, st.Fa, st.Ga, d, dt / 6, { out = { st.Fb, st.Gb } })
    st.F, st.Fb = st.Fb, st.F
    st.G, st.Gb = st.Gb, st.G
  end
end

local function delta_of(st) return st.F:sum({ out = st.sum }):item() / NN end

-- A loop of `step` over the steps, profiled; the state's last delta for the check.
local function profile_loop(name, step)
  local st = new_state()
  local d = cu.complex(1, 0)
  step(st, d) -- warm: kernels compiled and loaded before the profile
  st = new_state()
  s:sync()
  local p = cu.profile(function()
    for _ = 1, steps do
      step(st, d)
      d = delta_of(st)
    end
  end)
  print(string.format("\n== version %s ==", name))
  p:print(8)
  return p, d
end

-- D: B's step with d from the device (a 0-d array the graph computes), one graph per parity.
local function step_D_state()
  local st = new_state()
  st.d = cu.full({}, cu.complex(1, 0), "c64")
  st.c = { mid = cu.empty({}, "c64"), id = cu.empty({}, "c64"), micd = cu.empty({}, "c64") }
  local function captured()
    cu.mul(st.d, MINUS_I, { out = st.c.mid })
    cu.mul(st.d, I, { out = st.c.id })
    cu.conj(st.d, { out = st.c.micd })
    cu.mul(st.c.micd, MINUS_I, { out = st.c.micd })
    stage_ops(st, st.c, st.F, st.G, dt / 2, st.X, st.Y, dt / 6, st.F, st.G, st.Fa, st.Ga)
    stage_ops(st, st.c, st.X, st.Y, dt / 2, st.Xn, st.Yn, dt / 3, st.Fa, st.Ga, st.Fb, st.Gb)
    stage_ops(st, st.c, st.Xn, st.Yn, dt, st.X, st.Y, dt / 3, st.Fb, st.Gb, st.Fa, st.Ga)
    stage_ops(st, st.c, st.X, st.Y, nil, nil, nil, dt / 6, st.Fa, st.Ga, st.Fb, st.Gb)
    st.F, st.Fb = st.Fb, st.F
    st.G, st.Gb = st.Gb, st.G
    st.F:sum({ out = st.sum })
    cu.div(st.sum, NN, { out = st.d })
  end
  local g = { cu.graph(captured, { name = "rk4 step (even)" }), cu.graph(captured, { name = "rk4 step (odd)" }) }
  return st, g
end

local results = {}
local function report(name, p, d)
  local top = p.lines[1]
  results[#results + 1] = string.format(
    "%-3s %8.3f ms device/step  busy %5.1f%% of %8.3f ms  %5d rows  top: %s (%.1f%%)",
    name, p.device_ms / steps, p.span_ms > 0 and 100 * p.busy_ms / p.span_ms or 0, p.span_ms, p.records,
    top and top.line or "-", top and 100 * top.share or 0)
  results[#results + 1] = script.line(name .. "_records", p.records)
  results[#results + 1] = script.line(name .. "_operations", p.operations)
  results[#results + 1] = script.line(name .. "_delta", string.format("%.9g,%.9g", d.re, d.im))
end

local pB, dB = profile_loop("B (plain operations)", step_B)
report("B", pB, dB)
if step_C then
  local pC, dC = profile_loop("C (a cu.elementwise kernel per stage)", step_C)
  report("C", pC, dC)
else
  print("\n== version C: needs NVRTC (the CUDA backend) ==")
end
do
  local st, g = step_D_state()
  g[1]:launch(s) -- uploaded before the profile; then the state again
  g[2]:launch(s)
  local fresh = new_state()
  cu.copy(st.F, fresh.F)
  cu.copy(st.G, fresh.G)
  st.d:fill(cu.complex(1, 0))
  s:sync()
  local d
  local p = cu.profile(function()
    for k = 1, steps do
      g[2 - k % 2]:launch(s)
      d = st.d:item()
    end
  end)
  print("\n== version D (B's step as a graph, one launch a step) ==")
  p:print(8)
  report("D", p, d)
end

print("\nper version:")
for _, line in ipairs(results) do print(line) end
