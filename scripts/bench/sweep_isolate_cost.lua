-- The cost of an isolated sweep point (cu.sweep{isolate = true}; docs/sweep.md#isolated-points):
-- wall time per point of a sweep of trivial points run in-process and isolated (each in a child
-- culua that runs this script again up to the sweep: process start, the backend's start, the
-- replay of the sweeps before it), beside a bare `culua -e ''` start. Prints the median and range
-- over the rounds. Every timed thing is a sweep, so the children replay it instead of timing again.
--   culua [--backend cuda|host] scripts/bench/sweep_isolate_cost.lua [POINTS [ROUNDS]]
local points = math.tointeger(tonumber(arg[1] or 20))
local rounds = math.tointeger(tonumber(arg[2] or 5))
if not points or points < 1 or not rounds or rounds < 1 then
  io.stderr:write("usage: culua scripts/bench/sweep_isolate_cost.lua [POINTS [ROUNDS]] (integers >= 1)\n")
  os.exit(2)
end
local first = 0
while arg[first - 1] do first = first - 1 end
local exe = arg[first]
local values = {}
for i = 1, points do values[i] = i end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function per_point(name, options)
  local spec = {name = name, axes = {{"i", values}}, quiet = true,
    run = function(p) return {v = p.i} end}
  for k, v in pairs(options or {}) do spec[k] = v end
  return cu.sweep(spec).seconds * 1e3 / points
end

local bare_command = quote(exe) .. " --backend " .. cu.backend .. " -e '' </dev/null"
local figures = {bare = {}, in_process = {}, isolated = {}}
for _ = 1, rounds do
  figures.bare[#figures.bare + 1] = per_point("bare_start",
    {run = function() assert(os.execute(bare_command)) end})
  figures.in_process[#figures.in_process + 1] = per_point("in_process")
  figures.isolated[#figures.isolated + 1] = per_point("isolated", {isolate = true})
end

local function summary(list)
  table.sort(list)
  return ("%8.2f ms  (%.2f .. %.2f)"):format(list[(#list + 1) // 2], list[1], list[#list])
end
print(("isolated sweep points, %s backend, %d points x %d rounds: median per point (range)"):format(
  cu.backend, points, rounds))
print("culua -e '' (os.execute)   " .. summary(figures.bare))
print("in-process point          " .. summary(figures.in_process))
print("isolated point            " .. summary(figures.isolated))
