-- Checks a suite run's output folder (arg[1]): suite.json holds a culua figure (or an honest
-- absent record) for every operation of the contract, suite.md a targets table, and the figures
-- are positive and ordered (min <= median <= max); the graph figures are of graphs of 1000 nodes,
-- in their units, within sane bounds. arg[2]: "host" or "cuda" (what must be there).
local dir, backend = arg[1], arg[2] or "host"
local f = assert(io.open(dir .. "/suite.json", "rb"), "no suite.json")
local data = assert(cu.json.decode(f:read("a")))
f:close()
local md = assert(io.open(dir .. "/suite.md", "rb")):read("a")
assert(md:find("## Targets", 1, true), "suite.md has no targets table")

local function records(impl, op)
  local t = {}
  for _, r in ipairs(data.records) do
    if r.impl == impl and r.op == op then t[#t + 1] = r end
  end
  return t
end

local sizes = { bandwidth = data.config.bw_sizes, transfer = data.config.transfer_sizes,
  alloc = data.config.alloc_sizes, matmul = data.config.matmul_sizes, sort = { data.config.sort_keys },
  fft = { data.config.fft_points }, reduce = { data.config.reduce_bytes } }
local expected = {
  { "launch_add1k" }, { "enqueue_add1k" }, { "sync_add1k" },
  { "copy", "bandwidth" }, { "add", "bandwidth" }, { "sum", "bandwidth" }, { "cast", "bandwidth" },
  { "h2d_pinned", "transfer" }, { "d2h_pinned", "transfer" }, { "h2d_pageable", "transfer" },
  { "d2h_pageable", "transfer" }, { "alloc", "alloc" }, { "matmul_f32", "matmul" },
  { "matmul_bf16", "matmul" }, { "matmul_f64", "matmul" }, { "startup" }, { "context" },
  { "first_kernel" },
  -- The arrays group.
  { "sort_f32", "sort" }, { "sort_i32", "sort" }, { "argsort_f32", "sort" }, { "argsort_i32", "sort" },
  { "fft_c64", "fft" }, { "cumsum", "reduce" }, { "any", "reduce" }, { "any_bool", "reduce" }, { "std", "reduce" },
}
local launch_ops = { "launch_rtc0", "launch_rtc4", "launch_rtc8", "sync_empty" }
for _, op in ipairs(launch_ops) do expected[#expected + 1] = { op, nil, backend == "host" } end
-- Graphs: the empty run-time kernels are CUDA-only; the adds run on both backends.
for _, kind in ipairs({ "empty", "add1k" }) do
  for _, op in ipairs({ "graph_", "graph_capture_", "graph_instantiate_" }) do
    expected[#expected + 1] = { op .. kind, nil, backend == "host" and kind == "empty" }
  end
end

local problems = {}
local function problem(...) problems[#problems + 1] = string.format(...) end
for _, e in ipairs(expected) do
  local op, group, absent_ok = e[1], e[2], e[3]
  local rs = records("culua", op)
  local want = group and sizes[group] or { false }
  for _, size in ipairs(want) do
    local found
    for _, r in ipairs(rs) do
      if (size == false and r.size == nil) or r.size == size then found = r end
    end
    local where = op .. (size and (" at " .. size) or "")
    if not found then
      problem("no culua record for %s", where)
    elseif found.absent then
      if not absent_ok then problem("%s is absent: %s", where, found.absent) end
    elseif found.error then
      problem("%s failed: %s", where, found.error)
    elseif not (found.median > 0 and found.min <= found.median and found.median <= found.max
        and found.n >= 1 and found.unit) then
      problem("%s: implausible figure %s (%s..%s, n=%s)", where, found.median, found.min, found.max,
        found.n)
    end
  end
end
-- The graph records: 1000 nodes; per node in µs over whole replays; capture and instantiation in
-- ms, the instantiation part of the capture's time.
local function one(op)
  local r = records("culua", op)[1]
  if r and r.median then return r end
end
local replays = math.max(1, (data.machine.launches or 0) // 1000)
for _, kind in ipairs({ "empty", "add1k" }) do
  local replay, capture = one("graph_" .. kind), one("graph_capture_" .. kind)
  local instantiate = one("graph_instantiate_" .. kind)
  for _, r in pairs({ replay, capture, instantiate }) do -- pairs: absent ones are nil
    if r.nodes ~= 1000 then problem("%s: a graph of %s nodes, not 1000", r.op, r.nodes) end
  end
  if replay then
    if replay.unit ~= "us" then problem("%s: unit %s, not us", replay.op, replay.unit) end
    if replay.batch ~= replays * 1000 then
      problem("%s: %s nodes per repetition, not %d", replay.op, replay.batch, replays * 1000)
    end
    if replay.median >= 1000 then problem("%s: %g µs per node", replay.op, replay.median) end
  end
  for _, r in pairs({ capture, instantiate }) do
    if r.unit ~= "ms" then problem("%s: unit %s, not ms", r.op, r.unit) end
    if r.median >= 60000 then problem("%s: %g ms", r.op, r.median) end
  end
  if capture and instantiate and instantiate.median > capture.median then
    problem("%s: the instantiation (%g ms) took longer than capture + instantiation (%g ms)",
      instantiate.op, instantiate.median, capture.median)
  end
end
-- The host group: culua's host backend and the native loops at every size; numpy at every size
-- or absent (a machine without numpy).
local host_sizes, host_matmul = data.config.host_sizes, data.config.host_matmul_sizes
local function absent_impl(impl)
  for _, r in ipairs(data.records) do
    if r.impl == impl and r.absent and not r.op then return true end
  end
end
for _, impl in ipairs({ "culua", "native_host", "numpy" }) do
  if not (impl == "numpy" and absent_impl("numpy")) then
    local ops = { host_copy = host_sizes, host_add = host_sizes, host_sum = host_sizes,
      host_transpose = host_sizes }
    if impl ~= "native_host" then
      ops.host_matmul_f32, ops.host_matmul_f64 = host_matmul, host_matmul
    end
    for op, op_sizes in pairs(ops) do
      for _, size in ipairs(op_sizes or {}) do
        local found
        for _, r in ipairs(records(impl, op)) do
          if r.size == size then found = r end
        end
        if not found then
          problem("no %s record for %s at %s", impl, op, size)
        elseif found.error then
          problem("%s %s at %s failed: %s", impl, op, size, found.error)
        elseif not (found.median and found.median > 0 and found.min <= found.median
            and found.median <= found.max and found.unit == (op:match("matmul") and "GFLOP/s" or "GB/s")) then
          problem("%s %s at %s: implausible figure %s %s", impl, op, size, found.median, found.unit)
        end
      end
    end
  end
end
if not (host_sizes and #host_sizes > 0 and host_matmul and #host_matmul > 0) then
  problem("suite.json: no host sizes in its config")
end
assert(type(data.machine) == "table" and data.machine.backend == backend,
  "suite.json: machine.backend is not " .. backend)
assert(#data.targets > 0, "suite.json has no targets")
if #problems > 0 then error("suite output incomplete:\n  " .. table.concat(problems, "\n  "), 0) end
print(string.format("suite output complete: %d records, %d targets", #data.records, #data.targets))
