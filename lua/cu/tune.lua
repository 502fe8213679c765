-- cu.tune: which configuration of a kernel is fastest (docs/tuning.md).
--
--   local best, tbl = cu.tune{kernel = fn_or_kernel_or_expression, space = {TILE = {8, 16, 32}},
--                             args = {...}, check = function(result, p) ... end}
--
-- Every candidate (a point of the space) runs inside a point of cu.sweep: built or compiled, run
-- once and checked, then timed with cu.bench. With isolate = true each point is a child process,
-- so a candidate that faults the GPU, exits or hangs becomes a failed row and the search goes on.
-- The search (exhaustive, random, coordinate descent) decides its next sweep from the rows of the
-- previous ones only: an isolated child re-running the script makes the same decisions.

local cu = require "cu"

local M = {}

local getinfo = debug and debug.getinfo
local json = cu.json

-- ---- errors in Lua's own style ----

-- "script.lua:12: ": the line of the script that called cu.tune (the first Lua frame outside
-- culua's own modules).
local function where()
  if not getinfo then return "" end
  for level = 2, 60 do
    local info = getinfo(level, "Sl")
    if not info then break end
    if info.currentline and info.currentline > 0 and info.source:sub(1, 8) ~= "@lua/cu/" then
      return info.short_src .. ":" .. info.currentline .. ": "
    end
  end
  return ""
end

-- The constructor of cu.Error values, from the binding (src/lua/tune.cpp: env.error); absent when
-- this module is required and called directly, then errors are plain strings.
local make_error

-- Raises the message as a cu.Error of `kind` ("value", "type", "unsupported"), located at the
-- script's line, for the function `func` (and its argument `arg`), as the bindings raise theirs.
local function raise(kind, message, func, arg)
  local at = where()
  if make_error then error(make_error(kind, message, at:sub(1, -3), func, arg), 0) end
  error(at .. message, 0)
end
local function arg_error(msg, kind)
  raise(kind or "value", "bad argument #1 to 'tune' (" .. msg .. ")", "cu.tune", 1)
end
local function opt_error(name, msg, kind) arg_error("option '" .. name .. "': " .. msg, kind) end
local function fail(msg) raise("value", "tune: " .. msg, "cu.tune") end
-- "type" when v is not of Lua type `expected` (the option has the wrong type), else "value".
local function kind_for(v, expected) return type(v) == expected and "value" or "type" end

local function typename(v)
  local mt = getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if type(name) == "string" then return name end
  return type(v)
end

local function is_type(v, name)
  if type(v) ~= "userdata" then return false end
  if typename(v) == name then return true end
  return tostring(v):sub(1, #name + 1) == name .. ":" or tostring(v):sub(1, #name + 1) == name .. "("
end

local function callable(v)
  if type(v) == "function" then return true end
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, "__call") ~= nil
end

-- ---- values as text (labels, keys) ----

local function num_text(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return string.format("%.1f", x) end
  return string.format("%.17g", x)
end

-- A value of the space as text: 16, "f32" -> f32, {16, 16} -> 16x16, true.
local function value_text(v)
  local t = type(v)
  if t == "number" then return num_text(v) end
  if t == "string" or t == "boolean" then return tostring(v) end
  if t == "table" then
    local parts, plain = {}, true
    for i = 1, #v do
      if type(v[i]) ~= "number" then plain = false end
      parts[i] = value_text(v[i])
    end
    if plain and #parts > 0 and next(v, #v > 0 and #v or nil) == nil then return table.concat(parts, "x") end
    local keys = {}
    for k in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= #v) then keys[#keys + 1] = tostring(k) end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. value_text(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return t
end

-- The same text, typed (the cache key tells 16 from "16").
local function value_key(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = value_key(v[i]) end
    local keys = {}
    for k in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= #v) then keys[#keys + 1] = tostring(k) end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. value_key(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return value_text(v)
end

-- 64-bit FNV-1a of a string, as 16 hex digits.
local function fnv1a64(s)
  local h = -3750763034362895579 -- 14695981039346656037 as a signed 64-bit integer
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return string.format("%016x", h)
end

-- ---- the space ----

local RESERVED = { status = true, error = true, metric = true, round = true, bench = true }

-- axes: list of {name=, values=}, in order.
local function read_space(space, order)
  if type(space) ~= "table" then
    opt_error("space", "table of parameters {name = {values}} expected, got " .. typename(space), "type")
  end
  local axes, seen = {}, {}
  local function add(name, values, where_)
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      opt_error("space", where_ .. " must be named by an identifier, got " .. value_text(name))
    end
    if seen[name] then opt_error("space", "parameter '" .. name .. "' is given twice") end
    if RESERVED[name] then opt_error("space", "'" .. name .. "' cannot be a parameter name") end
    if type(values) ~= "table" then
      opt_error("space", "parameter '" .. name .. "' must be a list of values, got " .. typename(values), "type")
    end
    if #values == 0 then opt_error("space", "parameter '" .. name .. "' has no values") end
    local texts = {}
    for i = 1, #values do
      local v = values[i]
      local t = type(v)
      if t ~= "number" and t ~= "string" and t ~= "boolean" and t ~= "table" then
        opt_error("space", string.format("parameter '%s' value %d is a %s (numbers, strings, booleans or tables)",
          name, i, typename(v)), "type")
      end
      if t == "number" and v ~= v then opt_error("space", "parameter '" .. name .. "' value " .. i .. " is nan") end
      local k = value_key(v)
      if texts[k] then
        opt_error("space", string.format("parameter '%s' has the value %s twice", name, value_text(v)))
      end
      texts[k] = true
    end
    seen[name] = true
    axes[#axes + 1] = { name = name, values = values }
  end
  if #space > 0 then
    if order ~= nil then opt_error("order", "order= is for a space given as a map") end
    for k in pairs(space) do
      if not (math.type(k) == "integer" and k >= 1 and k <= #space) then
        opt_error("space", "a list of {name, values} pairs or a map {name = values}, not both")
      end
    end
    for i = 1, #space do
      local pair = space[i]
      if type(pair) ~= "table" or type(pair[1]) ~= "string" then
        opt_error("space", "space[" .. i .. "] must be a pair {name, values}")
      end
      add(pair[1], pair[2], "space[" .. i .. "]")
    end
  else
    local names = {}
    for k in pairs(space) do
      if type(k) ~= "string" then opt_error("space", "parameter names must be strings, got " .. typename(k), "type") end
      names[#names + 1] = k
    end
    if #names == 0 then opt_error("space", "the space is empty") end
    if order ~= nil then
      if type(order) ~= "table" then
        opt_error("order", "list of parameter names expected, got " .. typename(order), "type")
      end
      local given = {}
      for _, n in ipairs(order) do
        if space[n] == nil then opt_error("order", "order names '" .. tostring(n) .. "', which is not a parameter") end
        given[n] = true
      end
      table.sort(names)
      for _, n in ipairs(names) do
        if not given[n] then opt_error("order", "order does not name parameter '" .. n .. "'") end
      end
      names = order
    else
      table.sort(names)
    end
    for _, n in ipairs(names) do add(n, space[n], "parameter") end
  end
  return axes
end

local function point_count(axes)
  local n = 1
  for _, a in ipairs(axes) do n = n * #a.values end
  return n
end

-- The idx-th point (1-based) in cartesian order, first axis outermost: a list of value indices.
local function point_at(axes, idx)
  local at, rest = {}, idx - 1
  for i = #axes, 1, -1 do
    local n = #axes[i].values
    at[i] = rest % n + 1
    rest = rest // n
  end
  return at
end

local function params_of(axes, at)
  local p = {}
  for i, a in ipairs(axes) do p[a.name] = a.values[at[i]] end
  return p
end

local function label_of(axes, p)
  local parts = {}
  for i, a in ipairs(axes) do parts[i] = a.name .. "=" .. value_text(p[a.name]) end
  return table.concat(parts, " ")
end

local function copy_params(axes, p)
  local q = {}
  for _, a in ipairs(axes) do q[a.name] = p[a.name] end
  return q
end

-- ---- a seeded generator (xoshiro-like splitmix64), independent of math.random ----

local function generator(seed)
  local state = seed
  return function(n) -- an integer in [1, n]
    state = state + -7046029254386353131 -- 0x9E3779B97F4A7C15
    local z = state
    z = (z ~ (z >> 30)) * -4658895280553007687 -- 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * -7723592293110705685 -- 0x94D049BB133111EB
    z = z ~ (z >> 31)
    return (z >> 1) % n + 1
  end
end

-- ---- the candidate's work (inside a sweep point) ----

local function substitute(expr, p)
  return (expr:gsub("[%a_][%w_]*", function(id)
    local v = p[id]
    if v == nil then return nil end
    if type(v) == "table" then error("parameter '" .. id .. "' is a table and cannot appear in '" .. expr .. "'", 0) end
    return value_text(v)
  end))
end

local function list_of_strings(v, what)
  if v == nil then return {} end
  if type(v) == "string" then return { v } end
  if type(v) ~= "table" then error(what .. " must be a string or a list of strings, got " .. typename(v), 0) end
  local out = {}
  for i = 1, #v do
    if type(v[i]) ~= "string" then error(what .. "[" .. i .. "] must be a string, got " .. typename(v[i]), 0) end
    out[i] = v[i]
  end
  return out
end

-- The NVRTC options of one candidate of `source =`: the spec's options (or what options(p)
-- returns), -DNAME=value for every parameter named in capitals, and the parameter `options` (a
-- string or a list) as they are.
local function compile_options(spec_options, axes, p)
  if type(spec_options) == "function" then spec_options = spec_options(copy_params(axes, p)) end
  local opts = list_of_strings(spec_options, "options")
  for _, a in ipairs(axes) do
    local v = p[a.name]
    if a.name == "options" then
      for _, o in ipairs(list_of_strings(v, "parameter 'options'")) do opts[#opts + 1] = o end
    elseif a.name:match("^[%u_][%u%d_]*$") then
      if type(v) == "boolean" then v = v and 1 or 0 end
      opts[#opts + 1] = "-D" .. a.name .. "=" .. value_text(v)
    end
  end
  return opts
end

local FLOATS = { f32 = true, f64 = true, f16 = true, bf16 = true, c64 = true, c128 = true }

-- Before the checked launch, float arrays passed to non-const pointer parameters are filled with
-- NaN, so that a candidate that leaves its output unwritten fails the check.
local function poison_outputs(k, args)
  local params = k.params
  for i, a in ipairs(args) do
    local prm = params[i]
    if prm and is_type(a, "cu.Array") and prm.type:find("*", 1, true) and not prm.type:find("const", 1, true)
        and FLOATS[a.dtype] then
      a:fill(0 / 0)
    end
  end
end

-- Runs one candidate: set up, one checked call, then cu.bench. Returns what the sweep records.
local function run_candidate(s, p)
  local fn, checked
  if s.form == "function" then
    local f = s.kernel(copy_params(s.axes, p))
    if not callable(f) then
      error("kernel(p) must return the function to time, got " .. typename(f), 0)
    end
    fn = f
    checked = function() return (fn()) end
  else
    local k
    if s.form == "kernel" then
      k = s.kernel
    elseif s.form == "template" then
      k = s.module:kernel(substitute(s.kernel, p))
    else -- source
      local m = cu.compile(s.source, { name = s.name .. ".cu", options = compile_options(s.options, s.axes, p) })
      k = m:kernel(substitute(s.kernel, p))
    end
    local cfg = s.launch
    if type(cfg) == "function" then cfg = cfg(copy_params(s.axes, p)) end
    if type(cfg) ~= "table" then error("launch(p) must return a table {grid=, block=}, got " .. typename(cfg), 0) end
    local args = s.args
    if type(args) == "function" then
      args = args(copy_params(s.axes, p))
      if type(args) ~= "table" then
        error("args(p) must return the list of kernel arguments, got " .. typename(args), 0)
      end
    end
    local kc = k:configure(cfg)
    local n = #args
    fn = function() kc(table.unpack(args, 1, n)) end
    checked = function()
      poison_outputs(k, args)
      fn()
      return args
    end
  end
  if s.check then
    local result = checked()
    cu.sync() -- a fault of the candidate is its own error, not the check's
    local ok, passed, reason = pcall(s.check, result, copy_params(s.axes, p))
    if not ok then
      local kind = cu.error_kind(passed)
      if kind == "interrupted" or kind == "fatal" or kind == "limit" then error(passed, 0) end -- not the check's
      error("check raised: " .. tostring(passed), 0)
    end
    if not passed then
      return { rejected = reason ~= nil and tostring(reason) or "check returned " .. tostring(passed) }
    end
  end
  return cu.bench(fn, s.bench)
end

-- ---- rounds (one cu.sweep each) ----

local function lookup(row, path)
  local v = row
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

-- Runs the candidates (a list of parameter tables) as one sweep; returns their rows.
local function run_round(s, candidates, natural)
  s.round = s.round + 1
  local sweep = { name = string.format("tune %s %s round %d", s.name, s.key_hash:sub(1, 8), s.round),
    quiet = true, json = s.json, csv = s.csv, isolate = s.isolate, timeout = s.timeout }
  if natural then
    local axes = {}
    for i, a in ipairs(s.axes) do axes[i] = { a.name, a.values } end
    sweep.axes = axes
    sweep.run = function(pt) return run_candidate(s, pt) end
  else
    local labels, by_label = {}, {}
    for i, p in ipairs(candidates) do
      local l = label_of(s.axes, p)
      if by_label[l] then l = l .. " #" .. i end
      labels[i], by_label[l] = l, p
    end
    sweep.axes = { { "candidate", labels } }
    sweep.run = function(pt) return run_candidate(s, by_label[pt.candidate]) end
  end
  local ok, results = pcall(cu.sweep, sweep)
  if not ok then
    -- cu.sweep checks isolate= and timeout=: its message becomes tune's own
    local option, why
    local shown, text = pcall(tostring, results) -- a message, or a cu.Error object
    if shown and type(text) == "string" then
      option, why = text:match("bad argument #1 to '[%w_.]*sweep' %(option '([%w_]+)': (.*)%)$")
    end
    if option == "isolate" or option == "timeout" then opt_error(option, why, cu.error_kind(results)) end
    error(results, 0)
  end
  local rows = {}
  for i, r in ipairs(results.rows) do
    local row = copy_params(s.axes, candidates[i])
    row.round = s.round
    if r.status ~= "ok" then
      row.status, row.error = "failed", tostring(r.error or r.status)
    elseif r.rejected ~= nil then
      row.status, row.error = "rejected", tostring(r.rejected)
    else
      local v = lookup(r, s.metric)
      if type(v) ~= "number" or v ~= v then
        row.status, row.error = "failed", "the bench result has no number at '" .. s.metric .. "'"
      else
        row.status, row.metric = "ok", v
      end
      row.bench = r
    end
    rows[i] = row
    s.rows[#s.rows + 1] = row
  end
  return rows
end

local function better(s, a, b) -- a strictly better than b (ok rows)
  if b == nil then return true end
  if s.higher then return a.metric > b.metric end
  return a.metric < b.metric
end

local function best_row(s, rows)
  local best
  for _, r in ipairs(rows) do
    if r.status == "ok" and better(s, r, best) then best = r end
  end
  return best
end

-- Fields of a cu.bench result: a parameter named like one of them would lose its column in the
-- sweep's rows, so such spaces run as one axis of candidates.
local BENCH_FIELDS = { "name", "backend", "device", "device_index", "mode", "samples", "warmup", "gpu", "cpu",
  "times", "cpu_times", "GBps", "TFLOPs", "hot", "gated", "launch_bound", "stop", "clock", "throttled",
  "throttled_samples", "throttle_reasons", "notes", "elapsed", "options", "graph", "eager", "rejected" }

local function search_exhaustive(s)
  local total = point_count(s.axes)
  local n = s.budget and math.min(s.budget, total) or total
  local candidates = {}
  for i = 1, n do candidates[i] = params_of(s.axes, point_at(s.axes, i)) end
  local natural = n == total
  for _, a in ipairs(s.axes) do
    for _, f in ipairs(BENCH_FIELDS) do natural = natural and a.name ~= f end
  end
  run_round(s, candidates, natural)
end

local function search_random(s)
  local total = point_count(s.axes)
  if s.budget >= total then return search_exhaustive(s) end
  local rand = generator(s.seed)
  local swapped, picked = {}, {}
  for i = 1, s.budget do -- a partial Fisher-Yates shuffle of 1..total, with the swaps in a map
    local j = i - 1 + rand(total - i + 1)
    local vi, vj = swapped[i] or i, swapped[j] or j
    swapped[i], swapped[j] = vj, vi
    picked[i] = vj
  end
  table.sort(picked)
  local candidates = {}
  for i, idx in ipairs(picked) do candidates[i] = params_of(s.axes, point_at(s.axes, idx)) end
  run_round(s, candidates, false)
end

local function search_descent(s)
  local left = s.budget or math.huge
  local current = copy_params(s.axes, s.start)
  local done = {} -- label -> row
  local function line(axis)
    local rows = {}
    for _, v in ipairs(axis.values) do
      local q = copy_params(s.axes, current)
      q[axis.name] = v
      rows[#rows + 1] = { params = q, label = label_of(s.axes, q) }
    end
    return rows
  end
  while true do
    local moved = false
    for _, axis in ipairs(s.axes) do
      local todo = {}
      for _, c in ipairs(line(axis)) do
        if not done[c.label] and #todo < left then todo[#todo + 1] = c.params end
      end
      if #todo > 0 then
        local rows = run_round(s, todo, false)
        for i, r in ipairs(rows) do done[label_of(s.axes, todo[i])] = r end
        left = left - #todo
      end
      local here = done[label_of(s.axes, current)]
      local cands = {}
      for _, c in ipairs(line(axis)) do cands[#cands + 1] = done[c.label] end
      local b = best_row(s, cands)
      if b and b ~= here and (here == nil or here.status ~= "ok" or better(s, b, here)) then
        current = copy_params(s.axes, b)
        moved = true
      end
      if left <= 0 then return end
    end
    if not moved then return end
  end
end

-- ---- the cache ----

local function cache_file(opt)
  if type(opt) == "string" then return opt end
  local getenv = os and os.getenv
  local dir = getenv and getenv("CULUA_CACHE_DIR")
  if not dir or dir == "" then
    local xdg = getenv and getenv("XDG_CACHE_HOME")
    if xdg and xdg ~= "" then
      dir = xdg .. "/culua"
    else
      local home = getenv and getenv("HOME")
      if not home or home == "" then return nil end
      dir = home .. "/.cache/culua"
    end
  end
  return dir .. "/tune.json", dir
end

-- The entries of the cache file; a missing, unreadable or corrupt file has none.
local function cache_read(path)
  local f = io.open(path, "rb")
  if not f then return {}, false end
  local text = f:read("a")
  f:close()
  local doc = text and json.decode(text)
  if type(doc) ~= "table" or doc.format ~= "culua-tune" or type(doc.entries) ~= "table" then
    return {}, true
  end
  local entries = {}
  for k, v in pairs(doc.entries) do
    if type(k) == "string" and type(v) == "table" then entries[k] = v end
  end
  return entries, false
end

-- The space's own values of a cached best, or nil when the entry does not fit the space.
local function cached_best(s, entry)
  if type(entry) ~= "table" or type(entry.best) ~= "table" or type(entry.metric) ~= "number" then return nil end
  local best = {}
  for _, a in ipairs(s.axes) do
    local want = entry.best[a.name]
    if want == nil then return nil end
    local key = value_key(want)
    for _, v in ipairs(a.values) do
      if value_key(v) == key then best[a.name] = v end
    end
    if best[a.name] == nil then return nil end
  end
  return best
end

local function warn(msg)
  if not io then return end
  io.stderr:write("culua: warning: cu.tune: " .. msg .. "\n")
  io.stderr:flush()
end

local function cache_write(path, dir, key, entry)
  local entries = cache_read(path)
  entries[key] = entry
  local ok, text = pcall(json.encode, { format = "culua-tune", format_version = 1, entries = entries }, { indent = 1 })
  if not ok then
    warn("the cache entry cannot be written as JSON (" .. tostring(text) .. ")")
    return
  end
  local tmp = string.format("%s.tmp.%s.%d.%d", path, tostring({}):match("0x(%x+)") or "0", os.time(),
    math.floor((os.clock() * 1e6) % 1e9))
  local f = io.open(tmp, "wb")
  if not f and dir and os.execute then
    os.execute("mkdir -p '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null")
    f = io.open(tmp, "wb")
  end
  if not f then
    warn("cannot write the cache file " .. path)
    return
  end
  f:write(text, "\n")
  f:close()
  local moved, err = os.rename(tmp, path)
  if not moved then
    os.remove(tmp)
    warn("cannot write the cache file " .. path .. ": " .. tostring(err))
  end
end

-- ---- the results object ----

local Results = {}
local space_of = setmetatable({}, { __mode = "k" }) -- results -> the axes of their space
Results.__index = function(t, k)
  if math.type(k) == "integer" then return rawget(t, "rows")[k] end
  return Results[k]
end
Results.__len = function(t) return #rawget(t, "rows") end

local function is_time(metric)
  local last = metric:match("([^.]+)$")
  return last == "median" or last == "mean" or last == "min" or last == "max" or last == "p10"
    or last == "p90" or last == "ms" or last == "cpu_enqueue" or last == "gpu_queued"
end

local function sig4(x)
  if x == 0 then return "0" end
  local digits = math.max(0, 3 - math.floor(math.log(math.abs(x), 10)))
  return string.format("%." .. math.min(digits, 12) .. "f", x)
end

local function first_line(s, max)
  s = tostring(s):match("^[^\n]*")
  if #s > max then s = s:sub(1, max - 3) .. "..." end
  return (s:gsub("|", "\\|"))
end

function Results:markdown()
  local rows, axes = rawget(self, "rows"), self.axes
  local scale, unit = 1, ""
  if is_time(self.metric) then
    local times = {}
    for _, r in ipairs(rows) do if r.metric then times[#times + 1] = r.metric end end
    table.sort(times)
    local typical = times[(#times + 1) // 2]
    if typical and typical < 1 then scale, unit = 1000, " (µs)" else unit = " (ms)" end
  end
  local header = {}
  for i, a in ipairs(axes) do header[i] = a end
  if self.search == "descent" then header[#header + 1] = "round" end
  header[#header + 1] = self.metric .. unit
  header[#header + 1] = "status"
  local lines = { string.format("### %s (%s%s)", self.name, self.search, self.cached and ", cached" or ""), "" }
  local cells = { header }
  for _, r in ipairs(rows) do
    local c = {}
    for i, a in ipairs(axes) do c[i] = value_text(r[a]) end
    if self.search == "descent" then c[#c + 1] = tostring(r.round or "") end
    c[#c + 1] = r.metric and sig4(r.metric * scale) or ""
    local st = r.status
    if r == self.best then st = "ok, best" end
    if r.error then st = st .. ": " .. first_line(r.error, 100) end
    c[#c + 1] = st
    cells[#cells + 1] = c
  end
  local width = {}
  for _, c in ipairs(cells) do
    for i, v in ipairs(c) do width[i] = math.max(width[i] or 3, utf8.len(v) or #v) end
  end
  local numeric = {}
  for i = 1, #header do
    numeric[i] = true
    for k = 2, #cells do
      if cells[k][i] ~= "" and not tonumber((cells[k][i]:gsub("x", ""))) then numeric[i] = false end
    end
    if #cells == 1 or i == #header then numeric[i] = false end
  end
  for k, c in ipairs(cells) do
    local out = {}
    for i, v in ipairs(c) do
      local pad = string.rep(" ", width[i] - (utf8.len(v) or #v))
      out[i] = numeric[i] and pad .. v or v .. pad
    end
    lines[#lines + 1] = "| " .. table.concat(out, " | ") .. " |"
    if k == 1 then
      local rule = {}
      for i = 1, #c do rule[i] = numeric[i] and string.rep("-", width[i] - 1) .. ":" or string.rep("-", width[i]) end
      lines[#lines + 1] = "| " .. table.concat(rule, " | ") .. " |"
    end
  end
  if self.best then
    lines[#lines + 1] = ""
    lines[#lines + 1] = string.format("best: %s, %s = %s%s", label_of(space_of[self], self.best), self.metric,
      sig4(self.best.metric * scale), unit:gsub("[()]", ""))
  end
  return table.concat(lines, "\n")
end
Results.__tostring = Results.markdown

-- The rows as plain tables: parameters (tables as text such as 16x16, unless raw), status, metric,
-- error, round.
function Results:list(raw)
  local out = {}
  for i, r in ipairs(rawget(self, "rows")) do
    local err = r.error
    if raw and err and not utf8.len(err) then err = err:gsub("[\128-\255]", "?") end -- JSON needs UTF-8
    local c = { status = r.status, metric = r.metric, error = err, round = r.round }
    for _, a in ipairs(self.axes) do
      local v = r[a]
      c[a] = (type(v) == "table" and not raw) and value_text(v) or v
    end
    out[i] = c
  end
  return out
end

function Results:json()
  return json.encode({ name = self.name, search = self.search, metric = self.metric,
    cached = self.cached, best = self.best and self:list()[self.best_index] or json.null,
    rows = #self > 0 and self:list() or json.null }, { indent = 1 })
end

-- Plots the metric of every ok row: x = the first parameter, one line per value of the others.
function Results:plot(opts)
  if type(opts) == "string" then opts = { file = opts } end
  if type(opts) ~= "table" then
    raise("type", "bad argument #1 to 'plot' (file name or options table expected, got " .. typename(opts) .. ")",
      "plot", 1)
  end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  local axes = self.axes
  o.x = o.x or axes[1]
  o.y = o.y or "metric"
  if o.series == nil and #axes > 1 then
    local rest = {}
    for i = 2, #axes do rest[#rest + 1] = axes[i] end
    o.series = rest
  end
  o.title = o.title or self.name
  o.ylabel = o.ylabel or (self.metric .. (is_time(self.metric) and " (ms)" or ""))
  local rows = {}
  for _, r in ipairs(self:list()) do
    if r.status == "ok" then rows[#rows + 1] = r end
  end
  return cu.plot(rows, o)
end

-- ---- cu.tune ----

local OPTIONS = { "name", "kernel", "space", "order", "args", "check", "bench", "metric", "search", "budget",
  "seed", "start", "launch", "module", "source", "options", "key", "size", "cache", "isolate", "timeout",
  "quiet", "json", "csv", "plot" }
local KNOWN = {}
for _, k in ipairs(OPTIONS) do KNOWN[k] = true end

local function describe_args(args)
  if type(args) == "function" then return "function" end
  local parts = {}
  for i, a in ipairs(args) do
    if is_type(a, "cu.Array") then
      parts[i] = a.dtype .. "[" .. value_text(a.shape) .. "]"
    elseif type(a) == "number" or type(a) == "string" or type(a) == "boolean" then
      parts[i] = value_key(a)
    elseif type(a) == "table" then
      parts[i] = value_key(a)
    else
      parts[i] = typename(a)
    end
  end
  return table.concat(parts, ",")
end

local function source_of(s, spec)
  if spec.key ~= nil then return "key=" .. spec.key end
  if s.form == "function" then
    local info = getinfo and getinfo(s.kernel, "S")
    if not info then return nil end
    return "lua=" .. info.short_src .. ":" .. info.linedefined
  elseif s.form == "kernel" then
    return "kernel=" .. s.kernel.name .. "|" .. s.kernel.signature
  elseif s.form == "template" then
    return "template=" .. fnv1a64(s.module.source) .. "|" .. s.kernel
  end
  local options = table.concat(s.options_list, " ")
  if type(s.options) == "function" then
    local info = getinfo and getinfo(s.options, "S")
    options = "options=" .. (info and (info.short_src .. ":" .. info.linedefined) or "function")
  end
  return "source=" .. fnv1a64(s.source) .. "|" .. s.kernel .. "|" .. options
end

function M.tune(spec, env)
  env = env or {}
  make_error = env.error
  if type(spec) ~= "table" then
    arg_error("table {kernel=, space=, ...} expected, got " .. (env.none and "no value" or typename(spec)), "type")
  end
  for k in pairs(spec) do
    if not KNOWN[k] then
      arg_error("unknown option '" .. tostring(k) .. "'; the options are " .. table.concat(OPTIONS, ", "))
    end
  end
  local s = { rows = {}, round = 0 }
  s.axes = read_space(spec.space, spec.order)
  local names = {}
  for i, a in ipairs(s.axes) do names[i] = a.name end

  -- what runs
  local kernel = spec.kernel
  if type(kernel) == "function" then
    s.form = "function"
  elseif is_type(kernel, "cu.Kernel") then
    s.form = "kernel"
  elseif type(kernel) == "string" then
    if spec.source ~= nil then
      if type(spec.source) ~= "string" then
        opt_error("source", "string expected, got " .. typename(spec.source), "type")
      end
      if spec.module ~= nil then opt_error("module", "give module= or source=, not both") end
      s.form, s.source = "source", spec.source
    elseif spec.module ~= nil then
      if not is_type(spec.module, "cu.Module") then
        opt_error("module", "cu.Module expected (from cu.compile), got " .. typename(spec.module), "type")
      end
      s.form, s.module = "template", spec.module
    else
      opt_error("kernel", "a kernel name or template expression needs module= (a cu.Module) or source= (CUDA C++)")
    end
  else
    opt_error("kernel", "function, cu.Kernel or kernel name expected, got " .. typename(kernel), "type")
  end
  s.kernel = kernel
  if s.form ~= "source" and spec.source ~= nil then opt_error("source", "source= needs kernel= naming its kernel") end
  if s.form ~= "template" and s.form ~= "source" and spec.module ~= nil then
    opt_error("module", "module= needs kernel= naming a kernel or template of it")
  end
  if s.form ~= "source" and spec.options ~= nil then opt_error("options", "NVRTC options are for source=") end
  if s.form == "source" then
    local list = {}
    if type(spec.options) ~= "function" then
      local ok
      ok, list = pcall(list_of_strings, spec.options, "options")
      if not ok then opt_error("options", list, "type") end
    end
    s.options, s.options_list = spec.options, list
  end
  if s.form == "function" then
    if spec.launch ~= nil then opt_error("launch", "launch= is for kernels; kernel(p) returns the function to time") end
  else
    if type(spec.launch) ~= "table" and type(spec.launch) ~= "function" then
      opt_error("launch", "table {grid=, block=} or function(p) expected, got " .. typename(spec.launch), "type")
    end
    s.launch = spec.launch
  end
  if spec.args ~= nil and type(spec.args) ~= "table" and type(spec.args) ~= "function" then
    opt_error("args", "list of kernel arguments or function(p) expected, got " .. typename(spec.args), "type")
  end
  s.args = spec.args or {}
  if spec.check ~= nil and not callable(spec.check) then
    opt_error("check", "function(result, p) expected, got " .. typename(spec.check), "type")
  end
  s.check = spec.check
  if spec.bench ~= nil and type(spec.bench) ~= "table" then
    opt_error("bench", "table of cu.bench options expected, got " .. typename(spec.bench), "type")
  end
  s.bench = spec.bench
  if spec.metric ~= nil and (type(spec.metric) ~= "string" or not spec.metric:match("^[%a_][%w_]*[%w_.]*$")) then
    opt_error("metric", "a field of the bench result such as \"gpu.median\" expected, got " .. value_text(spec.metric),
      kind_for(spec.metric, "string"))
  end
  s.metric = spec.metric or "gpu.median"
  local last = s.metric:match("([^.]+)$"):lower()
  s.higher = last == "gbps" or last == "tflops" or last == "gflops"

  -- the search
  local search = spec.search
  if search == nil then search = "exhaustive" end
  if search ~= "exhaustive" and search ~= "random" and search ~= "descent" then
    opt_error("search", "unknown search " .. value_text(search) .. " (exhaustive, random or descent)",
      kind_for(search, "string"))
  end
  s.search = search
  if spec.budget ~= nil then
    if math.type(spec.budget) ~= "integer" or spec.budget <= 0 then
      opt_error("budget", "positive integer expected, got " .. value_text(spec.budget), kind_for(spec.budget, "number"))
    end
    s.budget = spec.budget
  elseif search == "random" then
    opt_error("budget", "search 'random' needs budget= (how many candidates to try)")
  end
  if spec.seed ~= nil then
    if math.type(spec.seed) ~= "integer" then
      opt_error("seed", "integer expected, got " .. value_text(spec.seed), kind_for(spec.seed, "number"))
    end
    if search ~= "random" then opt_error("seed", "seed= is for search 'random'") end
  end
  s.seed = spec.seed or 1
  if spec.start ~= nil then
    if search ~= "descent" then opt_error("start", "start= is for search 'descent'") end
    if type(spec.start) ~= "table" then
      opt_error("start", "table of parameters expected, got " .. typename(spec.start), "type")
    end
    local start = {}
    for k in pairs(spec.start) do
      local found = false
      for _, a in ipairs(s.axes) do found = found or a.name == k end
      if not found then opt_error("start", "'" .. tostring(k) .. "' is not a parameter of the space") end
    end
    for _, a in ipairs(s.axes) do
      local v = spec.start[a.name]
      if v == nil then
        start[a.name] = a.values[(#a.values + 1) // 2]
      else
        for _, x in ipairs(a.values) do
          if value_key(x) == value_key(v) then start[a.name] = x end
        end
        if start[a.name] == nil then
          opt_error("start", string.format("%s = %s is not a value of the space", a.name, value_text(v)))
        end
      end
    end
    s.start = start
  elseif search == "descent" then
    s.start = {}
    for _, a in ipairs(s.axes) do s.start[a.name] = a.values[(#a.values + 1) // 2] end
  end

  -- identity, outputs, cache
  if spec.name ~= nil and (type(spec.name) ~= "string" or spec.name == "") then
    opt_error("name", "non-empty string expected, got " .. value_text(spec.name), kind_for(spec.name, "string"))
  end
  local default_name = "tune"
  if s.form == "kernel" then
    default_name = tostring(kernel.name):match("^[%w_]+") or "tune"
  elseif s.form ~= "function" then
    default_name = kernel:match("^[%w_]+") or "tune"
  end
  s.name = spec.name or default_name
  if spec.key ~= nil and type(spec.key) ~= "string" then
    opt_error("key", "string expected, got " .. typename(spec.key), "type")
  end
  if spec.size ~= nil then
    local t = type(spec.size)
    if t ~= "number" and t ~= "string" and t ~= "table" then
      opt_error("size", "number, string or table expected, got " .. typename(spec.size), "type")
    end
  end
  if spec.quiet ~= nil and type(spec.quiet) ~= "boolean" then
    opt_error("quiet", "boolean expected, got " .. typename(spec.quiet), "type")
  end
  for _, o in ipairs({ "json", "csv" }) do
    if spec[o] ~= nil and type(spec[o]) ~= "string" then
      opt_error(o, "file name expected, got " .. typename(spec[o]), "type")
    end
  end
  if spec.plot ~= nil and type(spec.plot) ~= "string" and type(spec.plot) ~= "table" then
    opt_error("plot", "file name or cu.plot options expected, got " .. typename(spec.plot), "type")
  end
  s.json, s.csv, s.isolate, s.timeout = spec.json, spec.csv, spec.isolate, spec.timeout
  if spec.cache ~= nil and type(spec.cache) ~= "boolean" and type(spec.cache) ~= "string" then
    opt_error("cache", "boolean or file name expected, got " .. typename(spec.cache), "type")
  end

  local devices = cu.devices()
  local dev = devices[cu.device() + 1] or {}
  local src = source_of(s, spec)
  local space_parts = {}
  for i, a in ipairs(s.axes) do
    local vs = {}
    for j, v in ipairs(a.values) do vs[j] = value_key(v) end
    space_parts[i] = a.name .. "=" .. table.concat(vs, ",")
  end
  local key = table.concat({ "culua-tune 1", "backend=" .. cu.backend, "device=" .. tostring(dev.name),
    "cc=" .. tostring(dev.cc), "driver=" .. tostring(env.driver), "runtime=" .. tostring(env.runtime),
    "culua=" .. cu.version, "source=" .. tostring(src), "args=" .. describe_args(s.args),
    "size=" .. (spec.size ~= nil and value_key(spec.size) or ""), "space=" .. table.concat(space_parts, ";"),
    "search=" .. search .. (s.budget and (" budget=" .. s.budget) or "") ..
    (search == "random" and (" seed=" .. s.seed) or "") ..
    (search == "descent" and (" start=" .. label_of(s.axes, s.start)) or ""),
    "metric=" .. s.metric }, "|")
  s.key, s.key_hash = key, fnv1a64(key)

  local tbl = setmetatable({ name = s.name, axes = names, search = search, metric = s.metric,
    key = key, cached = false, rows = s.rows }, Results)
  space_of[tbl] = s.axes

  local path, dir
  if spec.cache then
    if not io then opt_error("cache", "not available without the io library (the sandbox has none)", "unsupported") end
    if src == nil then
      opt_error("cache", "a Lua function's source is unknown here (no debug library): give key=", "unsupported")
    end
    path, dir = cache_file(spec.cache)
    if not path then
      warn("no cache folder ($CULUA_CACHE_DIR, $XDG_CACHE_HOME and $HOME are unset): not cached")
    end
    tbl.cache_file = path
  end
  if path then
    local entries, corrupt = cache_read(path)
    if corrupt and not spec.quiet then
      warn("the cache file " .. path .. " is not a cu.tune cache: it will be rewritten")
    end
    local entry = entries[key]
    local best = entry and cached_best(s, entry)
    if best then
      local rows = {}
      if type(entry.rows) == "table" then
        for _, r in ipairs(entry.rows) do
          local row = cached_best(s, { best = r, metric = 0 })
          if row and (r.status == "ok" or r.status == "rejected" or r.status == "failed") then
            row.status = r.status
            row.metric = type(r.metric) == "number" and r.metric or nil
            row.error = type(r.error) == "string" and r.error or nil
            row.round = math.type(r.round) == "integer" and r.round or nil
            rows[#rows + 1] = row
            if row.status == "ok" and value_key(copy_params(s.axes, row)) == value_key(best) and not tbl.best then
              tbl.best, tbl.best_index = row, #rows
            end
          end
        end
      end
      tbl.rows = rows
      if not tbl.best then
        rows[#rows + 1] = copy_params(s.axes, best)
        rows[#rows].status, rows[#rows].metric = "ok", entry.metric
        tbl.best, tbl.best_index = rows[#rows], #rows
      end
      tbl.cached, tbl.tuned = true, type(entry.date) == "string" and entry.date or nil
      if not spec.quiet then print(tostring(tbl) .. "\n") end
      if spec.plot ~= nil then tbl:plot(spec.plot) end
      return best, tbl
    end
  end

  local t0 = os.time()
  if search == "exhaustive" then
    search_exhaustive(s)
  elseif search == "random" then
    search_random(s)
  else
    search_descent(s)
  end
  tbl.seconds = os.time() - t0
  tbl.rounds = s.round
  local best = best_row(s, s.rows)
  if best then
    tbl.best = best
    for i, r in ipairs(s.rows) do if r == best then tbl.best_index = i end end
  end
  if not spec.quiet then print(tostring(tbl) .. "\n") end
  if not best then
    local counts, why = { failed = 0, rejected = 0 }, {}
    for _, r in ipairs(s.rows) do
      counts[r.status] = (counts[r.status] or 0) + 1
      if #why < 8 then why[#why + 1] = label_of(s.axes, r) .. ": " .. r.status .. ": " .. first_line(r.error, 200) end
    end
    if #s.rows > #why then why[#why + 1] = "..." end
    fail(string.format("no candidate passed (%d failed, %d rejected):\n  %s", counts.failed, counts.rejected,
      table.concat(why, "\n  ")))
  end
  if spec.plot ~= nil then tbl:plot(spec.plot) end
  if path then
    cache_write(path, dir, key, { best = copy_params(s.axes, best), metric = best.metric, metric_name = s.metric,
      date = os.date("!%Y-%m-%dT%H:%M:%SZ"), device = dev.name, rows = tbl:list(true) })
  end
  return copy_params(s.axes, best), tbl
end

return M
