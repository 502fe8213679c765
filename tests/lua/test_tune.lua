-- cu.tune on Lua-function candidates whose cost is known (work proportional to a parameter):
-- exhaustive, random and coordinate-descent searches, a fast but wrong candidate (rejected, never
-- the best), a candidate and a check that raise (failed), no candidate passing (an error), the
-- on-disk cache (hit, corrupt file, another device's entry, the default file), the results table,
-- and bad options. The compile paths (source=, module=) need a GPU: tests/gpu/test_tune_gpu.lua.
package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local cleanup = {}
local function tmp(suffix)
  local p = os.tmpname()
  os.remove(p)
  p = p .. (suffix or "")
  cleanup[#cleanup + 1] = p
  return p
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Short measurements: the costs below differ by 4x or more.
local BENCH = { min_samples = 3, min_time = 0.002, max_time = 0.5, hot = false, warmup = 1 }

local N = 1 << 15
local x = cu.arange(N, "f32")
local expected = (cu.arange(N, "f32") + 1):to_host()

-- The candidate: y = x, then reps * chunk multiplications by 1 (the cost), then y + 1. reps = 0 is
-- the fast shortcut that forgets the + 1 (wrong).
local calls = {}
local function kernel(p)
  calls[#calls + 1] = p
  local y = cu.empty(N, "f32")
  local work = p.reps * (p.chunk or 1)
  return function()
    cu.copy(y, x)
    for _ = 1, work do cu.mul(y, 1, { out = y }) end
    if p.reps > 0 then cu.add(y, 1, { out = y }) end
    return y
  end
end

local function check(y)
  local d = cu.abs(y:to_host() - expected):max():item()
  if d ~= 0 then return false, string.format("max difference %g", d) end
  return true
end

local function find_row(tbl, p)
  for _, r in ipairs(tbl.rows) do
    local same = true
    for k, v in pairs(p) do same = same and r[k] == v end
    if same then return r end
  end
end

T.case("exhaustive: every candidate, the wrong fast one rejected, the cheapest right one wins", function()
  calls = {}
  local best, tbl = cu.tune { name = "reps", kernel = kernel, space = { reps = { 0, 2, 16, 64 } }, check = check,
    bench = BENCH, quiet = true }
  T.eq(best, { reps = 2 })
  T.eq(#calls, 4, "kernel(p) once per candidate")
  T.eq(#tbl.rows, 4)
  T.eq(#tbl, 4)
  T.truthy(rawequal(tbl[2], tbl.rows[2]), "tbl[i] is tbl.rows[i]")
  T.eq(tbl.axes, { "reps" })
  T.eq(tbl.search, "exhaustive")
  T.eq(tbl.metric, "gpu.median")
  T.eq(tbl.cached, false)
  T.eq(tbl.rounds, 1)
  local wrong = find_row(tbl, { reps = 0 })
  T.eq(wrong.status, "rejected")
  T.eq(wrong.error, "max difference 1")
  T.eq(wrong.metric, nil, "a rejected candidate is not timed")
  for _, r in ipairs(tbl.rows) do
    if r.reps > 0 then
      T.eq(r.status, "ok")
      T.truthy(type(r.metric) == "number" and r.metric > 0, "a time")
      T.eq(r.metric, r.bench.gpu.median, "the metric is the bench result's gpu median")
    end
  end
  T.truthy(rawequal(tbl.best, find_row(tbl, { reps = 2 })), "tbl.best is the winning row")
  T.truthy(find_row(tbl, { reps = 2 }).metric < find_row(tbl, { reps = 64 }).metric, "2 reps beat 64")
  local md = tostring(tbl)
  T.truthy(md:find("### reps (exhaustive)", 1, true), md)
  T.truthy(md:find("rejected: max difference 1", 1, true), md)
  T.truthy(md:find("ok, best", 1, true), md)
  T.truthy(md:find("best: reps=2, gpu.median = ", 1, true), md)
  local doc = cu.json.decode(tbl:json())
  T.eq(doc.best.reps, 2)
  T.eq(#doc.rows, 4)
  T.eq(doc.rows[1].status, "rejected")
end)

T.case("the table prints unless quiet; the rounds are sweeps named after the tune", function()
  local out = tmp(".json")
  local _, tbl = cu.tune { name = "named", kernel = kernel, space = { reps = { 2, 8 } }, bench = BENCH,
    quiet = true, json = out }
  local doc = cu.json.decode(read(out))
  T.eq(#doc.sweeps, 1)
  T.truthy(doc.sweeps[1].name:match("^tune named %x%x%x%x%x%x%x%x round 1$"), doc.sweeps[1].name)
  T.eq(doc.sweeps[1].points[1].params.reps, 2)
  T.eq(doc.sweeps[1].points[2].result.gpu.median, tbl.rows[2].metric)
  -- printed: the markdown table on stdout
  local text, code = S.run_child([[
    cu.tune{name = "printed", kernel = function(p) return function() return p.n end end,
            space = {n = {1, 2}}, bench = {min_samples = 2, min_time = 0.001, max_time = 0.2, hot = false}}
  ]])
  T.eq(code, 0, text)
  T.truthy(text:find("### printed (exhaustive)", 1, true), text)
  T.truthy(text:find("|%s*n%s*|%s*gpu%.median"), text)
end)

T.case("a candidate that raises and a check that raises are failed rows; the search goes on", function()
  local best, tbl = cu.tune { kernel = function(p)
    if p.reps == 32 then error("no kernel for 32", 0) end
    return kernel(p)
  end, space = { reps = { 2, 8, 32 } }, bench = BENCH, quiet = true,
    check = function(y, p)
      if p.reps == 8 then error("the reference is missing", 0) end
      return check(y)
    end }
  T.eq(best, { reps = 2 })
  T.eq(find_row(tbl, { reps = 32 }).status, "failed")
  T.eq(find_row(tbl, { reps = 32 }).error, "no kernel for 32")
  T.eq(find_row(tbl, { reps = 8 }).status, "failed")
  T.eq(find_row(tbl, { reps = 8 }).error, "check raised: the reference is missing")
  -- a timed function that raises (inside cu.bench)
  best, tbl = cu.tune { kernel = function(p)
    return function() if p.n == 1 then error("boom at run time", 0) end end
  end, space = { n = { 1, 2 } }, bench = BENCH, quiet = true }
  T.eq(best, { n = 2 })
  T.truthy(tbl.rows[1].error:find("boom at run time", 1, true), tbl.rows[1].error)
  -- check returning false without a reason, and nil
  best, tbl = cu.tune { kernel = function() return function() end end, space = { n = { 1, 2, 3 } }, bench = BENCH,
    quiet = true, check = function(_, p)
      if p.n == 1 then return false end
      if p.n == 2 then return nil end
      return true
    end }
  T.eq(tbl.rows[1].error, "check returned false")
  T.eq(tbl.rows[2].error, "check returned nil")
  T.eq(tbl.rows[3].status, "ok")
  T.eq(best, { n = 3 })
end)

T.case("no candidate passing is an error that lists why", function()
  local msg = T.raises(function()
    cu.tune { kernel = function(p)
      if p.n == 1 then error("broken", 0) end
      return function() return p.n end
    end, space = { n = { 1, 2 } }, check = function() return false, "wrong" end, bench = BENCH, quiet = true }
  end, "tune: no candidate passed (1 failed, 1 rejected):")
  T.truthy(msg:find("n=1: failed: broken", 1, true), msg)
  T.truthy(msg:find("n=2: rejected: wrong", 1, true), msg)
  T.truthy(msg:find("test_tune.lua:%d+: tune:"), msg)
  S.check_runtime("after a tune without a winner")
end)

T.case("random search: a budget of distinct candidates, the same for the same seed", function()
  local space = { reps = { 2, 8, 32, 64 }, chunk = { 1, 2, 4 } }
  local function tried(tbl)
    local t = {}
    for i, r in ipairs(tbl.rows) do t[i] = r.chunk .. "/" .. r.reps end
    return t
  end
  local b1, t1 = cu.tune { kernel = kernel, space = space, search = "random", budget = 5, seed = 7, bench = BENCH,
    quiet = true }
  T.eq(#t1.rows, 5)
  local seen = {}
  for _, l in ipairs(tried(t1)) do
    T.eq(seen[l], nil, "candidate " .. l .. " tried twice")
    seen[l] = true
  end
  local _, t2 = cu.tune { kernel = kernel, space = space, search = "random", budget = 5, seed = 7, bench = BENCH,
    quiet = true }
  T.eq(tried(t2), tried(t1), "same seed, same candidates")
  local _, t3 = cu.tune { kernel = kernel, space = space, search = "random", budget = 5, seed = 8, bench = BENCH,
    quiet = true }
  T.truthy(table.concat(tried(t3), ",") ~= table.concat(tried(t1), ","), "another seed, other candidates")
  -- the winner is the least work among those tried (work differs by 2x at least between distinct values)
  local least = math.huge
  for _, r in ipairs(t1.rows) do least = math.min(least, r.reps * r.chunk) end
  T.truthy(b1.reps * b1.chunk <= 2 * least, string.format("best %d/%d, least work %d", b1.chunk, b1.reps, least))
  -- a budget of the whole space or more: every candidate once
  local _, t4 = cu.tune { kernel = kernel, space = { reps = { 2, 8 } }, search = "random", budget = 10,
    bench = BENCH, quiet = true }
  T.eq(#t4.rows, 2)
end)

T.case("coordinate descent: fewer candidates than the space, the known best", function()
  calls = {}
  local best, tbl = cu.tune { kernel = kernel, space = { reps = { 2, 8, 32 }, chunk = { 1, 4, 16 } },
    search = "descent", check = check, bench = BENCH, quiet = true }
  T.eq(best, { reps = 2, chunk = 1 })
  T.truthy(#tbl.rows < 9, "descent tried " .. #tbl.rows .. " of 9")
  T.eq(#calls, #tbl.rows)
  -- start (chunk=4, reps=8): the chunk line, then the reps line at chunk=1, then the chunk line at reps=2
  T.eq(tbl.rows[1].round, 1)
  T.eq({ tbl.rows[1].chunk, tbl.rows[1].reps }, { 1, 8 })
  T.eq(tbl.rows[#tbl.rows].round, tbl.rounds)
  T.truthy(tostring(tbl):find("| round |", 1, true), tostring(tbl))
  -- a budget stops it
  local _, t2 = cu.tune { kernel = kernel, space = { reps = { 2, 8, 32 }, chunk = { 1, 4, 16 } },
    search = "descent", budget = 2, bench = BENCH, quiet = true, start = { reps = 32, chunk = 16 } }
  T.eq(#t2.rows, 2)
  T.eq({ t2.rows[1].chunk, t2.rows[1].reps }, { 1, 32 })
  -- exhaustive with a budget: the first candidates in order
  local _, t3 = cu.tune { kernel = kernel, space = { reps = { 2, 8, 32 } }, budget = 2, bench = BENCH, quiet = true }
  T.eq(#t3.rows, 2)
  T.eq(t3.rows[2].reps, 8)
end)

T.case("descent passes over failed starting points", function()
  local best = cu.tune { kernel = function(p)
    if p.a == 2 then error("a=2 faults", 0) end
    return kernel({ reps = p.a * p.b })
  end, space = { a = { 1, 2, 4 }, b = { 1, 4, 8 } }, search = "descent", bench = BENCH, quiet = true }
  T.eq(best, { a = 1, b = 1 })
end)

T.case("the metric: another field of the bench result, higher-is-better throughputs", function()
  local bench = { min_samples = 3, min_time = 0.002, max_time = 0.5, hot = false, bytes = 1e6 }
  local best, tbl = cu.tune { kernel = kernel, space = { reps = { 2, 32 } }, bench = bench, metric = "GBps",
    quiet = true }
  T.eq(best, { reps = 2 })
  T.truthy(tbl.rows[1].metric > tbl.rows[2].metric, "more GB/s for less work")
  best, tbl = cu.tune { kernel = kernel, space = { reps = { 2, 32 } }, bench = BENCH, metric = "cpu.median",
    quiet = true }
  T.eq(best, { reps = 2 })
  T.eq(tbl.rows[1].metric, tbl.rows[1].bench.cpu.median)
  -- a metric the result does not have: every candidate failed
  T.raises(function()
    cu.tune { kernel = kernel, space = { reps = { 2 } }, bench = BENCH, metric = "TFLOPs", quiet = true }
  end, "reps=2: failed: the bench result has no number at 'TFLOPs'")
end)

T.case("parameters of every kind; a space as a list keeps its order", function()
  local seen = {}
  local best, tbl = cu.tune { kernel = function(p)
    seen[#seen + 1] = string.format("%s %s %dx%d", p.mode, tostring(p.fast), p.shape[1], p.shape[2])
    return kernel({ reps = p.fast and 1 or 8 })
  end, space = { { "mode", { "a", "b" } }, { "fast", { true, false } }, { "shape", { { 16, 16 } } } },
    bench = BENCH, quiet = true }
  T.eq(seen, { "a true 16x16", "a false 16x16", "b true 16x16", "b false 16x16" })
  T.eq(tbl.axes, { "mode", "fast", "shape" })
  T.eq(best.fast, true)
  T.eq(best.shape, { 16, 16 })
  T.truthy(tostring(tbl):find("| a    | true  | 16x16 |", 1, true), tostring(tbl))
  best, tbl = cu.tune { kernel = kernel, space = { reps = { 2 }, chunk = { 1 } }, order = { "reps", "chunk" },
    bench = BENCH, quiet = true }
  T.eq(tbl.axes, { "reps", "chunk" })
  T.eq(best, { reps = 2, chunk = 1 })
end)

T.case("cache: the second call reuses the winner without running anything", function()
  local path = tmp(".json")
  local spec = function()
    return { kernel = kernel, space = { reps = { 0, 2, 8 } }, check = check, bench = BENCH, quiet = true,
      cache = path, size = N }
  end
  calls = {}
  local best, tbl = cu.tune(spec())
  T.eq(best, { reps = 2 })
  T.eq(tbl.cached, false)
  T.eq(tbl.cache_file, path)
  T.eq(#calls, 3)
  local doc = cu.json.decode(read(path))
  T.eq(doc.format, "culua-tune")
  local n = 0
  for k, e in pairs(doc.entries) do
    n = n + 1
    T.truthy(k:find("device=" .. cu.devices()[cu.device() + 1].name, 1, true), k)
    T.eq(e.best, { reps = 2 })
  end
  T.eq(n, 1)
  calls = {}
  local best2, tbl2 = cu.tune(spec())
  T.eq(best2, { reps = 2 })
  T.eq(#calls, 0, "a cache hit runs no candidate")
  T.eq(tbl2.cached, true)
  T.eq(#tbl2.rows, 3, "the cached table")
  T.eq(tbl2.rows[1].status, "rejected")
  T.eq(tbl2.best.reps, 2)
  T.eq(tbl2.best.metric, tbl.best.metric)
  T.truthy(tostring(tbl2):find("(exhaustive, cached)", 1, true), tostring(tbl2))
  -- another problem size, another space or another search: not the same entry
  calls = {}
  local s = spec()
  s.size = N * 2
  cu.tune(s)
  T.eq(#calls, 3, "another size tunes again")
  calls = {}
  s = spec()
  s.space = { reps = { 2, 8 } }
  cu.tune(s)
  T.eq(#calls, 2, "another space tunes again")
  n = 0
  for _ in pairs(cu.json.decode(read(path)).entries) do n = n + 1 end
  T.eq(n, 3, "the entries of other keys are kept")
end)

T.case("cache: a corrupt file and another device's entry are ignored and rewritten", function()
  local path = tmp(".json")
  local function run()
    calls = {}
    local best, tbl = cu.tune { kernel = kernel, space = { reps = { 2, 8 } }, bench = BENCH, quiet = true,
      cache = path }
    return best, tbl, #calls
  end
  for _, junk in ipairs({ "{not json", "[1, 2, 3]", '{"format": "other", "entries": {}}', "" }) do
    write(path, junk)
    local best, tbl, ran = run()
    T.eq(best, { reps = 2 })
    T.eq(tbl.cached, false)
    T.eq(ran, 2)
    T.eq(cu.json.decode(read(path)).format, "culua-tune", "rewritten after " .. junk)
  end
  -- the entry moved to another device (and one whose best is not in the space): not used
  local doc = cu.json.decode(read(path))
  local key, entry = next(doc.entries)
  local other = key:gsub("device=[^|]*", "device=Some Other GPU")
  T.truthy(other ~= key, key)
  doc.entries = { [other] = entry }
  write(path, cu.json.encode(doc))
  local _, tbl, ran = run()
  T.eq(ran, 2, "another device's entry is not a hit")
  T.eq(tbl.cached, false)
  doc = cu.json.decode(read(path))
  T.truthy(doc.entries[other] and doc.entries[key], "both entries kept")
  doc.entries[key].best = { reps = 4 }
  write(path, cu.json.encode(doc))
  _, _, ran = run()
  T.eq(ran, 2, "an entry whose best is not in the space is ignored")
  _, tbl, ran = run()
  T.eq(ran, 0)
  T.eq(tbl.cached, true)
end)

T.case("cache = true: the file tune.json under CULUA_CACHE_DIR; an unwritable cache warns", function()
  local dir = tmp("-cache")
  local script = [[
    local best, tbl = cu.tune{name = "k", key = "my kernel v1", kernel = function(p) return function() return p.n end end,
      space = {n = {1, 2}}, bench = {min_samples = 2, min_time = 0.001, max_time = 0.2, hot = false},
      cache = true, quiet = true}
    print("cached=" .. tostring(tbl.cached) .. " file=" .. tostring(tbl.cache_file))
  ]]
  local env = "CULUA_CACHE_DIR=" .. S.shell_quote(dir)
  local out, code = S.run_child(script, env)
  T.eq(code, 0, out)
  T.truthy(out:find("cached=false file=" .. dir .. "/tune.json", 1, true), out)
  T.truthy(read(dir .. "/tune.json"), "the folder is created")
  out, code = S.run_child(script, env)
  T.eq(code, 0, out)
  T.truthy(out:find("cached=true", 1, true), out)
  os.remove(dir .. "/tune.json")
  os.remove(dir)
  -- a cache file that cannot be written: a warning, the result all the same
  out, code = S.run_child([[
    local best = cu.tune{kernel = function(p) return function() return p.n end end, space = {n = {1}},
      bench = {min_samples = 2, min_time = 0.001, max_time = 0.2, hot = false}, cache = "/nonexistent/dir/t.json",
      quiet = true}
    print("best n=" .. best.n)
  ]])
  T.eq(code, 0, out)
  T.truthy(out:find("best n=1", 1, true), out)
  T.truthy(out:find("warning: cu.tune: cannot write the cache file /nonexistent/dir/t.json", 1, true), out)
end)

T.case("under --sandbox: tuning works, the cache (files) is refused", function()
  local script = tmp(".lua")
  write(script, [[
local best = cu.tune{kernel = function(p) return function() return p.n end end, space = {n = {1, 2}},
  bench = {min_samples = 2, min_time = 0.001, max_time = 0.2, hot = false}, quiet = true}
print("best n=" .. best.n)
print(pcall(cu.tune, {kernel = function() return function() end end, space = {n = {1}}, cache = true, key = "k"}))
]])
  local p = assert(io.popen(string.format("%s --backend host --sandbox %s 2>&1", S.shell_quote(S.culua_path()),
    S.shell_quote(script))))
  local out = p:read("a")
  p:close()
  T.truthy(out:find("best n=[12]\n"), out)
  T.truthy(out:find("false\tbad argument #1 to 'tune' (option 'cache': not available without the io library", 1,
    true), out)
end)

T.case("kernels that need a GPU: source= and module= run inside the candidates", function()
  if cu.backend ~= "host" then T.skip("the GPU side is tests/gpu/test_tune_gpu.lua") end
  local msg = T.raises(function()
    cu.tune { kernel = "fill", source = "extern \"C\" __global__ void fill(float* y) { y[0] = TILE; }",
      space = { TILE = { 8, 16 } }, launch = { grid = 1, block = 1 }, args = { cu.empty(1) }, quiet = true }
  end, "tune: no candidate passed (2 failed, 0 rejected)")
  T.truthy(msg:find("TILE=8: failed: ", 1, true) and msg:find("GPU", 1, true), msg)
end)

T.case("plots of the results", function()
  if not os.execute("command -v gnuplot >/dev/null 2>&1") then T.skip("gnuplot is not installed") end
  local file = tmp(".svg")
  local _, tbl = cu.tune { kernel = kernel, space = { reps = { 2, 8, 32 }, chunk = { 1, 2 } }, bench = BENCH,
    quiet = true, plot = file }
  T.truthy((read(file) or ""):find("<svg", 1, true), "an SVG from plot=")
  local file2 = tmp(".svg")
  T.eq(tbl:plot({ file = file2, logy = true }), file2)
  T.truthy((read(file2) or ""):find("<svg", 1, true), "an SVG from tbl:plot")
end)

T.case("bad options raise before anything runs", function()
  calls = {}
  local ok = { kernel = kernel, space = { reps = { 1 } } }
  local function with(changes)
    local s = {}
    for k, v in pairs(ok) do s[k] = v end
    for k, v in pairs(changes) do
      if v == "nil" then s[k] = nil else s[k] = v end
    end
    return s
  end
  local module_like = cu.empty(1)
  local cases = {
    { { space = "nil" },
      "bad argument #1 to 'tune' (option 'space': table of parameters {name = {values}} expected, got nil)" },
    { { space = {} }, "(option 'space': the space is empty)" },
    { { space = { reps = {} } }, "(option 'space': parameter 'reps' has no values)" },
    { { space = { { "reps", {} } } }, "(option 'space': parameter 'reps' has no values)" },
    { { space = { reps = 4 } }, "parameter 'reps' must be a list of values, got number" },
    { { space = { reps = { 1, 1 } } }, "parameter 'reps' has the value 1 twice" },
    { { space = { reps = { print } } }, "parameter 'reps' value 1 is a function" },
    { { space = { status = { 1 } } }, "'status' cannot be a parameter name" },
    { { space = { { "reps", { 1 } }, { "reps", { 2 } } } }, "parameter 'reps' is given twice" },
    { { space = { { "reps", { 1 } }, x = { 2 } } }, "not both" },
    { { space = { [1.5] = { 1 } } }, "parameter names must be strings, got number" },
    { { order = { "reps", "k" } }, "order names 'k', which is not a parameter" },
    { { kernel = "nil" }, "(option 'kernel': function, cu.Kernel or kernel name expected, got nil)" },
    { { kernel = 5 }, "(option 'kernel': function, cu.Kernel or kernel name expected, got number)" },
    { { kernel = "scale<T>" }, "(option 'kernel': a kernel name or template expression needs module=" },
    { { kernel = "scale<T>", module = module_like },
      "(option 'module': cu.Module expected (from cu.compile), got cu.Array)" },
    { { kernel = "scale", source = 5 }, "(option 'source': string expected, got number)" },
    { { launch = { grid = 1, block = 1 } }, "(option 'launch': launch= is for kernels" },
    { { kernel = "scale", source = "x" }, "(option 'launch': table {grid=, block=} or function(p) expected, got nil)" },
    { { kernel = "scale", source = "x", launch = { grid = 1 }, options = { 1 } },
      "(option 'options': options[1] must be a string, got number)" },
    { { options = "-G" }, "(option 'options': NVRTC options are for source=)" },
    { { args = 3 }, "(option 'args': list of kernel arguments or function(p) expected, got number)" },
    { { check = 3 }, "(option 'check': function(result, p) expected, got number)" },
    { { bench = 3 }, "(option 'bench': table of cu.bench options expected, got number)" },
    { { metric = 3 }, "(option 'metric': a field of the bench result such as \"gpu.median\" expected, got 3)" },
    { { search = "annealing" }, "(option 'search': unknown search annealing (exhaustive, random or descent))" },
    { { search = 1 }, "(option 'search': unknown search 1" },
    { { budget = 0 }, "(option 'budget': positive integer expected, got 0)" },
    { { budget = -3 }, "(option 'budget': positive integer expected, got -3)" },
    { { budget = 2.5 }, "(option 'budget': positive integer expected, got 2.5)" },
    { { search = "random" }, "(option 'budget': search 'random' needs budget=" },
    { { search = "random", budget = 2, seed = "x" }, "(option 'seed': integer expected, got x)" },
    { { seed = 3 }, "(option 'seed': seed= is for search 'random')" },
    { { start = { reps = 1 } }, "(option 'start': start= is for search 'descent')" },
    { { search = "descent", start = { reps = 7 } }, "(option 'start': reps = 7 is not a value of the space)" },
    { { search = "descent", start = { k = 1 } }, "(option 'start': 'k' is not a parameter of the space)" },
    { { name = "" }, "(option 'name': non-empty string expected" },
    { { key = 1 }, "(option 'key': string expected, got number)" },
    { { size = print }, "(option 'size': number, string or table expected, got function)" },
    { { quiet = "yes" }, "(option 'quiet': boolean expected, got string)" },
    { { json = 1 }, "(option 'json': file name expected, got number)" },
    { { plot = 1 }, "(option 'plot': file name or cu.plot options expected, got number)" },
    { { cache = 1 }, "(option 'cache': boolean or file name expected, got number)" },
    { { spaec = {} }, "bad argument #1 to 'tune' (unknown option 'spaec'; the options are name, kernel, space, " },
  }
  for _, c in ipairs(cases) do
    local msg = T.raises(function() cu.tune(with(c[1])) end, c[2])
    T.truthy(msg:find("^.-test_tune%.lua:%d+: bad argument #1 to 'tune'"), "the script's line first: " .. msg)
  end
  T.raises(function() cu.tune() end, "bad argument #1 to 'tune' (table {kernel=, space=, ...} expected, got no value)")
  T.raises(function() cu.tune(5) end, "bad argument #1 to 'tune' (table {kernel=, space=, ...} expected, got number)")
  T.eq(#calls, 0, "no candidate ran")
  -- options that cu.sweep checks are passed to it
  T.raises(function() cu.tune(with({ json = "/nonexistent/dir/x.json" })) end, "/nonexistent/dir/x.json")
  -- cu.sweep's own checks of isolate= and timeout= read as tune's; its other errors pass unchanged
  local real_sweep = cu.sweep
  local raised
  rawset(cu, "sweep", function() error(raised, 0) end)
  local ok_run, msg = pcall(function()
    raised = "x.lua:1: bad argument #1 to 'cu.sweep' (option 'timeout': positive number expected, got -1)"
    T.raises(function() cu.tune(with({ timeout = -1 })) end,
      "bad argument #1 to 'tune' (option 'timeout': positive number expected, got -1)")
    raised = { "an error object" }
    local ok2, err = pcall(cu.tune, with({}))
    T.eq(ok2, false)
    T.truthy(rawequal(err, raised), "the same error value")
  end)
  rawset(cu, "sweep", real_sweep)
  T.truthy(ok_run, msg)
  -- kernel(p) returning something that cannot be timed: a failed candidate
  T.raises(function()
    cu.tune { kernel = function() return 5 end, space = { n = { 1 } }, quiet = true }
  end, "n=1: failed: kernel(p) must return the function to time, got number")
  S.check_runtime("after bad tune options")
end)

T.case("cu.tune's errors are cu.Error values: kind, message, where, func, arg", function()
  local function err_of(f)
    local ok, e = pcall(f)
    T.eq(ok, false)
    T.eq(type(e), "table", "a cu.Error, not a string: " .. tostring(e))
    return e
  end
  local line = debug.getinfo(1, "l").currentline + 1
  local e = err_of(function() cu.tune { kernel = kernel, space = 3 } end)
  T.eq({ cu.error_kind(e), e.kind, e.func, e.arg }, { "type", "type", "cu.tune", 1 })
  T.eq(e.message, "bad argument #1 to 'tune' (option 'space': table of parameters {name = {values}} expected, "
    .. "got number)")
  T.truthy(e.where:find("test_tune%.lua:" .. line .. "$"), e.where)
  T.eq(tostring(e), e.where .. ": " .. e.message, "the same text as before")
  T.truthy(e:find("option 'space'", 1, true), "string methods work on it")
  -- a value of the right type that is wrong is a value error
  e = err_of(function() cu.tune { kernel = kernel, space = { reps = { 1 } }, budget = 0 } end)
  T.eq({ e.kind, e.arg }, { "value", 1 })
  T.eq(e.message, "bad argument #1 to 'tune' (option 'budget': positive integer expected, got 0)")
  e = err_of(function() cu.tune { kernel = kernel, space = { reps = { 1 } }, budget = "2" } end)
  T.eq(e.kind, "type")
  e = err_of(function() cu.tune() end)
  T.eq({ e.kind, e.message },
    { "type", "bad argument #1 to 'tune' (table {kernel=, space=, ...} expected, got no value)" })
  e = err_of(function() cu.tune { kernel = kernel, space = { reps = { 1 } }, spaec = 1 } end)
  T.eq({ e.kind, e.arg }, { "value", 1 })
  -- no candidate passing: an error of cu.tune, not of an argument
  e = err_of(function()
    cu.tune { kernel = function() return function() error("broken", 0) end end, space = { n = { 1 } }, quiet = true }
  end)
  T.eq({ e.kind, e.func, e.arg }, { "value", "cu.tune", nil })
  T.truthy(e.message:find("^tune: no candidate passed %(1 failed, 0 rejected%):"), e.message)
  -- the results' plot method
  local _, tbl = cu.tune { kernel = kernel, space = { reps = { 1 } }, quiet = true }
  e = err_of(function() tbl:plot(3) end)
  T.eq({ e.kind, e.func, e.arg, e.message }, { "type", "plot", 1,
    "bad argument #1 to 'plot' (file name or options table expected, got number)" })
end)

local status = T.run()
for _, p in ipairs(cleanup) do os.remove(p) end
os.exit(status)
