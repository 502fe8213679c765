-- The classic experiments (scripts/*.lua): each runs as a child culua on this test's backend with
-- small sizes (--quick) and prints machine-readable `RESULT key=value` lines (--results); the
-- tests check the numbers, not only the exit code.
local T = require "cu.testing"

local function culua_path()
  local i = 0
  while arg[i - 1] ~= nil do i = i - 1 end
  return arg[i]
end
local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local ROOT = arg[0]:match("^(.*)/tests/lua/[^/]*$") or "."

-- Under compute-sanitizer (tests/run_gpu_sanitizer.sh) a child inherits the sanitizer's
-- NVTX_INJECTION64_PATH: its first NVTX range (cu.trace, streams_overlap.lua) loads the sanitizer's
-- collection library, which waits for the sanitizer, busy with this process, which waits for the
-- child: a deadlock (H200, 2026-11-29; without the variable the child ends in a second). The
-- child runs without it (the experiments are sanitized on their own as well).
local CHILD_ENV = (os.getenv("CULUA_UNDER_SANITIZER") == "1" and os.getenv("NVTX_INJECTION64_PATH"))
  and "env -u NVTX_INJECTION64_PATH " or ""

-- Runs scripts/<name>.lua with `args`; returns the RESULT table, stdout, stderr.
local function run_script(name, args)
  local err_path = os.tmpname()
  local cmd = string.format(CHILD_ENV .. "%s --backend %s %s %s 2>%s", shell_quote(culua_path()), cu.backend,
    shell_quote(ROOT .. "/scripts/" .. name .. ".lua"), args, shell_quote(err_path))
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = io.open(err_path, "r")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(err_path)
  if code ~= 0 then
    error(string.format("%s exited with %s\n--- stdout\n%s\n--- stderr\n%s", name, tostring(code), out, err), 2)
  end
  local r = {}
  for key, value in out:gmatch("RESULT ([%w_]+)=([^\n]*)") do r[key] = tonumber(value) or value end
  return r, out, err
end

local function num(r, key)
  local v = r[key]
  if type(v) ~= "number" then error(string.format("RESULT %s missing or not a number: %s", key, tostring(v)), 2) end
  return v
end

-- A strict JSON parser (enough to check that a trace file is well-formed): returns the value.
local function parse_json(text)
  local pos = 1
  local function fail(msg) error(string.format("invalid JSON at byte %d: %s", pos, msg), 0) end
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local value
  local function str()
    pos = pos + 1
    local parts = {}
    while true do
      local c = text:sub(pos, pos)
      if c == "" then fail("unterminated string") end
      if c == '"' then pos = pos + 1; return table.concat(parts) end
      if c == "\\" then
        local e = text:sub(pos + 1, pos + 1)
        local map = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
        if map[e] then
          parts[#parts + 1] = map[e]
          pos = pos + 2
        elseif e == "u" and text:sub(pos + 2, pos + 5):match("^%x%x%x%x$") then
          parts[#parts + 1] = "?"
          pos = pos + 6
        else
          fail("bad escape")
        end
      elseif c:byte() < 32 then
        fail("control character in string")
      else
        parts[#parts + 1] = c
        pos = pos + 1
      end
    end
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local obj = {}
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1; return obj end
      while true do
        ws()
        if text:sub(pos, pos) ~= '"' then fail("expected a key") end
        local k = str()
        ws()
        if text:sub(pos, pos) ~= ":" then fail("expected ':'") end
        pos = pos + 1
        obj[k] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return obj end
        if d ~= "," then fail("expected ',' or '}'") end
      end
    elseif c == "[" then
      pos = pos + 1
      local arr = {}
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then fail("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    else
      local lit = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if lit and #lit > 0 then
        pos = pos + #lit
        return assert(tonumber(lit), "bad number " .. lit)
      end
      for word, v in pairs({ ["true"] = true, ["false"] = false, ["null"] = "null" }) do
        if text:sub(pos, pos + #word - 1) == word then
          pos = pos + #word
          return v
        end
      end
      fail("unexpected character '" .. c .. "'")
    end
  end
  local v = value()
  ws()
  if pos <= #text then fail("trailing characters") end
  return v
end

T.case("json parser (used for the trace check)", function()
  local v = parse_json('{"a": [1, 2.5, -3e2, "x\\"y"], "b": {"c": true, "d": null}}')
  T.eq(v.a, { 1, 2.5, -300, 'x"y' })
  T.eq(v.b.c, true)
  T.raises(function() parse_json('{"a": [1, 2,]}') end, "invalid JSON")
  T.raises(function() parse_json('{"a": 1} x') end, "trailing")
end)

T.case("async_timing: the loop looks free, the copy and the events see the cost", function()
  local r, out, err = run_script("async_timing", "--quick --results")
  local counts = {}
  local rows = {}
  local pattern = "RESULT N(%d+)=loop_host_ms:([%d%.]+),copy_host_ms:([%d%.]+),loop_event_ms:([%d%.]+)"
  for N, lh, ch, le in out:gmatch(pattern) do
    counts[#counts + 1] = tonumber(N)
    rows[#rows + 1] = { N = tonumber(N), loop_host = tonumber(lh), copy_host = tonumber(ch), loop_event = tonumber(le) }
  end
  T.truthy(#rows >= 3, "at least three N: " .. out)
  local last, prev, first = rows[#rows], rows[#rows - 1], rows[1]
  -- Event time grows with N, about linearly: the time per product at the two largest N within a
  -- factor of 5 (generous: the CI machine is shared, and a busy core slows a run by 3x).
  T.truthy(last.loop_event > first.loop_event, "event time grows with N")
  local per_last, per_prev = last.loop_event / last.N, prev.loop_event / prev.N
  T.truthy(per_last < 5 * per_prev and per_prev < 5 * per_last,
    string.format("per product %.4f ms at N=%d vs %.4f ms at N=%d", per_last, last.N, per_prev, prev.N))
  -- The host clock around the loop saw far less than the device did; the copy back waited for it.
  T.truthy(last.loop_host < 0.5 * last.loop_event,
    string.format("loop host %.3f ms vs events %.3f ms", last.loop_host, last.loop_event))
  T.truthy(last.copy_host > 0.5 * last.loop_event,
    string.format("copy back %.3f ms vs loop events %.3f ms", last.copy_host, last.loop_event))
  T.truthy(num(r, "result_rel_err") < 1e-4, "result checked")
  T.truthy(num(r, "cu_time_ms") > 0, "cu.time")
  T.eq(num(r, "ledger_loop_syncs"), 0, "the loop does not synchronize")
  T.eq(num(r, "ledger_loop_launches"), last.N, "one launch per product")
  T.eq(num(r, "ledger_copy_d2h_bytes"), num(r, "n") ^ 2 * 4, "the copy back moves the matrix")
  T.truthy(num(r, "ledger_copy_implicit_syncs") >= 1, "the pageable copy synchronizes implicitly")
  -- The same loops as graphs: N nodes each, one launch that only queues, the same product.
  local graphs = {}
  for N, nodes, cap, inst, lh, ge in out:gmatch("RESULT G(%d+)=nodes:(%d+),capture_ms:([%d%.]+),"
    .. "instantiate_ms:([%d%.]+),launch_host_ms:([%d%.]+),graph_event_ms:([%d%.]+)") do
    graphs[tonumber(N)] = { nodes = tonumber(nodes), capture = tonumber(cap), instantiate = tonumber(inst),
      launch_host = tonumber(lh), event = tonumber(ge) }
  end
  for _, row in ipairs(rows) do
    local g = graphs[row.N]
    T.truthy(g, "a graph row for N=" .. row.N .. ": " .. out)
    T.eq(g.nodes, row.N, "one node per product")
    T.truthy(g.event > 0 and g.capture > 0 and g.instantiate >= 0 and g.launch_host >= 0,
      "graph figures at N=" .. row.N)
  end
  T.truthy(graphs[last.N].event > graphs[first.N].event, "the graph's event time grows with N")
  T.truthy(graphs[last.N].launch_host < 0.5 * graphs[last.N].event,
    string.format("graph launch host %.3f ms vs events %.3f ms", graphs[last.N].launch_host, graphs[last.N].event))
  T.truthy(num(r, "graph_result_rel_err") < 1e-4, "the graph's result checked")
  T.truthy(out:find("captured once as a graph", 1, true), "graph table printed")
  -- The host clock read while the loop is still queued trips culua's warning (once per call site).
  T.truthy(err:find("warning: cu.clock() at ", 1, true) and err:find("async_timing.lua:", 1, true),
    "the clock tripwire warned: " .. err)
  local _, warnings = err:gsub("warning: cu.clock%(%)", "")
  T.eq(warnings, 1, "one warning: the clock read right after the loop (once per call site)")
end)

T.case("arithmetic_intensity: bytes, FLOPs and intensity as computed; results agree", function()
  local r = run_script("arithmetic_intensity", "--quick --results")
  T.eq(num(r, "h2d_bytes"), 4000 * 5 * 4 + 100 * 4000 * 5 * 4)
  T.eq(num(r, "d2h_bytes"), 100 * 4000 * 5 * 4)
  T.eq(num(r, "flops"), 100 * 4000 * 5)
  T.near(num(r, "intensity_link"), 2e6 / 16.08e6, 1e-8)
  T.near(num(r, "intensity_naive"), 1 / 12, 1e-8)
  T.eq(num(r, "max_diff"), 0)
  for _, k in ipairs({ "cpu_ms", "kernel_ms", "pinned_ms", "pageable_ms" }) do
    T.truthy(num(r, k) > 0, k)
  end
  T.eq(num(r, "ledger_h2d_bytes"), num(r, "h2d_bytes"), "the ledger counted the uploads")
  T.eq(num(r, "ledger_d2h_bytes"), num(r, "d2h_bytes"), "the ledger counted the download")
  T.eq(num(r, "ledger_pinned_bytes"), num(r, "h2d_bytes") + num(r, "d2h_bytes"), "all of it pinned")
  T.eq(num(r, "ledger_pageable_bytes"), 0)
end)

T.case("first_call_costs: pinned and pageable copies deliver the data; device random numbers", function()
  local r, out = run_script("first_call_costs", "--quick --results children=1")
  T.eq(num(r, "pageable_ok"), 1)
  T.eq(num(r, "pinned_ok"), 1)
  T.eq(r.rand_shape, "1000x1000")
  T.truthy(num(r, "rand_min") >= 0 and num(r, "rand_max") < 1, "range [0, 1)")
  T.near(num(r, "rand_mean"), 0.5, 0.005, "mean of a million uniforms")
  T.eq(num(r, "rand_host_device_mismatches"), 0, "host and device generate the same numbers")
  for _, k in ipairs({ "context_first_op_ms", "context_second_op_ms", "alloc_first_ms", "alloc_pooled_ms",
    "h2d_pageable_ms", "h2d_pinned_ms", "d2h_pageable_ms", "d2h_pinned_ms", "device_rand_ms", "host_rand_ms" }) do
    T.truthy(num(r, k) >= 0, k)
  end
  T.truthy(out:find("first device op in a new process", 1, true), "table printed")
end)

T.case("streams_overlap: outputs sum to 1, overlap in [0, 1], a valid trace", function()
  local trace = os.tmpname()
  local r, out = run_script("streams_overlap", "--quick --results trace=" .. shell_quote(trace))
  T.eq(num(r, "arrays"), 10)
  T.truthy(num(r, "max_sum_error") < 1e-4, "each normalized array sums to 1")
  T.truthy(num(r, "max_rel_error") < 1e-4, "each is its input over its sum")
  T.truthy(num(r, "span_shared_ms") > 0 and num(r, "span_streams_ms") > 0, "spans")
  do
    for _, k in ipairs({ "overlap_streams", "overlap_shared" }) do
      T.truthy(num(r, k) >= 0 and num(r, k) <= 1, k .. " is a fraction")
    end
    T.eq(r.trace, trace)
    T.truthy(out:find("Trace written to " .. trace, 1, true), "the path is printed")
    local f = assert(io.open(trace, "r"))
    local text = f:read("a")
    f:close()
    local doc = parse_json(text)
    local events = doc.traceEvents or doc
    T.truthy(type(events) == "table" and #events >= 10 * 4, "at least one event per operation: " .. #events)
    local copies, kernels, ranges = 0, 0, 0
    for _, e in ipairs(events) do
      if e.ph == "X" and e.cat == "copy" then copies = copies + 1 end
      if e.ph == "X" and e.cat == "kernel" then kernels = kernels + 1 end
      if e.ph == "X" and e.cat == "range" then ranges = ranges + 1 end
    end
    T.eq(copies, 2 * 10, "two copies per array in the traced run")
    T.eq(kernels, 2 * 10, "two kernels per array (sum, divide) in the traced run")
    T.eq(ranges, 1, "the cu.range of the traced run")
  end
  os.remove(trace)
end)

-- RK4 of the same system in plain Lua (f64, element by element: with delta fixed during a step
-- the elements are independent), for a few steps on a tiny N.
local function reference_deltas(N, steps, dt)
  local NN = N * N
  local function mul(a, b) return { a[1] * b[1] - a[2] * b[2], a[1] * b[2] + a[2] * b[1] } end
  local function add(a, b) return { a[1] + b[1], a[2] + b[2] } end
  local function scale(a, s) return { a[1] * s, a[2] * s } end
  local function conj(a) return { a[1], -a[2] } end
  local MI = { 0, -1 }
  local function f(x, y, d) -- -2i x - i d (2y - 1)
    return add(mul({ 0, -2 }, x), mul(mul(MI, d), add(scale(y, 2), { -1, 0 })))
  end
  local function g(x, _, d) -- -i (conj(d) x - d conj(x))
    return mul(MI, add(mul(conj(d), x), scale(mul(d, conj(x)), -1)))
  end
  local F, G = {}, {}
  for m = 0, NN - 1 do
    local phi = 2 * m / NN
    F[m + 1] = { 0.1 * math.cos(phi), 0.1 * math.sin(phi) }
    G[m + 1] = { 0.2 * m / NN, 0 }
  end
  local d = { 1, 0 }
  local out = {}
  for k = 1, steps do
    local sum = { 0, 0 }
    for e = 1, NN do
      local x, y = F[e], G[e]
      local k1f, k1g = f(x, y, d), g(x, y, d)
      local x2, y2 = add(x, scale(k1f, dt / 2)), add(y, scale(k1g, dt / 2))
      local k2f, k2g = f(x2, y2, d), g(x2, y2, d)
      local x3, y3 = add(x, scale(k2f, dt / 2)), add(y, scale(k2g, dt / 2))
      local k3f, k3g = f(x3, y3, d), g(x3, y3, d)
      local x4, y4 = add(x, scale(k3f, dt)), add(y, scale(k3g, dt))
      local k4f, k4g = f(x4, y4, d), g(x4, y4, d)
      F[e] = add(x, scale(add(add(k1f, scale(k2f, 2)), add(scale(k3f, 2), k4f)), dt / 6))
      G[e] = add(y, scale(add(add(k1g, scale(k2g, 2)), add(scale(k3g, 2), k4g)), dt / 6))
      sum = add(sum, F[e])
    end
    d = scale(sum, 1 / NN)
    out[k] = d
  end
  return out
end

T.case("device_resident_loop: the delta sequences agree with each other and a plain-Lua RK4", function()
  -- dt larger than the script's default so that a few steps move delta visibly.
  local N, steps, dt = 3, 6, 0.05
  local r = run_script("device_resident_loop", string.format("n=%d steps=%d dt=%g --deltas", N, steps, dt))
  local ref = reference_deltas(N, steps, dt)
  T.truthy(math.abs(ref[steps][1] - ref[1][1]) + math.abs(ref[steps][2] - ref[1][2]) > 1e-3, "delta moves")
  local function delta(v, k)
    local re, im = tostring(r[string.format("delta_%s_%d", v, k)]):match("^([^,]+),([^,]+)$")
    T.truthy(re, "delta " .. v .. " " .. k)
    return tonumber(re), tonumber(im)
  end
  for k = 1, steps do
    for _, v in ipairs({ "a", "b", "d" }) do
      local re, im = delta(v, k)
      T.near(re, ref[k][1], 1e-5, string.format("Re delta_%s at step %d", v, k))
      T.near(im, ref[k][2], 1e-5, string.format("Im delta_%s at step %d", v, k))
    end
    -- D (the graph) gives B's sequence: the same operations, delta divided by N^2 on the device.
    local bre, bim = delta("b", k)
    local dre, dim = delta("d", k)
    T.truthy(math.abs(bre - dre) <= 1.5e-8 and math.abs(bim - dim) <= 1.5e-8,
      string.format("delta_b and delta_d at step %d: %.9g%+.9gi vs %.9g%+.9gi", k, bre, bim, dre, dim))
  end
  T.truthy(num(r, "max_delta_diff") < 1e-6, "A and B agree")
  T.truthy(num(r, "max_delta_diff_graph") <= 1.5e-8, "B and D agree")
end)

T.case("profile_rk4: each version profiled, its rows on lines, the same deltas as a plain-Lua RK4", function()
  local N, steps = 3, 6
  local r, out = run_script("profile_rk4", string.format("n=%d steps=%d", N, steps))
  local ref = reference_deltas(N, steps, 1e-4)[steps]
  local versions = cu.backend == "cuda" and { "B", "C", "D" } or { "B", "D" }
  for _, v in ipairs(versions) do
    local re, im = tostring(r[v .. "_delta"]):match("^([^,]+),([^,]+)$")
    T.near(tonumber(re), ref[1], 1e-6, "Re delta of " .. v)
    T.near(tonumber(im), ref[2], 1e-6, "Im delta of " .. v)
  end
  -- B: about 64 operations and the sum a step, each a row (more on CUDA: a sum is two kernels).
  T.truthy(num(r, "B_records") >= 66 * steps, "B's rows: " .. r.B_records)
  -- D: one launch a step (a graph); its rows are the graph's kernels (CUDA) or the graph (host).
  T.truthy(num(r, "D_operations") <= 2 * steps and num(r, "B_operations") >= 64 * steps, "operations")
  T.truthy(num(r, "D_records") >= steps, "D's rows")
  T.truthy(out:find("by line", 1, true) and out:find("profile_rk4.lua:%d+"), "the tables by line")
end)

T.case("device_resident_loop: quick run, A and B agree, B copies one scalar per step", function()
  local r, out = run_script("device_resident_loop", "--quick --results")
  local N = num(r, "n")
  T.truthy(num(r, "max_delta_diff") < 1e-5, "A and B agree")
  if r.max_delta_diff_fused then T.truthy(num(r, "max_delta_diff_fused") < 1e-5, "A and C agree") end
  T.truthy(num(r, "a_ms") > 0 and num(r, "b_ms") > 0 and num(r, "speedup") > 0, "timings")
  T.eq(num(r, "a_d2h_bytes_per_step"), 2 * N * N * 8, "A copies F and G every step")
  T.eq(num(r, "b_d2h_bytes_per_step"), 8, "B copies one c64 per step")
  T.eq(num(r, "b_allocs_per_step"), 0, "B allocates nothing per step")
  T.truthy(out:find("speed-up", 1, true), "table printed")
  -- D: B's step as a graph, one launch and one delta read per step, the same delta sequence.
  local steps = num(r, "steps")
  T.truthy(num(r, "max_delta_diff_graph") <= 1.5e-8, "B and D agree: " .. r.max_delta_diff_graph)
  T.truthy(num(r, "max_delta_diff_graph_every") <= 1.5e-8, "B and D' agree: " .. r.max_delta_diff_graph_every)
  T.truthy(num(r, "d_ms") > 0 and num(r, "d_ms_per_step") > 0 and num(r, "d_speedup_vs_b") > 0, "D's timings")
  T.near(num(r, "d_ms_per_step"), num(r, "d_ms") / steps, 1e-5, "D's time per step")
  T.near(num(r, "d_speedup_vs_b"), num(r, "b_ms") / num(r, "d_ms"), 1e-3 * num(r, "d_speedup_vs_b"), "D vs B")
  T.truthy(num(r, "dk_ms") > 0 and num(r, "dk_ms_per_step") > 0 and num(r, "dk_speedup_vs_b") > 0, "D''s timings")
  T.eq(num(r, "d_graph_launches_per_step"), 1, "one graph launch per step")
  T.eq(num(r, "d_d2h_bytes_per_step"), 8, "D copies one c64 per step")
  T.eq(num(r, "d_allocs_per_step"), 0, "D allocates nothing per step")
  T.truthy(num(r, "d_kernel_launches_per_step") >= num(r, "b_kernel_launches_per_step"),
    "the graph runs B's kernels (and computes delta's coefficients)")
  T.truthy(num(r, "d_nodes") > 0, "nodes")
  T.eq(num(r, "d_pair_nodes"), 2 * num(r, "d_nodes"), "the two-step graph has twice the nodes")
  T.truthy(num(r, "d_capture_ms") > 0 and num(r, "d_instantiate_ms") >= 0, "capture and instantiation")
  T.truthy(num(r, "b_device_ms_per_step") > 0 and num(r, "d_device_ms_per_step") > 0, "the device's own time")
  local every = num(r, "dk_every")
  T.eq(num(r, "dk_reads"), (steps + every - 1) // every, "D' reads delta every k steps")
  T.truthy(out:find("D's graph:", 1, true), "D's graph described")
  -- D2: the same operations on two streams inside the graph (fork and join), the same deltas.
  T.truthy(num(r, "max_delta_diff_graph_two_streams") <= 1.5e-8,
    "B and D2 agree: " .. r.max_delta_diff_graph_two_streams)
  T.eq(num(r, "d2_nodes"), num(r, "d_nodes"), "D2 captures the same operations")
  T.truthy(num(r, "d2_ms") > 0 and num(r, "d2_device_ms_per_step") > 0, "D2's timings")
  T.near(num(r, "d2_speedup_vs_b"), num(r, "b_ms") / num(r, "d2_ms"), 1e-3 * num(r, "d2_speedup_vs_b"),
    "D2 vs B")
end)

T.case("multi_gpu: every device count checked (the script asserts the normalization), figures", function()
  local r, out = run_script("multi_gpu", "--quick --results")
  T.eq(num(r, "max_gpus"), #cu.devices())
  T.eq(r.nccl, tostring(cu.nccl.available()))
  for G = 1, #cu.devices() do
    T.truthy(num(r, "ms_" .. G) > 0 and num(r, "resident_ms_" .. G) > 0, "times of " .. G)
  end
  T.eq(num(r, "speedup_1"), 1)
  T.truthy(out:find("data on the devices", 1, true), "table printed")
end)

T.case("graphs: per-node cost of a graph against eager launches, every node ran", function()
  local plot
  if os.execute("command -v gnuplot >/dev/null 2>&1") then
    plot = os.tmpname()
    os.remove(plot)
    plot = plot .. ".png"
  end
  local r, out = run_script("graphs", "--quick --results" .. (plot and " plot=" .. shell_quote(plot) or ""))
  T.eq(r.counts, "1,10,100,1000")
  for _, n in ipairs({ 1, 10, 100, 1000 }) do
    T.eq(num(r, "nodes_" .. n), n, "a chain of " .. n .. " is a graph of " .. n .. " nodes")
    T.eq(num(r, "kernels_per_launch_" .. n), n, "one launch runs " .. n .. " operations (ledger)")
    if r.op == "add" then T.eq(num(r, "added_" .. n), 2 * n, "two launches added " .. 2 * n) end
    for _, k in ipairs({ "eager_us_", "graph_us_per_node_", "graph_us_per_launch_", "speedup_", "capture_ms_" }) do
      T.truthy(num(r, k .. n) > 0, k .. n)
    end
    T.truthy(num(r, "instantiate_ms_" .. n) >= 0, "instantiate_ms_" .. n)
    T.near(num(r, "graph_us_per_launch_" .. n), n * num(r, "graph_us_per_node_" .. n),
      1e-5 * n * num(r, "graph_us_per_node_" .. n) + 1e-5, "per launch = per node x nodes")
    T.near(num(r, "speedup_" .. n), num(r, "eager_us_" .. n) / num(r, "graph_us_per_node_" .. n),
      1e-3 * num(r, "speedup_" .. n), "speed-up")
  end
  -- Generous: a node of a long chain costs some 10x less than an eager launch on both backends.
  T.truthy(num(r, "graph_us_per_node_1000") < num(r, "eager_us_1000"),
    string.format("graph %.3f us/node vs eager %.3f us/launch", r.graph_us_per_node_1000, r.eager_us_1000))
  T.truthy(out:find("graph, us/node", 1, true), "table printed")
  if plot then
    T.eq(r.plot, plot)
    local f = io.open(plot, "rb")
    T.truthy(f, "the plot was written")
    T.eq(f:read(8), "\137PNG\r\n\26\n", "a PNG")
    f:close()
    os.remove(plot)
  end
end)

T.case("tuning: every candidate reported, the faulting and wrong ones never win, a plot", function()
  local plot
  if os.execute("command -v gnuplot >/dev/null 2>&1") then
    plot = os.tmpname()
    os.remove(plot)
    plot = plot .. ".png"
  end
  local r, out = run_script("tuning", "--quick --results" .. (plot and " plot=" .. shell_quote(plot) or ""))
  local total = num(r, "matmul_candidates")
  T.eq(num(r, "matmul_ok") + num(r, "matmul_failed") + num(r, "matmul_rejected"), total, "every candidate has a status")
  T.truthy(num(r, "matmul_ok") >= 1, "some candidates ran")
  T.truthy(num(r, "matmul_best_ms") > 0 and num(r, "sum_best_ms") > 0, "times")
  if cu.backend == "host" then
    T.eq(total, 15)
    T.eq(num(r, "matmul_rejected"), 3, "3 bands do not divide the rows: rejected")
    T.eq(num(r, "matmul_failed"), 0)
    T.truthy(not r.matmul_best:find("bands:3,", 1, true), r.matmul_best)
    T.eq(num(r, "sum_candidates"), 3)
  else
    -- TILE 16 with 32x8 threads stops the compile; TILE 64 (isolated runs only) faults
    T.truthy(num(r, "matmul_failed") >= 1, "failed candidates")
    T.truthy(not r.matmul_best:find("TILE:64", 1, true), r.matmul_best)
    if out:find("isolated (one child process each)", 1, true) then
      T.truthy(num(r, "matmul_failed") >= 5, "the 4 faulting TILE 64 candidates and the compile error")
    end
    T.eq(num(r, "sum_candidates"), 10)
  end
  T.truthy(out:find("| status", 1, true) and out:find("ok, best", 1, true), "the tables are printed")
  if plot then
    T.eq(r.plot, plot)
    local f = io.open(plot, "rb")
    T.truthy(f and f:read(4) == "\x89PNG", "a PNG")
    if f then f:close() end
    os.remove(plot)
  end
end)

os.exit(T.run())
