-- Checks a suite run's output folder (arg[1]): suite.json holds a culua figure (or an honest
-- absent record) for every operation of the contract, suite.md a targets table, and the figures
-- are positive and ordered (min <= median <= max). arg[2]: "host" or "cuda" (what must be there).
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
  alloc = data.config.alloc_sizes, matmul = data.config.matmul_sizes }
local expected = {
  { "launch_add1k" }, { "enqueue_add1k" }, { "sync_add1k" },
  { "copy", "bandwidth" }, { "add", "bandwidth" }, { "sum", "bandwidth" }, { "cast", "bandwidth" },
  { "h2d_pinned", "transfer" }, { "d2h_pinned", "transfer" }, { "h2d_pageable", "transfer" },
  { "d2h_pageable", "transfer" }, { "alloc", "alloc" }, { "matmul_f32", "matmul" },
  { "matmul_bf16", "matmul" }, { "matmul_f64", "matmul" }, { "startup" }, { "context" },
  { "first_kernel" },
}
local launch_ops = { "launch_rtc0", "launch_rtc4", "launch_rtc8", "sync_empty" }
for _, op in ipairs(launch_ops) do expected[#expected + 1] = { op, nil, backend == "host" } end

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
assert(type(data.machine) == "table" and data.machine.backend == backend,
  "suite.json: machine.backend is not " .. backend)
assert(#data.targets > 0, "suite.json has no targets")
if #problems > 0 then error("suite output incomplete:\n  " .. table.concat(problems, "\n  "), 0) end
print(string.format("suite output complete: %d records, %d targets", #data.records, #data.targets))
