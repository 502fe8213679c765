-- `culua compare OLD.json NEW.json`: matching points, same/faster/slower against the measured noise,
-- added/removed/failed points, exit status, bad input.
package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

local files = {}
local function tmp(suffix)
  local p = os.tmpname()
  os.remove(p)
  p = p .. (suffix or "")
  files[#files + 1] = p
  return p
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- A JSON writer for crafted result files: tables with [1] are arrays.
local function encode(v)
  local t = type(v)
  if t == "table" then
    if v[1] ~= nil or next(v) == nil then
      local parts = {}
      for i, e in ipairs(v) do parts[i] = encode(e) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = string.format("%q: %s", k, encode(v[k])) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif t == "string" then
    return string.format("%q", v)
  end
  return tostring(v)
end

-- A result file: sweeps = { {name=, axes=, points={ {params, result or error} } } }.
local function result_file(sweeps)
  local doc = { format = "culua-results", format_version = 1, culua_version = cu.version,
    backend = "host", device = { name = "test device" }, date = "2026-01-01T00:00:00Z", sweeps = {} }
  for i, s in ipairs(sweeps) do
    local points = {}
    for k, p in ipairs(s.points) do
      if p.error then
        points[k] = { params = p.params, status = "failed", error = p.error, result = {} }
      else
        points[k] = { params = p.params, status = "ok", result = p.result }
      end
    end
    doc.sweeps[i] = { name = s.name, axes = s.axes, points = points }
  end
  local path = tmp(".json")
  write(path, encode(doc))
  return path
end

local function bench(median, noise)
  return { samples = 100, gpu = { median = median, noise = noise }, cpu = { median = median } }
end

-- Runs culua compare with `args`; returns stdout, stderr, exit code.
local function compare(args)
  local err = tmp(".err")
  local p = assert(io.popen(string.format("%s compare %s 2>%s", S.shell_quote(S.culua_path()), args,
    S.shell_quote(err)), "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = io.open(err, "rb")
  local stderr = f and f:read("a") or ""
  if f then f:close() end
  return out, stderr, code
end

-- The rows of the markdown table under the heading "### name...", as cell lists (header first).
local function table_rows(out, name)
  local start = out:find("### " .. name, 1, true)
  assert(start, "no table for " .. name .. " in:\n" .. out)
  local rows = {}
  for line in out:sub(start):gmatch("[^\n]*\n?") do
    if line:sub(1, 1) == "|" then
      if not line:find("^| %-") then
        local cells = {}
        for cell in line:sub(2):gmatch("([^|]*)|") do cells[#cells + 1] = cell:match("^%s*(.-)%s*$") end
        rows[#rows + 1] = cells
      end
    elseif #rows > 0 then
      break
    end
  end
  return rows
end

local OLD = {
  { name = "kernel", axes = { "n" }, points = {
    { params = { n = 1 }, result = bench(1.00, 0.05) },
    { params = { n = 2 }, result = bench(1.00, 0.01) },
    { params = { n = 3 }, result = bench(1.00, 0.01) },
    { params = { n = 4 }, result = bench(1.00, 0.001) },
    { params = { n = 6 }, result = bench(1.00, 0.01) },
    { params = { n = 7 }, result = bench(1.00, 0.01) },
  } },
  { name = "plain", axes = { "n", "dtype" }, points = {
    { params = { n = 1, dtype = "f32" }, result = { ms = 10.0 } },
    { params = { n = 2, dtype = "f32" }, result = { ms = 10.0 } },
  } },
  { name = "throughput", axes = { "n" }, points = {
    { params = { n = 1 }, result = { GBps = 100.0 } },
    { params = { n = 2 }, result = { GBps = 100.0 } },
  } },
}
local NEW = {
  { name = "kernel", axes = { "n" }, points = {
    -- +3%: inside the old run's 5% noise (nvbench's smaller-noise rule would call it slower)
    { params = { n = 1 }, result = bench(1.03, 0.01) },
    { params = { n = 2 }, result = bench(0.90, 0.01) },   -- -10%: faster
    { params = { n = 3 }, result = bench(1.10, 0.04) },   -- +10% beyond 4% noise: slower
    { params = { n = 4 }, result = bench(1.015, 0.001) }, -- +1.5%: below the 2% floor
    { params = { n = 5 }, result = bench(1.00, 0.01) },   -- added
    { params = { n = 7 }, error = "out of memory" },      -- failed
  } },
  { name = "plain", axes = { "dtype", "n" }, points = {  -- other axis order: still matched
    { params = { dtype = "f32", n = 1 }, result = { ms = 10.1 } },
    { params = { dtype = "f32", n = 2 }, result = { ms = 12.0 } },
  } },
  { name = "throughput", axes = { "n" }, points = {
    { params = { n = 1 }, result = { GBps = 120.0 } }, -- higher throughput is better
    { params = { n = 2 }, result = { GBps = 80.0 } },
  } },
}

T.case("points are same, faster or slower against the larger noise and the threshold", function()
  local old, new = result_file(OLD), result_file(NEW)
  local out, err, code = compare(old .. " " .. new)
  T.eq(code, 0, err)
  T.eq(err, "")
  local rows = table_rows(out, "kernel (gpu.median)")
  T.eq(rows[1], { "n", "old (ms)", "new (ms)", "diff", "noise", "status" })
  T.eq(rows[2], { "1", "1.000", "1.030", "+3.0%", "5.0%", "same" })
  T.eq(rows[3], { "2", "1.000", "0.9000", "-10.0%", "1.0%", "faster" })
  T.eq(rows[4], { "3", "1.000", "1.100", "+10.0%", "4.0%", "slower" })
  T.eq(rows[5], { "4", "1.000", "1.015", "+1.5%", "0.1%", "same" })
  T.eq(rows[6], { "5", "", "1.000", "", "", "added" })
  T.eq(rows[7], { "7", "", "", "", "", "failed (new: out of memory)" })
  T.eq(rows[8], { "6", "1.000", "", "", "", "removed" })
  T.eq(#rows, 8)
  rows = table_rows(out, "plain (ms)")
  T.eq(rows[1], { "dtype", "n", "old (ms)", "new (ms)", "diff", "noise", "status" })
  T.eq(rows[2], { "f32", "1", "10.00", "10.10", "+1.0%", "0.0%", "same" })
  T.eq(rows[3], { "f32", "2", "10.00", "12.00", "+20.0%", "0.0%", "slower" })
  rows = table_rows(out, "throughput (GBps)")
  T.eq(rows[1], { "n", "old", "new", "diff", "noise", "status" })
  T.eq(rows[2], { "1", "100.0", "120.0", "+20.0%", "0.0%", "faster" })
  T.eq(rows[3], { "2", "100.0", "80.00", "-20.0%", "0.0%", "slower" })
  T.truthy(out:find("\n11 points: 3 same, 2 faster, 3 slower, 1 added, 1 removed, 1 failed, 0 unknown " ..
    "(threshold 2%)\n", 1, true), out)
  T.truthy(out:find("^old: " .. old:gsub("%p", "%%%0") .. " %(test device"), out)
end)

T.case("--threshold sets the floor; --fail-on-slower sets the exit status", function()
  local old, new = result_file(OLD), result_file(NEW)
  local out, _, code = compare("--threshold 1 " .. old .. " " .. new)
  T.eq(code, 0)
  T.eq(table_rows(out, "kernel")[5][6], "slower", "+1.5% beyond a 1% floor")
  T.eq(table_rows(out, "plain")[2][7], "same", "+1.0% is not beyond 1%")
  out, _, code = compare("--threshold 25 " .. old .. " " .. new)
  T.eq(code, 0)
  T.truthy(out:find("8 same, 0 faster, 0 slower", 1, true), out)
  _, _, code = compare("--fail-on-slower " .. old .. " " .. new)
  T.eq(code, 1)
  _, _, code = compare("--fail-on-slower --threshold 25 " .. old .. " " .. new)
  T.eq(code, 0)
  _, _, code = compare("--fail-on-slower " .. old .. " " .. old)
  T.eq(code, 0)
end)

T.case("--metric compares another field", function()
  local old, new = result_file(OLD), result_file(NEW)
  local out, _, code = compare("--metric cpu.median " .. old .. " " .. new)
  T.eq(code, 0)
  local rows = table_rows(out, "kernel (cpu.median)")
  T.eq(rows[2], { "1", "1.000", "1.030", "+3.0%", "0.0%", "slower" })
  T.eq(table_rows(out, "plain")[2][7], "unknown (no cpu.median in the new file)")
end)

T.case("files from cu.sweep compare with themselves as all same", function()
  local path = tmp(".json")
  local r = cu.sweep { name = "self", quiet = true, json = path, axes = { { "n", { 1, 2, 3 } } },
    run = function(p) return { samples = 5, gpu = { median = p.n * 0.1, noise = 0.01 } } end }
  T.eq(#r.rows, 3)
  local out, err, code = compare(path .. " " .. path)
  T.eq(code, 0, err)
  T.truthy(out:find("3 points: 3 same, 0 faster", 1, true), out)
  T.eq(table_rows(out, "self")[1], { "n", "old (µs)", "new (µs)", "diff", "noise", "status" })
  T.eq(table_rows(out, "self")[4], { "3", "300.0", "300.0", "+0.0%", "1.0%", "same" })
end)

T.case("bad input exits 2 with a clear message", function()
  local good = result_file(OLD)
  local out, err, code = compare(good .. " /nonexistent/new.json")
  T.eq(code, 2)
  T.eq(out, "")
  T.truthy(err:find("cannot read /nonexistent/new.json: No such file or directory", 1, true), err)
  local bad = tmp(".json")
  write(bad, '{"format": "culua-results", "sweeps": [')
  local _
  _, err, code = compare(good .. " " .. bad)
  T.eq(code, 2)
  T.truthy(err:find(bad .. " is not valid JSON", 1, true), err)
  write(bad, '{"benchmarks": []}')
  _, err, code = compare(bad .. " " .. good)
  T.eq(code, 2)
  T.truthy(err:find(bad .. ' is not a culua result file (it has no "format": "culua-results")', 1, true), err)
  write(bad, '{"format": "culua-results", "sweeps": [{"name": "x", "points": [{"status": "ok"}]}]}')
  _, err, code = compare(good .. " " .. bad)
  T.eq(code, 2)
  T.truthy(err:find(bad .. ': sweep 1, point 1: "params" is missing', 1, true), err)
  _, err, code = compare(good)
  T.eq(code, 2)
  T.truthy(err:find("new is required", 1, true), err)
  _, err, code = compare("--bogus " .. good .. " " .. good)
  T.eq(code, 2)
  T.truthy(err:find("--bogus", 1, true), err)
  out, _, code = compare("--help")
  T.eq(code, 0)
  T.truthy(out:find("--fail-on-slower", 1, true), out)
end)

T.case("a bad --threshold is named with the accepted range in a few words", function()
  local good = result_file(OLD)
  for _, v in ipairs({ "abc", "-1", "nan", "inf", "1e400", "2x", "" }) do
    local out, err, code = compare("--threshold '" .. v .. "' " .. good .. " " .. good)
    T.eq({ out, code }, { "", 2 }, v)
    T.truthy(err:find("compare: --threshold: expected a percentage: a finite number, 0 or more, such as 2 " ..
      "or 0.5; got '" .. v .. "'\n", 1, true), err)
    -- The message names the program as invoked (argv[0], as lua.c does); its length is
    -- counted without that path, which depends on where the build lives.
    local plain = err:gsub(S.culua_path():gsub("%p", "%%%0"), "culua")
    T.truthy(#plain < 200, "a short message: " .. plain)
  end
  local out, err, code = compare("--threshold 0 " .. good .. " " .. good)
  T.eq(code, 0, err)
  T.truthy(out:find("(threshold 0%)", 1, true), out)
  out, err, code = compare("--threshold=0.5 " .. good .. " " .. good)
  T.eq(code, 0, err)
  T.truthy(out:find("(threshold 0.5%)", 1, true), out)
end)

local status = T.run()
for _, f in ipairs(files) do os.remove(f) end
os.exit(status)
