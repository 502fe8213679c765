-- cu.plot, results:plot, cu.sweep{plot=} and --plot: PNG and SVG files through gnuplot, and clear
-- errors for missing fields, unknown file types, a missing or failing gnuplot.
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

local function have_gnuplot()
  return os.execute("command -v gnuplot >/dev/null 2>&1")
end

local function need_gnuplot()
  if not have_gnuplot() then T.skip("gnuplot is not installed") end
end

local PNG = "\137PNG\r\n\26\n"

local function check_png(path)
  local data = T.truthy(read(path), "no file " .. path)
  T.eq(data:sub(1, 8), PNG, "PNG signature")
  T.truthy(#data > 2000 and #data < 2000000, "PNG size " .. #data)
  return data
end

local function check_svg(path)
  local data = T.truthy(read(path), "no file " .. path)
  T.truthy(data:find("<svg", 1, true), "an <svg element")
  T.truthy(data:find("</svg>%s*$"), "a complete SVG")
  T.truthy(#data > 2000, "SVG size " .. #data)
  return data
end

-- Runs `source` in a child culua; returns stdout+stderr and the exit code.
local function run_script(source, cli, env)
  local path = tmp(".lua")
  write(path, source)
  local p = assert(io.popen(string.format("%s %s --backend host %s %s 2>&1", env or "",
    S.shell_quote(S.culua_path()), cli or "", S.shell_quote(path)), "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

local ROWS = {
  { n = 1024, dtype = "f32", gpu = { median = 0.010 } },
  { n = 4096, dtype = "f32", gpu = { median = 0.020 } },
  { n = 65536, dtype = "f32", gpu = { median = 0.110 } },
  { n = 1024, dtype = "f64", gpu = { median = 0.015 } },
  { n = 4096, dtype = "f64", gpu = { median = 0.035 } },
  { n = 65536, dtype = "f64", gpu = { median = 0.210 } },
  { n = 2048, dtype = "f64", status = "failed", error = "boom" }, -- no y: left out
}

T.case("cu.plot writes a PNG with one line per series", function()
  need_gnuplot()
  local path = tmp(".png")
  T.eq(cu.plot(ROWS, { x = "n", y = "gpu.median", series = "dtype", file = path, title = "copy's time" }), path)
  check_png(path)
end)

T.case("cu.plot writes an SVG with the labels given", function()
  need_gnuplot()
  local path = tmp(".svg")
  cu.plot(ROWS, { x = "n", y = "gpu.median", series = { "dtype" }, file = path, logy = true,
    title = "copy's time", xlabel = "elements", ylabel = "median (ms)" })
  local svg = check_svg(path)
  for _, text in ipairs({ "dtype=f32", "dtype=f64", "copy's time", "elements", "median (ms)", "65536" }) do
    T.truthy(svg:find(text, 1, true), "the SVG shows " .. text)
  end
end)

T.case("text on the x axis is laid out in first-seen order", function()
  need_gnuplot()
  local path = tmp(".svg")
  cu.plot({ { op = "add", ms = 1 }, { op = "mul", ms = 2 }, { op = "fma", ms = 1.5 } },
    { x = "op", y = "ms", file = path })
  local svg = check_svg(path)
  for _, text in ipairs({ "add", "mul", "fma", "time (ms)" }) do
    T.truthy(svg:find(">" .. text .. "<", 1, true), "the SVG shows " .. text)
  end
end)

T.case("sweeps plot: results:plot, plot= and --plot (numbered per sweep)", function()
  need_gnuplot()
  local r = cu.sweep { name = "scaled", quiet = true, axes = { { "n", { 10, 100, 1000 } }, { "k", { 1, 2 } } },
    run = function(p) return { samples = 3, gpu = { median = p.n * p.k * 1e-3, noise = 0.01 } } end }
  local svg = tmp(".svg")
  T.eq(r:plot { file = svg }, svg)
  local text = check_svg(svg)
  T.truthy(text:find("k=1", 1, true) and text:find("k=2", 1, true), "series by the second axis")
  T.truthy(text:find("scaled", 1, true), "the sweep's name as title")
  local png = tmp(".png")
  r:plot(png)
  check_png(png)

  local own = tmp(".png")
  cu.sweep { quiet = true, plot = { file = own, y = "v", series = {} }, axes = { x = { 1, 2, 3 } },
    run = function(p) return { v = p.x * p.x } end }
  check_png(own)

  local cli = tmp(".png")
  local out, code = run_script([[
    cu.sweep{name="one", quiet=true, axes={{"n",{1,2}}}, run=function(p) return p.n end}
    cu.sweep{name="two", quiet=true, axes={{"n",{1,2}}}, run=function(p) return p.n * 2 end}
  ]], "--plot " .. cli)
  T.eq(code, 0, out)
  check_png(cli)
  local second = cli:gsub("%.png$", "-2.png")
  cleanup[#cleanup + 1] = second
  check_png(second)
end)

T.case("bad plot requests are clear errors", function()
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median", file = "plot.jpg" }) end,
    "cannot write 'plot.jpg': the file name must end in .png or .svg")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median" }) end, "needs file=")
  T.raises(function() cu.plot(ROWS, { y = "gpu.median", file = "p.png" }) end, "needs x=")
  T.raises(function() cu.plot(ROWS, { x = "n", file = "p.png" }) end, "needs y=")
  -- the data arguments are asked for first, as a reader gives them: x=, then y=, then file=
  T.raises(function() cu.plot(ROWS, {}) end, "cu.plot needs x= (the field of the horizontal axis)")
  T.raises(function() cu.plot(ROWS, { file = "p.jpg" }) end, "cu.plot needs x=")
  T.raises(function() cu.plot(ROWS, { x = "n" }) end, "cu.plot needs y= (the field of the vertical axis)")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median" }) end,
    "cu.plot needs file= (a .png or .svg file name)")
  T.raises(function() cu.plot(ROWS) end, "expects options {x=, y=, file=}")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median", file = "p.png", colour = "red" }) end,
    "unknown option 'colour'")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median", file = "p.png", series = 3 }) end,
    "series must be a field name or a list of them")
  -- NaN or an infinity would fail inside gnuplot (or vanish from the plot): the row is named.
  local nan = 0 / 0
  T.raises(function() cu.plot({ { n = 1, m = 1 }, { n = nan, m = 2 } }, { x = "n", y = "m", file = "p.png" }) end,
    "rows[2] has")
  T.raises(function() cu.plot({ { n = 1, m = 1 }, { n = nan, m = 2 } }, { x = "n", y = "m", file = "p.png" }) end,
    "rows[2] has nan at x = 'n'; x values must be finite numbers")
  T.raises(function() cu.plot({ { n = math.huge, m = 1 } }, { x = "n", y = "m", file = "p.png" }) end,
    "rows[1] has inf at x = 'n'")
  T.raises(function() cu.plot({ { n = 1, m = 1 }, { n = 2, m = 3 }, { n = 3, m = -math.huge } },
    { x = "n", y = "m", file = "p.png" }) end,
    "rows[3] has -inf at y = 'm'; y values must be finite numbers")
  T.raises(function() cu.plot({ { n = 1, m = nan } }, { x = "n", y = "m", file = "p.png" }) end,
    "rows[1] has nan at y = 'm'; y values must be finite numbers")
  T.raises(function() cu.plot({ { n = 1, m = -nan } }, { x = "n", y = "m", file = "p.png" }) end,
    "rows[1] has nan at y = 'm'")
  if not have_gnuplot() then return end
  local path = tmp(".png")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.mean", file = path }) end,
    "no row has a number at y = 'gpu.mean' (fields of the first row: gpu, dtype, n)")
  T.raises(function() cu.plot(ROWS, { x = "size", y = "gpu.median", file = path }) end,
    "no row with a number at y = 'gpu.median' has a value at x = 'size'")
  T.raises(function() cu.plot({ 1, 2 }, { x = "n", y = "m", file = path }) end,
    "rows[1] is a number; rows must be tables")
  T.raises(function() cu.plot({ { n = 0, m = 1 }, { n = 5, m = 2 } },
    { x = "n", y = "m", file = path, logx = true }) end,
    "logx needs positive values at x = 'n'")
  T.raises(function() cu.plot(ROWS, { x = "n", y = "gpu.median", file = "/nonexistent/dir/p.png" }) end,
    "cannot write /nonexistent/dir/p.png")
  local r = cu.sweep { quiet = true, axes = { n = { 1 } }, run = function() error("always") end }
  T.raises(function() r:plot { file = path } end, "no point of sweep 'sweep' has a numeric result to plot")
end)

T.case("without gnuplot on PATH: a clear error, before a sweep runs", function()
  local empty = tmp(".d")
  assert(os.execute("mkdir " .. empty))
  local out, code = run_script([[
    print(pcall(cu.plot, {{n=1, ms=2}}, {x="n", y="ms", file="never.png"}))
    print(pcall(cu.sweep, {axes={n={1}}, plot={file="never.png"}, run=function() print("ran") end}))
  ]], "", "PATH=" .. empty)
  T.eq(code, 0, out)
  T.eq(out, "false\tcu.plot needs gnuplot (Debian package gnuplot-nox), which was not found on PATH\n" ..
    "false\tcu.sweep's plot= needs gnuplot (Debian package gnuplot-nox), which was not found on PATH\n")
  out, code = run_script([[cu.sweep{axes={n={1}}, run=function() print("ran") end}]], "--plot never.png",
    "PATH=" .. empty)
  T.eq(code, 1)
  T.truthy(out:find("culua --plot needs gnuplot (Debian package gnuplot-nox), which was not found on PATH",
    1, true), out)
  T.truthy(not out:find("ran", 1, true), "the sweep did not run")
  os.remove(empty)
end)

T.case("a failing gnuplot: its messages and exit status in the error; no temporary files left", function()
  local dir, tmpdir = tmp(".d"), tmp(".t")
  assert(os.execute("mkdir " .. dir .. " " .. tmpdir))
  write(dir .. "/gnuplot", "#!/bin/sh\necho 'line 3: fake trouble in the plot' >&2\nexit 3\n")
  assert(os.execute("chmod +x " .. dir .. "/gnuplot"))
  local out, code = run_script([[
    print(pcall(cu.plot, {{n=1, ms=2}}, {x="n", y="ms", file="]] .. tmpdir .. [[/p.svg"}))
  ]], "", "TMPDIR=" .. tmpdir .. " PATH=" .. dir .. ":/usr/bin:/bin")
  T.eq(code, 0, out)
  T.truthy(out:find("false\tgnuplot failed to plot " .. tmpdir .. "/p.svg (exit status 3):\n" ..
    "line 3: fake trouble in the plot", 1, true), out)
  os.remove(dir .. "/gnuplot")
  os.remove(dir)
  os.remove(tmpdir .. "/p.svg")
  local left = io.popen("ls -A " .. tmpdir):read("a")
  T.eq(left, "", "temporary files removed")
  os.remove(tmpdir)
end)

local status = T.run()
for _, f in ipairs(cleanup) do os.remove(f) end
os.exit(status)
