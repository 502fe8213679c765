-- Graphs (cu.graph): capture of every op family, launch and replay against eager references,
-- update, lifetimes under the collector, operations that cannot be captured (each ends the capture
-- cleanly and leaves the runtime usable), the ledger, the trace and cu.bench. Runs on both
-- backends (lua.host.test_graph, lua.cuda.test_graph).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local N = 1000

-- Values of a 1-D array as a Lua list.
local function values(a) return a:totable() end

-- A graph still captures and launches on the current stream (after an error).
local function check_graphs_work(what)
  local x = cu.arange(8, "f32")
  local y = cu.zeros(8)
  local g = cu.graph(function() cu.mul(x, 3, { out = y }) end)
  g:launch()
  T.eq(values(y), { 0, 3, 6, 9, 12, 15, 18, 21 }, (what or "after the error") .. ": a new graph")
  g:free()
end

-- fn() raises an error containing every needle; then the runtime and graphs still work.
local function capture_fails(fn, needles, what)
  S.raises(function() cu.graph(fn) end, needles, what)
  check_graphs_work(what)
end

T.case("nothing runs at capture; launch runs the work; fields and tostring", function()
  local a = cu.arange(N, "f32")
  local b = cu.ones(N)
  local c = cu.zeros(N)
  local g = cu.graph(function()
    cu.add(a, b, { out = c })
    cu.mul(c, 2, { out = c })
  end, { name = "step" })
  T.eq(c[N], 0, "capturing ran nothing")
  T.eq(g.nodes >= 2, true, "nodes: " .. g.nodes)
  T.eq(g.name, "step")
  T.eq(g.launches, 0)
  T.eq(type(g.instantiate_ms), "number")
  T.eq(type(g.capture_ms), "number")
  T.eq(g.device, 0)
  T.eq(g.arrays, 3)
  T.eq(g.bytes, 3 * N * 4)
  T.eq(g.freed, false)
  T.truthy(tostring(g):find("cu.Graph 'step'", 1, true), tostring(g))
  T.truthy(g.site:find("test_graph.lua", 1, true), g.site)
  g:launch()
  T.eq(c[1], 2)
  T.eq(c[N], 2 * N)
  T.eq(g.launches, 1)
  T.eq(g:launch(), g, "launch returns the graph")
end)

T.case("replay(n) launches n times", function()
  local acc = cu.zeros(N, "i32")
  local g = cu.graph(function() cu.add(acc, 1, { out = acc }) end)
  g:replay(250)
  T.eq(acc[1], 250)
  T.eq(acc:sum():item(), 250 * N)
  g:replay(0)
  T.eq(acc[N], 250)
  T.eq(g.launches, 250)
  g:launch():launch()
  T.eq(acc[N], 252)
end)

T.case("every op family is captured and matches the eager result", function()
  cu.seed(11)
  local x = cu.rand({ 16, 16 }, "f64")
  local y = cu.randn({ 16, 16 }, "f64")
  local v = cu.linspace(-1, 1, 64, "f32")
  local eager = {}
  local function work(out)
    out.add = x + y
    out.unary = cu.tanh(x) + y:abs()
    out.where = cu.where(cu.gt(x, 0.5), x, y)
    out.sum = x:sum()
    out.axis = y:sum({ axis = 2 })
    out.max = v:max()
    out.argmax = v:argmax()
    out.mean = v:mean()
    out.matmul = cu.matmul(x, y)
    out.dot = cu.dot(v, v)
    out.cast = x:astype("f32")
    out.transposed = x:transpose(1, 2):contiguous()
    out.filled = cu.full({ 3, 4 }, 7.5, "f64")
    out.seq = cu.arange(10, "i64")
    local z = cu.zeros({ 16, 16 }, "f64")
    cu.copy(z, x)
    z[3] = 9
    out.copy = z
    out.rand = cu.rand(32)
    out.randn = cu.randn(32, "f64")
  end
  cu.seed(5)
  work(eager)
  local captured = {}
  cu.seed(5)
  local g = cu.graph(work, { captured })
  T.eq(g.nodes >= 16, true, "nodes: " .. g.nodes)
  g:launch()
  for k, e in pairs(eager) do
    T.eq(captured[k]:totable(), e:totable(), k)
  end
  -- A second launch recomputes the same values (the inputs did not change).
  g:launch()
  T.eq(captured.matmul:totable(), eager.matmul:totable(), "matmul after a second launch")
end)

T.case("each launch draws new random numbers, continuing the captured sequence", function()
  local n = 64
  cu.seed(21)
  local e1 = cu.rand(n):totable()
  local e2 = cu.rand(n):totable()
  local function same(x, y)
    if #x ~= #y then return false end
    for i = 1, #x do
      if x[i] ~= y[i] then return false end
    end
    return true
  end
  cu.seed(21)
  local r = cu.empty(n)
  local g = cu.graph(function() cu.rand(n, { out = r }) end)
  local after = cu.rand(n):totable()
  g:launch()
  T.eq(r:totable(), e1, "the first launch draws what the call would have drawn eagerly")
  g:launch()
  T.eq(r:totable(), e2, "the second launch draws the numbers after those")
  T.truthy(not same(after, e2), "eager draws after the capture skip the graph's numbers")
  -- Two draws per launch, on two streams.
  cu.seed(21)
  local a, b = cu.empty(n), cu.empty(n, "f64")
  local s2 = cu.stream()
  local g2 = cu.graph(function()
    cu.rand(n, { out = a })
    s2:wait(cu.event():record())
    cu.randn(n, "f64", { out = b, stream = s2 })
    cu.current_stream():wait(cu.event():record(s2))
  end)
  g2:replay(1)
  T.eq(a:totable(), e1)
  cu.seed(21)
  cu.rand(n)
  T.eq(b:totable(), cu.randn(n, "f64"):totable(), "the second draw of the launch")
  g2:launch()
  T.truthy(not same(a:totable(), e1), "the next launch draws others")
end)

T.case("arrays created inside live as long as the graph, with their contents", function()
  local a = cu.arange(N, "f32")
  local out
  local g = cu.graph(function()
    local t = a * 2
    out = t + 1
  end)
  collectgarbage()
  collectgarbage()
  -- Memory freed by mistake would be handed out again here and overwritten.
  local filler = {} -- luacheck: ignore 241 (holds the arrays that reuse freed memory)
  for i = 1, 8 do filler[i] = cu.full(N, -5, "f32") end
  g:launch()
  T.eq(out[1], 1)
  T.eq(out[N], 2 * (N - 1) + 1)
  local arrays = g.arrays
  T.eq(arrays, 3, "a, t and out")
  out = nil -- luacheck: ignore 311 (drops the Lua reference: the graph must keep out)
  collectgarbage()
  g:launch()
  T.eq(g.arrays, arrays, "the graph keeps t and out without a Lua reference")
end)

T.case("inputs referenced only by the graph survive the collector", function()
  local result = cu.zeros(N, "f32")
  local g
  do
    local a = cu.full(N, 3, "f32")
    local b = cu.full(N, 4, "f32")
    g = cu.graph(function() cu.mul(a, b, { out = result }) end)
  end
  collectgarbage()
  collectgarbage()
  local filler = {} -- luacheck: ignore 241 (holds the arrays that reuse freed memory)
  for i = 1, 8 do filler[i] = cu.full(N, 99, "f32") end
  g:launch()
  T.eq(result[1], 12)
  T.eq(result[N], 12)
end)

T.case("an array closed inside the graph's function keeps its memory for the graph", function()
  local a = cu.arange(N, "f32")
  local c = cu.zeros(N)
  local g = cu.graph(function()
    local t <close> = a * 2
    cu.add(t, 1, { out = c })
  end)
  g:launch()
  T.eq(c[N], 2 * (N - 1) + 1)
end)

T.case("freeing an array a graph uses is an error naming the graph", function()
  local a = cu.ones(N)
  local c = cu.zeros(N)
  local g = cu.graph(function() cu.add(a, a, { out = c }) end, { name = "keeper" })
  S.raises(function() a:free() end, { "graph 'keeper'", "g:free()" })
  S.raises(function() c:free() end, "graph 'keeper'")
  g:launch()
  T.eq(c[N], 2)
  g:free()
  T.eq(g.freed, true)
  a:free()
  T.eq(a.freed, true)
  T.eq(tostring(g), "cu.Graph(<freed>)")
  S.raises_released(function() g:launch() end)
  S.raises_released(function() return g.nodes end)
  g:free() -- idempotent
end)

T.case("<close> frees a graph", function()
  local a = cu.ones(N)
  do
    local g <close> = cu.graph(function() cu.add(a, 1, { out = a }) end)
    g:launch()
  end
  a:free()
  T.eq(a.freed, true)
end)

T.case("launch on another stream is ordered after the arrays' allocation", function()
  local s = cu.stream()
  local producer = cu.stream()
  local a = cu.zeros(N, "f32", { stream = producer })
  cu.sleep(50, { stream = producer })
  a:fill(5, { stream = producer })
  local c = cu.zeros(N)
  local g = cu.graph(function() cu.mul(a, 2, { out = c }) end)
  producer:sync()
  g:launch(s)
  s:sync()
  T.eq(c[N], 10)
end)

T.case("copies to and from pinned host memory are captured", function()
  local h_in = cu.host.array({ 1, 2, 3, 4 }, "f32", { pinned = true })
  local h_out = cu.host.zeros(4, "f32", { pinned = true })
  local d = cu.zeros(4, "f32")
  local g = cu.graph(function()
    cu.copy(d, h_in)
    cu.mul(d, 10, { out = d })
    cu.copy(h_out, d)
  end)
  g:launch()
  T.eq(h_out:totable(), { 10, 20, 30, 40 }, "the host read waits for the launch")
  h_in[2] = 7
  g:launch()
  T.eq(h_out:totable(), { 10, 70, 30, 40 }, "each launch reads the pinned input again")
end)

T.case("fork and join across streams with events", function()
  local s2 = cu.stream()
  local x = cu.arange(N, "f32")
  local y = cu.zeros(N)
  local z = cu.zeros(N)
  local g = cu.graph(function()
    local fork = cu.event():record()
    s2:wait(fork)
    cu.mul(x, 2, { out = y, stream = s2 })
    cu.mul(x, 3, { out = z })
    local join = cu.event():record(s2)
    cu.current_stream():wait(join)
    cu.add(y, z, { out = z })
  end)
  g:launch()
  T.eq(z[N], 5 * (N - 1))
  -- The joined stream works eagerly again.
  cu.add(x, 1, { out = y, stream = s2 })
  s2:sync()
  T.eq(y[N], N)
end)

T.case("a stream that joins and never joins back fails the capture cleanly", function()
  local s2 = cu.stream()
  local x = cu.ones(N)
  capture_fails(function()
    s2:wait(cu.event():record())
    cu.add(x, 1, { out = x, stream = s2 })
  end, { "join" })
  cu.add(x, 1, { out = x, stream = s2 })
  s2:sync()
  T.eq(x[1], 2, "nothing of the failed capture ran; the stream works")
end)

T.case("operations that cannot be captured raise naming the operation and the line", function()
  local a = cu.arange(N, "f32")
  local pinned = cu.host.zeros(N, "f32", { pinned = true })
  local s = cu.stream()
  local outside = cu.event():record(s)
  local cases = {
    { "element read", function() return a[1] end, "reading an element" },
    { "item", function() return a:sum():item() end, "reading an element" },
    { "totable", function() return a:totable() end, "waits for or queries the device" },
    { "tostring", function() return tostring(a) end, "waits for or queries the device" },
    { "to_host", function() return a:to_host() end, "pageable" },
    { "pageable array", function() return cu.array({ 1, 2, 3 }) end, "pageable" },
    { "cu.sync", function() cu.sync() end, "cu.sync" },
    { "s:sync", function() s:sync() end, "stream:sync()" },
    { "s:done", function() return s:done() end, "stream:done()" },
    { "e:sync", function() outside:sync() end, "event:sync()" },
    { "e:done", function() return outside:done() end, "event:done()" },
    { "elapsed", function() return outside:elapsed(outside) end, "event:elapsed()" },
    { "cu.clock", function() return cu.clock() end, "cu.clock()" },
    { "cu.time", function() return cu.time(function() end) end, "cu.time" },
    { "host math", function() return pinned + 1 end, "runs on the CPU" },
    { "host element", function() return pinned[1] end, "runs on the CPU" },
    { "outside stream", function() cu.add(a, 1, { stream = s }) end, "not part of the capture" },
    { "outside event", function() cu.current_stream():wait(outside) end, "outside the capture" },
    { "nested graph", function() cu.graph(function() end) end, "inside the capture" },
    { "error", function() error("boom in the graph") end, "boom in the graph" },
  }
  for _, c in ipairs(cases) do
    local msg = T.raises(function() cu.graph(c[2]) end, c[3], c[1])
    T.truthy(msg:find("test_graph.lua:%d+"), c[1] .. ": the message names the line: " .. msg)
    S.check_runtime(c[1])
  end
  check_graphs_work("after every failed capture")
  -- The stream that was captured on is usable eagerly.
  local b = cu.zeros(N)
  cu.add(a, 1, { out = b })
  T.eq(b[N], N)
end)

T.case("a graph cannot be launched inside another capture", function()
  local a = cu.ones(N)
  local g = cu.graph(function() cu.add(a, 1, { out = a }) end)
  capture_fails(function() g:launch() end, "cannot be launched while a graph is captured")
  g:launch()
  T.eq(a[1], 2)
end)

T.case("events recorded inside a capture mark a point of the graph", function()
  local e
  local a = cu.ones(N)
  local g = cu.graph(function()
    e = cu.event():record()
    cu.add(a, 1, { out = a })
  end)
  g:launch()
  S.raises(function() e:sync() end, "marks a point inside the graph")
  S.raises(function() cu.current_stream():wait(e) end, "marks a point inside the graph")
  e:record()
  e:sync()
  T.eq(a[1], 2)
end)

T.case("update: new scalars and arrays in place, other topology re-instantiated", function()
  local a = cu.arange(N, "f32")
  local b = cu.arange(N, "f32")
  local c = cu.zeros(N)
  local function scaled(x, k) cu.mul(x, k, { out = c }) end
  local g = cu.graph(scaled, { a, 2 })
  g:launch()
  T.eq(c[N], 2 * (N - 1))
  T.eq(g:update(scaled, { b, 5 }), "updated")
  T.eq(g.updates, 1)
  g:launch()
  T.eq(c[N], 5 * (N - 1))
  T.eq(g:update(function() cu.mul(a, 2, { out = c }); cu.add(c, 1, { out = c }) end),
    "reinstantiated")
  T.eq(g.reinstantiations, 1)
  g:launch()
  T.eq(c[N], 2 * (N - 1) + 1)
  -- A failed update leaves the graph as it was.
  T.raises(function() g:update(function() return a[1] end) end, "reading an element")
  c:fill(0)
  g:launch()
  T.eq(c[N], 2 * (N - 1) + 1)
end)

T.case("the ledger counts graph launches and their work", function()
  local a = cu.ones(N)
  local c = cu.zeros(N)
  local g = cu.graph(function()
    cu.add(a, 1, { out = c })
    cu.copy(a, c)
  end)
  local per = g.ledger
  T.eq(per.launches, 2)
  T.eq(per.d2d_calls, 1)
  local d = cu.ledger(function() g:replay(3) end)
  T.eq(d.graph_launches, 3)
  T.eq(d.launches, 6)
  T.eq(d.d2d_calls, 3)
  T.eq(d.d2d_bytes, 3 * N * 4)
  T.truthy(tostring(cu.ledger()):find("graph launch", 1, true))
end)

T.case("the trace shows a launch as one slice with its node count", function()
  local a = cu.ones(N)
  local g = cu.graph(function()
    cu.add(a, 1, { out = a })
    cu.add(a, 1, { out = a })
  end, { name = "traced" })
  local path = os.tmpname()
  cu.trace.start()
  g:launch()
  cu.sync()
  local summary = cu.trace.stop(path)
  T.eq(summary.ops, 1)
  local f = assert(io.open(path))
  local text = f:read("a")
  f:close()
  os.remove(path)
  T.truthy(text:find("graph traced (2 nodes)", 1, true), "the trace names the graph")
end)

T.case("cu.sleep inside a graph keeps the stream busy at each launch", function()
  local s = cu.stream()
  local g = cu.graph(function() cu.sleep(150) end, { stream = s })
  local dt = S.timed(function() g:launch(s) end)
  T.truthy(dt < 0.1, "launch returned after " .. dt .. " s")
  T.eq(s:done(), false)
  dt = S.timed(function() s:sync() end)
  T.truthy(dt >= 0.1, "the sleep ran at launch: sync took " .. dt .. " s")
end)

T.case("cu.bench accepts a graph, and measures a function both ways with graph=true", function()
  local a = cu.ones(N)
  local c = cu.zeros(N)
  local g = cu.graph(function() cu.add(a, a, { out = c }) end, { name = "b" })
  local quick = { min_samples = 3, min_time = 0.001, max_time = 0.5, warmup = 1 }
  local r = cu.bench(g, quick)
  T.eq(r.name, "b")
  T.truthy(r.gpu.median > 0)
  local opts = { graph = true, name = "add" }
  for k, v in pairs(quick) do opts[k] = v end
  local both = cu.bench(function() cu.add(a, a, { out = c }) end, opts)
  T.eq(both.name, "add")
  T.eq(both.graph.name, "add (graph)")
  T.eq(type(both.graph_speedup), "number")
  T.eq(both.graph_nodes, 1)
  T.truthy(tostring(both):find("(graph)", 1, true), tostring(both))
  T.eq(c[N], 2)
  S.raises(function() cu.bench(g, { graph = true }) end, "a cu.Graph is timed as one")
end)

T.case("bad input raises naming the argument", function()
  local a = cu.ones(4)
  S.raises(function() cu.graph() end, "bad argument #1 to 'graph' (function expected, got no value)")
  S.raises(function() cu.graph(42) end, "bad argument #1 to 'graph' (function expected, got number)")
  S.raises(function() cu.graph(function() end, { strem = 1 }) end, "unknown option 'strem'")
  S.raises(function() cu.graph(function() end, { stream = 1 }) end, "option 'stream'")
  S.raises(function() cu.graph(function() end, { name = 1 }) end, "option 'name'")
  S.raises(function() cu.graph(function() end, 5) end, "table expected")
  local g = cu.graph(function() cu.add(a, 1, { out = a }) end)
  S.raises(function() g:replay(-1) end, "must be >= 0")
  S.raises(function() g:replay(1.5) end, "must be an integer")
  S.raises(function() g:replay() end, "must be an integer")
  S.raises(function() g:launch(5) end, "cu.Stream expected")
  S.raises(function() g:update(5) end, "bad argument #1 to 'update' (function expected, got number)")
  S.raises(function() return g.nonsense end, "no field or method 'nonsense'")
  g:launch()
  T.eq(a[1], 2)
end)

T.case("an empty function gives an empty graph", function()
  local g = cu.graph(function() end)
  T.eq(g.nodes, 0)
  g:launch()
  g:replay(3)
  T.eq(g.launches, 4)
end)

os.exit(T.run())
