-- Rich output of the Jupyter kernel (culua --jupyter, docs/guide/jupyter.md): the MIME bundle of a
-- value by its culua type: arrays as an HTML table of their elements (elided as numpy elides large
-- arrays), bench results, sweep results and profiles as HTML tables. text/plain is always the
-- value as the REPL prints it; the kernel adds it.
local M = {}

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

local EDGE = 3          -- elements shown at each end of an elided dimension
local THRESHOLD = 1000  -- arrays with more elements are elided, as numpy's printoptions

local function fmt_value(v)
  if type(v) == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return string.format("%.6g", v)
  end
  return esc(tostring(v))
end

-- The indices shown of a dimension of length n: all, or the first and last EDGE with a gap.
local function shown(n, elide)
  local idx = {}
  if not elide or n <= 2 * EDGE then
    for i = 1, n do idx[#idx + 1] = i end
  else
    for i = 1, EDGE do idx[#idx + 1] = i end
    idx[#idx + 1] = false
    for i = n - EDGE + 1, n do idx[#idx + 1] = i end
  end
  return idx
end

local function array_html(a)
  local shape = a.shape
  local parts = { string.format('<div class="culua-array"><code>shape={%s}, dtype=%s, %s%s</code>',
    table.concat(shape, ", "), esc(a.dtype), esc(a.location), a.location == "device" and (" " .. a.device) or "") }
  local ndim = #shape
  if ndim > 2 then
    parts[#parts + 1] = "<pre>" .. esc(tostring(a)) .. "</pre></div>"
    return table.concat(parts)
  end
  local elide = a.size > THRESHOLD
  local t = a:totable()
  parts[#parts + 1] = '<table style="font-family: monospace">'
  if ndim == 0 then
    parts[#parts + 1] = "<tr><td>" .. fmt_value(a:item()) .. "</td></tr>"
  elseif ndim == 1 then
    parts[#parts + 1] = "<tr>"
    for _, i in ipairs(shown(shape[1], elide)) do
      parts[#parts + 1] = "<td>" .. (i and fmt_value(t[i]) or "&hellip;") .. "</td>"
    end
    parts[#parts + 1] = "</tr>"
  else
    for _, i in ipairs(shown(shape[1], elide)) do
      parts[#parts + 1] = "<tr>"
      for _, j in ipairs(shown(shape[2], elide)) do
        local cell = (i and j) and fmt_value(t[i][j]) or "&hellip;"
        parts[#parts + 1] = "<td>" .. cell .. "</td>"
      end
      parts[#parts + 1] = "</tr>"
    end
  end
  parts[#parts + 1] = "</table></div>"
  return table.concat(parts)
end

local function rows_html(rows, columns)
  local parts = { '<table><tr>' }
  for _, c in ipairs(columns) do parts[#parts + 1] = "<th>" .. esc(c) .. "</th>" end
  parts[#parts + 1] = "</tr>"
  for _, r in ipairs(rows) do
    parts[#parts + 1] = "<tr>"
    for _, c in ipairs(columns) do
      local v = r[c]
      parts[#parts + 1] = "<td>" .. (v == nil and "" or fmt_value(v)) .. "</td>"
    end
    parts[#parts + 1] = "</tr>"
  end
  parts[#parts + 1] = "</table>"
  return table.concat(parts)
end

local function ms(v) return v and string.format("%.4g ms", v) or "" end

local function bench_html(r)
  local rows = { { what = "name", value = r.name }, { what = "device", value = r.device },
    { what = "mode", value = r.mode }, { what = "samples", value = r.samples } }
  if r.gpu then
    rows[#rows + 1] = { what = "gpu median", value = ms(r.gpu.median) }
    rows[#rows + 1] = { what = "gpu p10 / p90", value = ms(r.gpu.p10) .. " / " .. ms(r.gpu.p90) }
    rows[#rows + 1] = { what = "noise", value = string.format("%.2f%%", 100 * r.gpu.noise) }
  end
  if r.cpu then rows[#rows + 1] = { what = "cpu median", value = ms(r.cpu.median) } end
  if r.GBps then rows[#rows + 1] = { what = "GB/s", value = string.format("%.1f", r.GBps) } end
  if r.TFLOPs then rows[#rows + 1] = { what = "TFLOP/s", value = string.format("%.2f", r.TFLOPs) } end
  if r.hot then rows[#rows + 1] = { what = "hot gpu median", value = ms(r.hot.gpu.median) } end
  if r.launch_bound then rows[#rows + 1] = { what = "launch-bound", value = "yes" } end
  if r.verdict then rows[#rows + 1] = { what = "verdict", value = r.verdict } end
  return rows_html(rows, { "what", "value" })
end

local function sweep_html(results)
  local rows = results.rows or {}
  local columns, seen = {}, {}
  for _, a in ipairs(results.axes or {}) do
    local name = type(a) == "table" and (a.name or a[1]) or a
    if name and not seen[name] then columns[#columns + 1], seen[name] = name, true end
  end
  local extra = {}
  for _, r in ipairs(rows) do
    for k, v in pairs(r) do
      if type(k) == "string" and not seen[k] and type(v) ~= "table" then extra[k] = true end
    end
  end
  local names = {}
  for k in pairs(extra) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do columns[#columns + 1] = k end
  local flat = {}
  for i, r in ipairs(rows) do
    local f = {}
    for _, c in ipairs(columns) do f[c] = r[c] end
    if type(r.gpu) == "table" and r.gpu.median then f["gpu.median"] = r.gpu.median end
    flat[i] = f
  end
  for _, r in ipairs(rows) do
    if type(r.gpu) == "table" and r.gpu.median then
      columns[#columns + 1] = "gpu.median"
      break
    end
  end
  return string.format("<div><b>%s</b>: %d points</div>", esc(results.name or "sweep"), #rows) ..
      rows_html(flat, columns)
end

-- The bundle of value v whose culua type is `kind` ("cu.Array", ...): a table of MIME type ->
-- text, or nil when there is nothing beyond text/plain.
function M.mimebundle(kind, v)
  if kind == "cu.Array" then
    return { ["text/html"] = array_html(v) }
  elseif kind == "cu.BenchResult" then
    return { ["text/html"] = bench_html(v) }
  elseif kind == "cu.SweepResults" then
    return { ["text/html"] = sweep_html(v) }
  elseif kind == "cu.Profile" then
    return { ["text/html"] = "<pre>" .. esc(tostring(v)) .. "</pre>" }
  end
  return nil
end

return M
