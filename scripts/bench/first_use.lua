-- The first use of each built-in kernel module in a fresh process: the context (the first
-- cu.sync()), the first allocation, then the first fill, f64 fill, add, sum and cast, each timed
-- with the host clock around the call and a cu.sync(). CUDA loads a module when one of its kernels
-- first runs (lazy loading); docs/design.md says which file holds which kernels.
--   culua scripts/bench/first_use.lua        (run it several times: each run is one sample)
local function now() return cu.clock({ warn = false }) end
local t = { now() }
local function mark() t[#t + 1] = now() end
cu.sync(); mark()
local a = cu.empty(1); cu.sync(); mark()
a:fill(1); cu.sync(); mark()
cu.empty(1, "f64"):fill(2); cu.sync(); mark()
local x = a + a; cu.sync(); mark()
x:sum(); cu.sync(); mark()
cu.empty(1000):astype("bf16"); cu.sync(); mark()
local names = { "context", "first allocation", "fill", "fill f64", "add", "sum", "cast" }
for i, name in ipairs(names) do print(string.format("%-16s %8.3f ms", name, (t[i + 1] - t[i]) * 1e3)) end
