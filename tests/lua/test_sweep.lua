-- cu.sweep: axes, the order of points, failed points, the markdown table, JSON and CSV files, the
-- CLI's --json/--csv, and the progress bar.
package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"
local json = require "json_reader"

local function tmp(suffix)
  local p = os.tmpname()
  os.remove(p)
  return p .. (suffix or "")
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

-- Runs `source` as a script in a child culua with `cli` options before the script and `args`
-- after it; returns stdout, stderr and the exit code.
local function run_script(source, cli, args, env)
  local script, err = tmp(".lua"), tmp(".err")
  write(script, source)
  local cmd = string.format("%s %s --backend host %s %s %s 2>%s", env or "",
    S.shell_quote(S.culua_path()), cli or "", S.shell_quote(script), args or "", S.shell_quote(err))
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local stderr = read(err) or ""
  os.remove(script)
  os.remove(err)
  return out, stderr, code, script
end

-- A CSV reader for what culua writes (quoted fields may hold commas, quotes and newlines).
local function parse_csv(text)
  local rows, row, field, i, quoted = {}, {}, {}, 1, false
  while i <= #text do
    local c = text:sub(i, i)
    if quoted then
      if c == '"' and text:sub(i + 1, i + 1) == '"' then
        field[#field + 1] = '"'
        i = i + 1
      elseif c == '"' then
        quoted = false
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      quoted = true
    elseif c == "," then
      row[#row + 1] = table.concat(field)
      field = {}
    elseif c == "\n" then
      row[#row + 1] = table.concat(field)
      rows[#rows + 1] = row
      row, field = {}, {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  -- as records: header names to values
  local header, records = rows[1], {}
  for r = 2, #rows do
    local rec = {}
    T.eq(#rows[r], #header, "fields in CSV line " .. r)
    for k, name in ipairs(header) do rec[name] = rows[r][k] end
    records[#records + 1] = rec
  end
  return records, header
end

-- A result of cu.bench's shape (without calling cu.bench).
local function fake_bench(median, noise, extra)
  local r = {
    name = "fake", samples = 25,
    gpu = { min = median * 0.9, median = median, mean = median * 1.01, stddev = median * noise,
      p10 = median * 0.95, p90 = median * 1.05, noise = noise },
    cpu = { min = median, median = median * 2, mean = median * 2, stddev = 0, p10 = median,
      p90 = median * 3, noise = 0.01 },
    times = { median * 0.9, median, median * 1.1 },
    device = "fake device", backend = "host",
  }
  for k, v in pairs(extra or {}) do r[k] = v end
  return setmetatable(r, { __index = { json = function() return "{}" end } })
end

-- The lines of a markdown table as lists of trimmed cells.
local function table_cells(md)
  local rows = {}
  for line in md:gmatch("[^\n]+") do
    if line:sub(1, 1) == "|" then
      local cells = {}
      for cell in line:sub(2):gmatch("([^|]*)|") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$") end
      rows[#rows + 1] = cells
    end
  end
  return rows
end

local function fnv1a64(s)
  local h = -3750763034362895579 -- 14695981039346656037 as a signed 64-bit integer
  for i = 1, #s do
    h = (h ~ s:byte(i)) * 1099511628211
  end
  return string.format("%016x", h)
end

T.case("axes as a list of pairs keep their order; the last axis varies fastest", function()
  local seen = {}
  local r = cu.sweep { name = "order", quiet = true,
    axes = { { "n", { 1024, 4096 } }, { "dtype", { "f32", "f64", "f16" } } },
    run = function(p)
      seen[#seen + 1] = p.n .. ":" .. p.dtype
      return p.n / 1000
    end }
  T.eq(seen, { "1024:f32", "1024:f64", "1024:f16", "4096:f32", "4096:f64", "4096:f16" })
  T.eq(r.name, "order")
  T.eq(r.axes, { "n", "dtype" })
  T.eq(#r.rows, 6)
  T.eq(r.rows[4].n, 4096)
  T.eq(r.rows[4].dtype, "f32")
  T.eq(r.rows[4].ms, 4.096)
  T.eq(r.rows[4].status, "ok")
  T.eq(r.rows[4].error, nil)
  T.eq(math.type(r.rows[1].n), "integer")
  -- the results are also the list of their rows
  T.eq(#r, 6)
  T.truthy(rawequal(r[4], r.rows[4]), "r[i] is r.rows[i]")
  T.eq(r[0], nil)
  T.eq(r[7], nil)
  local walked = {}
  for i, row in ipairs(r) do walked[i] = row.n .. ":" .. row.dtype end
  T.eq(walked, seen)
end)

T.case("axes as a map run in sorted order, or in order=", function()
  local seen = {}
  local r = cu.sweep { quiet = true, axes = { z = { 1, 2 }, a = { "x", "y" } },
    run = function(p) seen[#seen + 1] = p.a .. p.z end }
  T.eq(seen, { "x1", "x2", "y1", "y2" })
  T.eq(r.axes, { "a", "z" })
  T.eq(r.name, "sweep")
  seen = {}
  r = cu.sweep { quiet = true, axes = { z = { 1, 2 }, a = { "x", "y" } }, order = { "z", "a" },
    run = function(p) seen[#seen + 1] = p.a .. p.z end }
  T.eq(seen, { "x1", "y1", "x2", "y2" })
  T.eq(r.axes, { "z", "a" })
end)

T.case("bad arguments raise before anything runs", function()
  local calls = 0
  local function run() calls = calls + 1 end
  local cases = {
    { { axes = { n = { 1 } } }, "bad argument #1 to 'sweep' (option 'run': function expected, got nil)" },
    { { axes = { n = { 1 } }, run = 3 }, "(option 'run': function expected, got number)" },
    { { run = run }, "axes must be a list of pairs" },
    { { axes = 5, run = run }, "axes must be a list of pairs" },
    { { axes = {}, run = run }, "axes is empty" },
    { { axes = { n = {} }, run = run }, "axis 'n' has no values" },
    { { axes = { { "n", {} } }, run = run }, "axis 'n' has no values" },
    { { axes = { n = 4 }, run = run }, "axis 'n' must be a list of values, got number" },
    { { axes = { { "n" } }, run = run }, "axis 'n' must be a list of values, got nil" },
    { { axes = { { 1, { 2 } } }, run = run }, "axes[1] must be a pair {name, values}" },
    { { axes = { { "n", { 1 } }, m = { 2 } }, run = run }, "not both" },
    { { axes = { { "n", { 1 } }, { "n", { 2 } } }, run = run }, "axis 'n' is given twice" },
    { { axes = { { "status", { 1 } } }, run = run }, "'status' cannot be an axis name" },
    { { axes = { { "n", { print } } }, run = run }, "axis 'n' value 1 is a function" },
    { { axes = { n = { 1 }, m = { 2 } }, order = { "n" }, run = run }, "order does not name axis 'm'" },
    { { axes = { n = { 1 } }, order = { "n", "k" }, run = run }, "order names 'k', which is not an axis" },
    { { axes = { { "n", { 1 } } }, order = { "n" }, run = run }, "order= is for axes given as a map" },
    { { axes = { n = { 1 } }, run = run, ordr = { "n" } }, "unknown option 'ordr'" },
    { { axes = { n = { 1 } }, run = run, quiet = "yes" }, "(option 'quiet': boolean expected" },
    { { axes = { n = { 1 } }, run = run, name = 5 }, "name must be a string" },
  }
  for _, c in ipairs(cases) do
    T.raises(function() cu.sweep(c[1]) end, c[2])
  end
  T.raises(function() cu.sweep() end, "bad argument #1 to 'sweep' (table {name=, axes=, run=} expected, got no value)")
  T.eq(calls, 0, "run was never called")
end)

T.case("a point that raises is recorded as failed and the sweep goes on", function()
  local r = cu.sweep { name = "fails", quiet = true, axes = { { "n", { 1, 2, 3 } } },
    run = function(p)
      if p.n == 2 then error("no memory for n=2, really", 0) end
      return { value = p.n * 10 }
    end }
  T.eq(#r.rows, 3)
  T.eq(r.rows[1].status, "ok")
  T.eq(r.rows[1].value, 10)
  T.eq(r.rows[2].status, "failed")
  T.eq(r.rows[2].error, "no memory for n=2, really")
  T.eq(r.rows[2].value, nil)
  T.eq(r.rows[3].status, "ok")
  T.eq(r.rows[3].value, 30)
  local cells = table_cells(tostring(r))
  T.eq(cells[1], { "n", "value", "status" })
  T.eq(cells[3], { "1", "10", "ok" })
  T.eq(cells[4], { "2", "", "failed: no memory for n=2, really" })
  local doc = json.decode(r:json())
  local p2 = doc.sweeps[1].points[2]
  T.eq(p2.status, "failed")
  T.eq(p2.error, "no memory for n=2, really")
  T.eq(p2.params.n, 2)
  T.eq(doc.sweeps[1].points[3].result.value, 30)
end)

T.case("an error value whose __tostring raises fails its point with a clear message", function()
  local raising = setmetatable({}, { __tostring = function() error("tostring exploded", 0) end })
  local nested = setmetatable({}, { __tostring = function() error(raising) end })
  local not_text = setmetatable({}, { __tostring = function() return {} end })
  local shown = setmetatable({}, { __tostring = function() return "shown" end })
  local values = { raising, nested, not_text, shown }
  local r = cu.sweep { name = "tostring", quiet = true, axes = { { "n", { 1, 2, 3, 4, 5 } } },
    run = function(p)
      if values[p.n] then error(values[p.n]) end
      return p.n
    end }
  T.eq(#r.rows, 5, "the sweep went on")
  for i = 1, 4 do T.eq(r.rows[i].status, "failed", i) end
  T.eq(r.rows[1].error, "(error object is a table value whose __tostring raised an error: tostring exploded)")
  T.eq(r.rows[2].error, "(error object is a table value whose __tostring raised a table value)")
  T.eq(r.rows[3].error, "(error object is a table value whose __tostring raised an error: '__tostring' must " ..
    "return a string)")
  T.eq(r.rows[4].error, "shown")
  T.eq({ r.rows[5].status, r.rows[5].ms }, { "ok", 5 })
  local doc = json.decode(r:json())
  T.eq(doc.sweeps[1].points[1].error, r.rows[1].error)
end)

T.case("a run returning something other than a table, number or nil fails its point", function()
  local r = cu.sweep { quiet = true, axes = { { "n", { 1 } } }, run = function() return "fast" end }
  T.eq(r.rows[1].status, "failed")
  T.truthy(r.rows[1].error:find("run returned a string", 1, true), r.rows[1].error)
  r = cu.sweep { quiet = true, axes = { { "n", { 1 } } }, run = function() end }
  T.eq(r.rows[1].status, "ok")
end)

T.case("a field that contains itself fails its point and the sweep goes on", function()
  local r = cu.sweep { quiet = true, axes = { { "n", { 1, 2 } } }, run = function(p)
    local t = { ms = 1 }
    if p.n == 1 then t.again = t end
    return t
  end }
  T.eq(r.rows[1].status, "failed")
  T.truthy(r.rows[1].error:find("field 'again': cannot encode a table that contains itself", 1, true),
    r.rows[1].error)
  T.eq(r.rows[2].status, "ok")
  T.eq(r.rows[2].ms, 1)
end)

T.case("bench results: the table shows gpu median in one unit, noise, GB/s, cpu median, samples", function()
  local r = cu.sweep { name = "copy", quiet = true,
    axes = { { "n", { 1024, 4096 } } },
    run = function(p)
      return fake_bench(p.n / 1024 * 0.0125, 0.034,
        { GBps = p.n * 8 / 1e3, launch_bound = p.n == 1024, clock = { before = 1980, after = 1700 } })
    end }
  local cells = table_cells(tostring(r))
  T.eq(cells[1], { "n", "gpu median (µs)", "noise", "GB/s", "cpu median (µs)", "samples", "notes" })
  T.eq(cells[3], { "1024", "12.50", "3.4%", "8.192", "25.00", "25", "launch-bound, clock 1980→1700 MHz" })
  T.eq(cells[4], { "4096", "50.00", "3.4%", "32.77", "100.0", "25", "clock 1980→1700 MHz" })
  -- milliseconds when the typical time is 1 ms or more
  r = cu.sweep { quiet = true, axes = { { "n", { 1, 2 } } },
    run = function(p) return fake_bench(p.n * 1.5, 0.001) end }
  cells = table_cells(tostring(r))
  T.eq(cells[1][2], "gpu median (ms)")
  T.eq(cells[3][2], "1.500")
  T.eq(cells[4][2], "3.000")
  T.eq(cells[3][3], "0.1%")
end)

T.case("plain tables: their fields become columns in first-seen order", function()
  local r = cu.sweep { quiet = true, axes = { { "k", { 1, 2 } } },
    run = function(p)
      if p.k == 1 then return { alpha = 0.5, tag = "first" } end
      return { alpha = 0.25, beta = 7, stats = { max = 3 } }
    end }
  local cells = table_cells(tostring(r))
  T.eq(cells[1], { "k", "alpha", "tag", "beta", "stats.max" })
  T.eq(cells[3], { "1", "0.5000", "first", "", "" })
  T.eq(cells[4], { "2", "0.2500", "", "7", "3" })
  -- a number is milliseconds
  r = cu.sweep { quiet = true, axes = { { "k", { 1, 2 } } }, run = function(p) return p.k * 0.002 end }
  cells = table_cells(tostring(r))
  T.eq(cells[1], { "k", "time (µs)" })
  T.eq(cells[3], { "1", "2.000" })
end)

T.case("the table is printed at the end unless quiet", function()
  local out, err, code = run_script([[
    cu.sweep{name="printed", axes={{"n",{1,2}}}, run=function(p) return p.n end}
    cu.sweep{name="silent", quiet=true, axes={{"n",{1}}}, run=function(p) return p.n end}
  ]])
  T.eq(code, 0, err)
  T.eq(out, "### printed\n\n" ..
    "| n   | time (ms) |\n" ..
    "| --: | --------: |\n" ..
    "|   1 |     1.000 |\n" ..
    "|   2 |     2.000 |\n\n")
end)

T.case("json= and csv= files hold everything, self-contained", function()
  local jpath, cpath = tmp(".json"), tmp(".csv")
  local r = cu.sweep { name = "files", quiet = true, json = jpath, csv = cpath,
    axes = { { "n", { 256, 512 } }, { "op", { "add", "mul" } } },
    run = function(p)
      if p.op == "mul" and p.n == 512 then error("mul, \"512\" failed") end
      return fake_bench(p.n / 1e5, 0.02, { GBps = p.n / 100, clock = { before = 1500, after = 1500 } })
    end }
  local doc, text = json.read(jpath)
  T.eq(doc.format, "culua-results")
  T.eq(doc.format_version, 1)
  T.eq(doc.culua_version, cu.version)
  T.eq(doc.backend, cu.backend)
  T.eq(doc.device.name, cu.devices()[1].name)
  T.eq(doc.device.index, 0)
  T.truthy(doc.date:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), doc.date)
  T.truthy(#doc.host > 0, "host name")
  T.eq(doc.script.path, arg[0])
  T.eq(doc.script.fnv1a64, fnv1a64(read(arg[0])))
  if cu.backend == "cuda" then
    T.truthy(doc.cuda.driver:match("^%d+%.%d+$"), "CUDA driver version " .. tostring(doc.cuda.driver))
    T.truthy(doc.cuda.runtime:match("^%d+%.%d+$"), "CUDA runtime version " .. tostring(doc.cuda.runtime))
  else
    T.eq(doc.cuda, nil, "no CUDA versions on the host backend")
  end
  T.eq(#doc.sweeps, 1)
  local s = doc.sweeps[1]
  T.eq(s.name, "files")
  T.eq(s.metric, "gpu.median")
  T.eq(s.axes[1], { name = "n", values = { 256, 512 } })
  T.eq(s.axes[2], { name = "op", values = { "add", "mul" } })
  T.eq(#s.points, 4)
  for i, p in ipairs(s.points) do
    T.eq(p.params.n, r.rows[i].n)
    T.eq(p.params.op, r.rows[i].op)
    T.eq(p.status, r.rows[i].status)
  end
  local p1 = s.points[1].result
  T.eq(p1.gpu.median, 256 / 1e5)
  T.eq(p1.gpu.noise, 0.02)
  T.eq(p1.gpu.p90, 256 / 1e5 * 1.05)
  T.eq(p1.cpu.median, 256 / 1e5 * 2)
  T.eq(p1.samples, 25)
  T.eq(p1.GBps, 2.56)
  T.eq(p1.clock, { before = 1500, after = 1500 })
  T.eq(p1.times, { 256 / 1e5 * 0.9, 256 / 1e5, 256 / 1e5 * 1.1 })
  T.eq(s.points[4].status, "failed")
  T.truthy(s.points[4].error:find('mul, "512" failed', 1, true), s.points[4].error)
  T.eq(text, r:json(), "the file is results:json()")

  local records, header = parse_csv(read(cpath))
  T.eq({ header[1], header[2], header[3], header[4], header[5] }, { "sweep", "n", "op", "status", "error" })
  T.eq(#records, 4)
  T.eq(records[2].sweep, "files")
  T.eq(records[2].n, "256")
  T.eq(records[2].op, "mul")
  T.eq(tonumber(records[2]["gpu.median"]), 256 / 1e5)
  T.eq(tonumber(records[2]["gpu.noise"]), 0.02)
  T.eq(tonumber(records[3].GBps), 5.12)
  T.eq(records[4].status, "failed")
  T.truthy(records[4].error:find('mul, "512" failed', 1, true), records[4].error)
  T.eq(records[4]["gpu.median"], "")
  T.eq(records[2].times, nil, "lists stay in the JSON")
  T.eq(read(cpath), r:csv())
  os.remove(jpath)
  os.remove(cpath)
end)

T.case("results:write_json and write_csv write what json() and csv() return", function()
  local r = cu.sweep { quiet = true, axes = { x = { 1, 2 } }, run = function(p) return { y = p.x * 2 } end }
  local jpath, cpath = tmp(".json"), tmp(".csv")
  r:write_json(jpath)
  r:write_csv(cpath)
  T.eq(read(jpath), r:json())
  T.eq(read(cpath), r:csv())
  T.eq(read(cpath), "sweep,x,status,error,y\nsweep,1,ok,,2\nsweep,2,ok,,4\n")
  os.remove(jpath)
  os.remove(cpath)
  T.raises(function() r:write_json("/nonexistent/dir/r.json") end, "cannot write /nonexistent/dir/r.json")
  T.raises(function() r.json({}) end, "expected the results of cu.sweep")
end)

T.case("--json and --csv gather every sweep of a script in one file; json= goes elsewhere", function()
  local jpath, cpath, own = tmp(".json"), tmp(".csv"), tmp(".json")
  local out, err, code = run_script(string.format([[
    cu.sweep{name="first", quiet=true, axes={{"n",{1,2}}}, run=function(p) return p.n * 0.5 end}
    cu.sweep{name="own", quiet=true, json=%q, axes={{"n",{9}}}, run=function(p) return p.n end}
    cu.sweep{name="second", quiet=true, axes={{"m",{"a","b"}}}, run=function(p) return {v=p.m} end}
  ]], own), "--json " .. jpath .. " --csv " .. cpath, "x 'y z'")
  T.eq(code, 0, err)
  T.eq(out, "")
  local doc = json.read(jpath)
  T.eq(#doc.sweeps, 2)
  T.eq(doc.sweeps[1].name, "first")
  T.eq(doc.sweeps[2].name, "second")
  T.eq(doc.sweeps[1].points[2].result.ms, 1.0)
  T.eq(doc.sweeps[2].points[2].result.v, "b")
  T.eq(doc.script.args, { "x", "y z" })
  T.eq(doc.script.command[#doc.script.command], "y z")
  local own_doc = json.read(own)
  T.eq(#own_doc.sweeps, 1)
  T.eq(own_doc.sweeps[1].name, "own")
  -- "own" gave json= only: its CSV goes to --csv
  local records = parse_csv(read(cpath))
  T.eq(#records, 5)
  T.eq({ records[1].sweep, records[1].n, records[1].m, records[1].ms }, { "first", "1", "", "0.5" })
  T.eq({ records[3].sweep, records[3].n, records[3].ms }, { "own", "9", "9" })
  T.eq({ records[5].sweep, records[5].n, records[5].m, records[5].v }, { "second", "", "b", "b" })
  os.remove(jpath)
  os.remove(cpath)
  os.remove(own)
end)

T.case("an unwritable output path is an error before the sweep runs", function()
  local calls = 0
  T.raises(function()
    cu.sweep { quiet = true, json = "/nonexistent/dir/out.json", axes = { { "n", { 1 } } },
      run = function() calls = calls + 1 end }
  end, "cannot write json= file /nonexistent/dir/out.json")
  T.raises(function()
    cu.sweep { quiet = true, csv = "/", axes = { { "n", { 1 } } }, run = function() calls = calls + 1 end }
  end, "csv= file / is a directory")
  T.eq(calls, 0)
  local out, err, code = run_script([[cu.sweep{axes={{"n",{1}}}, run=function() print("ran") end}]],
    "--json /nonexistent/dir/cli.json")
  T.eq(code, 1)
  T.eq(out, "")
  T.truthy(err:find("cannot write --json file /nonexistent/dir/cli.json", 1, true), err)
end)

T.case("a file that cannot be written at the end: the table is printed, the others written", function()
  local dir = tmp(".d")
  assert(os.execute("mkdir " .. dir))
  local csv = tmp(".csv")
  local out, err, code = run_script(string.format([[
    local ok, e = pcall(cu.sweep, {name="late", quiet=true, json=%q, csv=%q,
      axes={{"n",{1,2}}}, run=function(p)
        os.remove(%q)  -- the folder of the JSON file disappears while the sweep runs
        return p.n
      end})
    print(ok, e)
  ]], dir .. "/r.json", csv, dir), "", "")
  T.eq(code, 0, err)
  T.truthy(out:find("### late", 1, true), "the table is printed although quiet: " .. out)
  T.truthy(out:find("|   2 |     2.000 |", 1, true), out)
  T.truthy(out:find("false\t.*sweep 'late' ran, but cannot write " .. dir:gsub("%p", "%%%0") .. "/r.json"), out)
  local records = parse_csv(assert(read(csv), "the CSV file was still written"))
  T.eq(#records, 2)
  T.eq(records[2].ms, "2")
  os.remove(csv)
end)

T.case("an interrupted sweep keeps what it gathered and re-raises", function()
  local jpath = tmp(".json")
  local out, err, code = run_script(string.format([[
    local ok, e = pcall(cu.sweep, {name="stop", json=%q, quiet=true, axes={{"n",{1,2,3}}},
      run=function(p) if p.n == 3 then error("script.lua:1: interrupted!", 0) end return p.n end})
    print(ok, e)
  ]], jpath))
  T.eq(code, 0, err)
  T.eq(out, "false\tscript.lua:1: interrupted!\n")
  local doc = json.read(jpath)
  T.eq(#doc.sweeps[1].points, 2)
  T.eq(doc.sweeps[1].interrupted, true)
  os.remove(jpath)
end)

T.case("fields that clash with axes or status keep the point's values, with a warning", function()
  local out, err, code = run_script([[
    local r = cu.sweep{name="clash", quiet=true, axes={{"name",{"a"}}},
      run=function() return {name="bench", status="weird", ms=1} end}
    print(r.rows[1].name, r.rows[1].status, r.rows[1].ms)
  ]])
  T.eq(code, 0, err)
  T.eq(out, "a\tok\t1\n")
  T.truthy(err:find("run returned fields named like 'name', 'status'", 1, true)
    or err:find("run returned fields named like 'status', 'name'", 1, true), err)
end)

T.case("no progress bar when stderr is not a terminal", function()
  local _, err, code = run_script([[
    cu.sweep{quiet=true, axes={{"n",{1,2,3}}}, run=function(p) return p.n end}
  ]])
  T.eq(code, 0)
  T.eq(err, "")
end)

T.case("a progress bar on a terminal", function()
  if not os.execute("command -v script >/dev/null 2>&1") then T.skip("no `script` to make a terminal") end
  local path = tmp(".lua")
  write(path, [[cu.sweep{quiet=true, axes={{"n",{1,2}},{"t",{"f32"}}}, run=function(p) return p.n end}]])
  local cmd = string.format("%s --backend host %s", S.shell_quote(S.culua_path()), S.shell_quote(path))
  local p = assert(io.popen("script -qec " .. S.shell_quote(cmd) .. " /dev/null 2>&1", "r"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  T.truthy(out:find("\r[>" .. (" "):rep(19) .. "] 1/2 n=1 t=f32", 1, true), out)
  T.truthy(out:find("\r[" .. ("="):rep(10) .. ">" .. (" "):rep(9) .. "] 2/2 n=2 t=f32", 1, true), out)
  T.truthy(out:find("\r\27[K", 1, true), "cleared at the end")
end)

os.exit(T.run())
