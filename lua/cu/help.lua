-- cu.help: descriptions of the cu API, read from the annotation file lua/meta/cu.lua (the single
-- source of truth, also what the Lua Language Server reads). culua compiles that file's text into
-- the binary; cu.help(x [, opts]) calls help(text, x, opts) below with it.
--
--   M.parse(text)            the annotations as a table (also used by the coverage test)
--   M.help(text, x, opts)    prints the description of x, or returns it with opts.text
--
-- The file's layout: "-- ## Title" starts a group; a run of "---" lines (description, then
-- ---@tags) documents the line after it: "function cu.name(...) end", "function Type:method(...)
-- end", "local Type = {}" (binding a ---@class to the name its methods use) or "cu.sub = {}".

local M = {}

-- The cu module (also where it is not a global: require "cu" from a stock Lua).
local cu = package.loaded["cu"] or rawget(_G, "cu")

-- ---------------------------------------------------------------------------------------------
-- Parsing.

-- A type at the start of s: brackets nest, and whitespace ends it only outside them. Returns the
-- type and the rest of s.
local function read_type(s)
  s = s:gsub("^%s+", "")
  local depth, i = 0, 1
  while i <= #s do
    local c = s:sub(i, i)
    if c == "(" or c == "[" or c == "{" or c == "<" then
      depth = depth + 1
    elseif c == ")" or c == "]" or c == "}" or c == ">" then
      depth = depth - 1
    elseif c:match("%s") and depth <= 0 then
      break
    end
    i = i + 1
  end
  return s:sub(1, i - 1), s:sub(i):gsub("^%s+", "")
end

-- The text after a type: an optional "# " before a description.
local function description(rest)
  return (rest:gsub("^#%s*", ""))
end

-- "fun(a:T,b?:U):R" as {params = {"a", "b?"}, ret = "R"}.
local function parse_fun(t)
  local inside, ret = t:match("^fun(%b())(.*)$")
  if not inside then return nil end
  inside = inside:sub(2, -2)
  local params, depth, start = {}, 0, 1
  for i = 1, #inside + 1 do
    local c = inside:sub(i, i)
    if c == "(" or c == "{" or c == "[" or c == "<" then
      depth = depth + 1
    elseif c == ")" or c == "}" or c == "]" or c == ">" then
      depth = depth - 1
    elseif (c == "," and depth == 0) or i == #inside + 1 then
      local p = inside:sub(start, i - 1):gsub("^%s+", "")
      local name = p:match("^([%w_%.]+%??)")
      if name and name ~= "self" then params[#params + 1] = name end
      start = i + 1
    end
  end
  return { params = params, ret = ret:match("^%s*:%s*(.+)$") }
end

local function new_doc()
  return { desc = {}, params = {}, returns = {}, fields = {}, operators = {}, overloads = {},
    values = {} }
end

-- Parses the annotation text. The result:
--   entries  every documented item in file order: {kind = "function"|"class"|"alias", name =
--            "cu.zeros" | "cu.Array:sum" | "cu.Array" | ..., short = "zeros" | "Array:sum" | ...,
--            desc = {lines}, params, returns, overloads, fields, operators, group, ...}
--   by_name  entries by name; classes by class name (cu.Array); aliases by name (cu.DType)
--   classes  class entries by name, each with .methods (function entries, file order)
--   groups   {title =, entries = {...}} in file order
function M.parse(text)
  local db = { entries = {}, by_name = {}, classes = {}, groups = {} }
  local locals = {}  -- "Array" -> "cu.Array" (from "local Array = {}" after ---@class cu.Array)
  local group = { title = "", entries = {} }
  db.groups[1] = group
  local doc = new_doc()
  local has_doc = false
  local line_no = 0

  local function add(e)
    e.group = group.title
    db.entries[#db.entries + 1] = e
    group.entries[#group.entries + 1] = e
    if db.by_name[e.name] then
      error(string.format("annotations: %s is documented twice (line %d)", e.name, e.line))
    end
    db.by_name[e.name] = e
  end

  local function finish(code)
    if not has_doc then return end
    local d = doc
    doc, has_doc = new_doc(), false
    d.line = line_no
    if d.class then
      d.kind = "class"
      d.name = d.class
      d.methods = {}
      local var = code:match("^local%s+([%w_]+)%s*=%s*{%s*}")
      local path = code:match("^([%w_%.]+)%s*=%s*{%s*}")
      if var then
        locals[var] = d.name
        d.var = var
      elseif path then
        d.path = path
      end
      d.short = d.name:gsub("^cu%.", "")
      db.classes[d.name] = d
      add(d)
    elseif d.alias then
      d.kind = "alias"
      d.name = d.alias
      d.short = d.name:gsub("^cu%.", "")
      add(d)
    else
      local target, args = code:match("^function%s+([%w_%.:]+)%s*(%b())")
      if not target then
        error(string.format("annotations line %d: a description followed by %q", line_no, code))
      end
      d.kind = "function"
      d.args = args:sub(2, -2)
      local owner, sep, member = target:match("^([%w_%.]+)([:%.])([%w_]+)$")
      if owner and locals[owner] then
        d.class = nil
        d.owner = locals[owner]
        d.method = member
        d.colon = sep == ":"
        d.name = d.owner .. sep .. member
        d.short = d.name:gsub("^cu%.", "")
        d.display = d.short
        local cls = db.classes[d.owner]
        cls.methods[#cls.methods + 1] = d
      else
        d.name = target
        d.short = target:gsub("^cu%.", "")
        d.display = target
        d.path = target
        -- A function of a table declared as a class (cu.host.empty, cu.trace.start).
        local parent = target:match("^(.+)%.[%w_]+$")
        for _, cls in pairs(db.classes) do
          if parent and cls.path == parent then
            cls.methods[#cls.methods + 1] = d
          end
        end
      end
      add(d)
    end
  end

  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line_no = line_no + 1
    local title = line:match("^%-%- ## (.+)$")
    local body = line:match("^%-%-%-(.*)$")
    if title then
      finish("")
      group = { title = title, entries = {} }
      db.groups[#db.groups + 1] = group
    elseif body then
      has_doc = true
      local tag, rest = body:match("^@(%w+)%s*(.*)$")
      if tag == "meta" then
        has_doc = false
      elseif tag == "class" then
        doc.class = rest:match("^([%w_%.]+)")
      elseif tag == "alias" then
        local name, t = rest:match("^([%w_%.]+)%s*(.*)$")
        doc.alias, doc.type = name, t ~= "" and t or nil
      elseif tag == "param" then
        local name, r = rest:match("^([%w_%.]+%??)%s*(.*)$")
        local t, more = read_type(r)
        doc.params[#doc.params + 1] = { name = name, type = t, desc = description(more) }
      elseif tag == "return" then
        local t, more = read_type(rest)
        local name, d = more:match("^([%w_%.]+)%s*(.*)$")
        if not name or more:match("^#") then name, d = nil, description(more) end
        doc.returns[#doc.returns + 1] = { type = t, name = name, desc = d }
      elseif tag == "field" then
        local name, r = rest:match("^(%b[])%s*(.*)$")
        if not name then name, r = rest:match("^([%w_]+%??)%s*(.*)$") end
        local t, more = read_type(r)
        doc.fields[#doc.fields + 1] = { name = name, type = t, desc = description(more) }
      elseif tag == "operator" then
        doc.operators[#doc.operators + 1] = rest
      elseif tag == "overload" then
        doc.overloads[#doc.overloads + 1] = rest
      elseif tag == nil then
        local value = body:match("^|%s*(.*)$")
        if value then
          local v, d = value:match("^(%S+)%s*#?%s*(.*)$")
          doc.values[#doc.values + 1] = { value = v, desc = d }
        else
          doc.desc[#doc.desc + 1] = body:gsub("^ ", "")
        end
      end
    else
      finish(line)
    end
  end
  finish("")
  return db
end

-- ---------------------------------------------------------------------------------------------
-- Rendering.

local WIDTH = 96

-- Description lines as paragraphs, wrapped to the width with an indent.
local function wrap(lines, indent)
  local out, words, col = {}, {}, 0
  local function flush()
    if #words > 0 then out[#out + 1] = indent .. table.concat(words, " ") end
    words, col = {}, 0
  end
  for _, l in ipairs(lines) do
    if l:match("^%s*$") then
      flush()
      out[#out + 1] = ""
    else
      for w in l:gmatch("%S+") do
        if col > 0 and col + 1 + #w + #indent > WIDTH then flush() end
        words[#words + 1] = w
        col = col + (col > 0 and 1 or 0) + #w
      end
    end
  end
  flush()
  return table.concat(out, "\n")
end

-- Rows of {a, b, ...} as aligned columns (the last one is not padded; a cell longer than `cap`,
-- default 24 characters, does not widen its column).
local function columns(rows, indent, cap)
  cap = cap or 24
  local widths = {}
  for _, r in ipairs(rows) do
    for i = 1, #r - 1 do
      if #r[i] <= cap then widths[i] = math.max(widths[i] or 0, #r[i]) end
    end
  end
  local out = {}
  for _, r in ipairs(rows) do
    local parts = {}
    for i = 1, #r do
      parts[i] = i < #r and (r[i] .. string.rep(" ", (widths[i] or 0) - #r[i])) or r[i]
    end
    out[#out + 1] = (indent .. table.concat(parts, "  ")):gsub("%s+$", "")
  end
  return table.concat(out, "\n")
end

-- The first sentence of a description, at most `max` characters.
local function first_sentence(lines, max)
  local parts = {}
  for _, l in ipairs(lines) do
    if l:match("^%s*$") then break end
    parts[#parts + 1] = l
  end
  local text = table.concat(parts, " ")
  local s = text:match("^(.-%.)%s") or text
  if #s > max then s = s:sub(1, max - 3):gsub("%s+%S*$", "") .. "..." end
  return s
end

-- Words wrapped into lines of at most `width` characters.
local function wrap_words(words, width)
  local lines, line = {}, ""
  for _, w in ipairs(words) do
    if #line > 0 and #line + 1 + #w > width then
      lines[#lines + 1] = line
      line = w
    else
      line = #line > 0 and (line .. " " .. w) or w
    end
  end
  if #line > 0 then lines[#lines + 1] = line end
  return lines
end

-- "cu.zeros(shape, dtype?, opts?) -> cu.Array"
local function signature(e)
  local names = {}
  for _, p in ipairs(e.params) do names[#names + 1] = p.name end
  if #names == 0 and e.args:match("%.%.%.") then names[1] = "..." end
  local rets = {}
  for _, r in ipairs(e.returns) do rets[#rets + 1] = r.type end
  local sig = e.display .. "(" .. table.concat(names, ", ") .. ")"
  if #rets > 0 then sig = sig .. " -> " .. table.concat(rets, ", ") end
  return sig
end

local function overload_signature(e, o)
  local f = parse_fun(o)
  if not f then return e.display .. ": " .. o end
  local sig = e.display .. "(" .. table.concat(f.params, ", ") .. ")"
  if f.ret then sig = sig .. " -> " .. f.ret end
  return sig
end

-- The class named in a type ("cu.CreateOptions?" -> the class), if it is an options record.
local function options_class(db, t)
  local name = t:gsub("%?$", "")
  for part in name:gmatch("[^|]+") do
    local c = db.classes[part]
    if c and (part:match("Options?$") or part:match("Spec$") or part:match("Config$")) then
      return c
    end
  end
  return nil
end

local function field_rows(fields)
  local rows = {}
  for _, f in ipairs(fields) do rows[#rows + 1] = { f.name, f.type, f.desc or "" } end
  return rows
end

local function render_function(db, e, out)
  out[#out + 1] = signature(e)
  for _, o in ipairs(e.overloads) do out[#out + 1] = overload_signature(e, o) end
  if #e.desc > 0 then
    out[#out + 1] = ""
    out[#out + 1] = wrap(e.desc, "  ")
  end
  if #e.params > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "  Parameters:"
    local rows = {}
    for _, p in ipairs(e.params) do rows[#rows + 1] = { p.name, p.type, p.desc } end
    out[#out + 1] = columns(rows, "    ")
  end
  if #e.returns > 0 then
    local rets = {}
    for _, r in ipairs(e.returns) do
      local d = r.desc ~= "" and (" (" .. r.desc .. ")") or ""
      rets[#rets + 1] = r.type .. (r.name and (" " .. r.name) or "") .. d
    end
    out[#out + 1] = "  Returns: " .. table.concat(rets, ", ")
  end
  for _, p in ipairs(e.params) do
    local c = options_class(db, p.type)
    if c and #c.fields > 0 then
      out[#out + 1] = "  Options (" .. c.name .. "):"
      out[#out + 1] = columns(field_rows(c.fields), "    ")
    end
  end
end

local OPERATORS = { add = "+", sub = "-", mul = "*", div = "/", idiv = "//", mod = "%", pow = "^",
  unm = "unary -", len = "#", concat = "..", call = "()", band = "&", bor = "|", bxor = "~", shl = "<<",
  shr = ">>", bnot = "unary ~" }

local function render_class(c, out, header)
  out[#out + 1] = header or c.name
  if #c.desc > 0 then
    out[#out + 1] = ""
    out[#out + 1] = wrap(c.desc, "  ")
  end
  if #c.fields > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "  Fields:"
    out[#out + 1] = columns(field_rows(c.fields), "    ")
  end
  if #c.operators > 0 then
    local ops, seen = {}, {}
    for _, o in ipairs(c.operators) do
      local name = o:match("^(%w+)")
      local sym = OPERATORS[name] or name
      if not seen[sym] then
        seen[sym] = true
        ops[#ops + 1] = sym
      end
    end
    out[#out + 1] = "  Operators: " .. table.concat(ops, " ")
  end
  for _, o in ipairs(c.overloads) do
    local f = parse_fun(o)
    out[#out + 1] = "  Call: " .. (f and ("(" .. table.concat(f.params, ", ") .. ")" ..
      (f.ret and (" -> " .. f.ret) or "")) or o)
  end
  if #c.methods > 0 then
    out[#out + 1] = ""
    local what = "Methods"
    for _, m in ipairs(c.methods) do
      if not m.colon then what = "Functions" end
    end
    if #c.methods > 16 then
      local names = {}
      for _, m in ipairs(c.methods) do names[#names + 1] = m.method or m.short end
      out[#out + 1] = string.format("  %s (help(\"%s\") describes one):", what,
        c.methods[1].display)
      for _, l in ipairs(wrap_words(names, WIDTH - 4)) do out[#out + 1] = "    " .. l end
    else
      out[#out + 1] = "  " .. what .. ":"
      for _, m in ipairs(c.methods) do
        out[#out + 1] = "    " .. signature(m)
        if #m.desc > 0 then out[#out + 1] = "        " .. first_sentence(m.desc, WIDTH - 8) end
      end
    end
  end
end

local function render_alias(e, out)
  out[#out + 1] = e.name .. (e.type and (" = " .. e.type) or "")
  if #e.desc > 0 then
    out[#out + 1] = ""
    out[#out + 1] = wrap(e.desc, "  ")
  end
  if #e.values > 0 then
    local rows, plain = {}, {}
    for _, v in ipairs(e.values) do
      if v.desc ~= "" then
        rows[#rows + 1] = { v.value, v.desc }
      else
        plain[#plain + 1] = v.value
      end
    end
    out[#out + 1] = ""
    if #rows > 0 then out[#out + 1] = columns(rows, "    ") end
    for _, l in ipairs(wrap_words(plain, WIDTH - 4)) do out[#out + 1] = "    " .. l end
  end
end

local function render_field(c, f, out)
  out[#out + 1] = c.short .. "." .. f.name .. ": " .. f.type
  if f.desc ~= "" then out[#out + 1] = "  " .. f.desc end
  out[#out + 1] = "  (a field of " .. c.name .. "; help(\"" .. c.short .. "\") describes the type)"
end

local function render(db, e, out)
  if e.kind == "function" then
    render_function(db, e, out)
  elseif e.kind == "class" then
    render_class(e, out)
  else
    render_alias(e, out)
  end
end

-- The overview: every group with its functions and types.
local function overview(db, out)
  out[#out + 1] = "cu: CUDA device arrays, streams, events, run-time kernels and measurement for "
    .. "Lua" .. (cu and cu.version and (" (culua " .. cu.version .. ")") or "")
  out[#out + 1] = "help(x) describes a function, method, type or object: help(cu.zeros), " ..
    "help(\"zeros\"), help(\"Array:sum\"), help(a)."
  out[#out + 1] = ""
  local rows = {}
  for _, g in ipairs(db.groups) do
    local names, seen = {}, {}
    for _, e in ipairs(g.entries) do
      local n
      if e.kind == "function" and not e.owner then
        n = e.short
      elseif (e.kind == "class" and e.var) or e.kind == "alias" then
        n = e.name
      end
      if n and not seen[n] then
        seen[n] = true
        names[#names + 1] = n
      end
    end
    if #names > 0 then
      for i, l in ipairs(wrap_words(names, WIDTH - 24)) do
        rows[#rows + 1] = { i == 1 and g.title or "", l }
      end
    end
  end
  out[#out + 1] = columns(rows, "")
end

-- ---------------------------------------------------------------------------------------------
-- Finding what x is.

local function live_tables()
  local t = { { prefix = "cu.", tbl = cu } }
  if type(cu) == "table" then
    for _, sub in ipairs({ "host", "trace", "json", "mpi" }) do
      if type(rawget(cu, sub)) == "table" then
        t[#t + 1] = { prefix = "cu." .. sub .. ".", tbl = cu[sub] }
      end
    end
  end
  for _, name in ipairs({ "cu.testing", "cu.script" }) do  -- the embedded modules once required
    local m = package.loaded[name]
    if type(m) == "table" then t[#t + 1] = { prefix = name .. ".", tbl = m } end
  end
  return t
end

-- The methods table of a registered type: __index when it is a table, else the upvalue of the
-- __index function (arrays, streams, events keep their methods there).
function M.methods_of(type_name)
  local ok, reg = pcall(function() return debug.getregistry() end)
  local mt = ok and reg and reg[type_name]
  if type(mt) ~= "table" then return nil end
  local index = rawget(mt, "__index")
  if type(index) == "table" then return index end
  if type(index) == "function" and debug.getupvalue then
    local _, up = debug.getupvalue(index, 1)
    if type(up) == "table" then return up end
  end
  return nil
end

local METHOD_TYPES = { "cu.Array", "cu.Stream", "cu.Event", "cu.Graph", "cu.BenchResult",
  "cu.SweepResults" }

-- Every name (annotation style) under which the function f is reachable.
local function names_of(f)
  local names = {}
  for _, t in ipairs(live_tables()) do
    for k, v in pairs(t.tbl) do
      if rawequal(v, f) and type(k) == "string" then names[#names + 1] = t.prefix .. k end
    end
  end
  for _, type_name in ipairs(METHOD_TYPES) do
    local methods = M.methods_of(type_name)
    if methods then
      for k, v in pairs(methods) do
        if rawequal(v, f) and type(k) == "string" then names[#names + 1] = type_name .. ":" .. k end
      end
    end
  end
  if cu and cu.complex then
    local ok, z = pcall(cu.complex, 0)
    if ok then
      for _, k in ipairs({ "abs", "conj" }) do
        if rawequal(z[k], f) then names[#names + 1] = "cu.Complex:" .. k end
      end
    end
  end
  if rawequal(rawget(_G, "help"), f) then names[#names + 1] = "help" end
  table.sort(names, function(a, b)
    local ca, cb = a:find(":", 1, true) ~= nil, b:find(":", 1, true) ~= nil
    if ca ~= cb then return cb end
    return a < b
  end)
  return names
end

-- Entries for a name as the user may write it: "zeros", "cu.zeros", "host.zeros", "Array:sum",
-- "Array.sum", "Array", "Array.shape" (a field), "DType".
local function lookup(db, s)
  local function exact(n)
    return db.by_name[n] or db.by_name["cu." .. n]
  end
  local e = exact(s)
  if e then return { e } end
  local owner, member = s:match("^([%w_%.]+)[:%.]([%w_]+)$")
  if owner then
    local c = db.classes[owner] or db.classes["cu." .. owner]
    if c then
      for _, m in ipairs(c.methods) do
        if m.method == member or m.name:match("[%.:]([%w_]+)$") == member then return { m } end
      end
      for _, f in ipairs(c.fields) do
        if f.name:gsub("%?$", "") == member then
          return { { kind = "field", class = c, field = f } }
        end
      end
    end
  end
  -- A bare method name: every type's method of that name.
  local found = {}
  if not s:find("[%.:]") then
    for _, x in ipairs(db.entries) do
      if x.kind == "function" and x.owner and x.method == s then found[#found + 1] = x end
    end
  end
  return found
end

-- Names that contain s, else those whose description mentions it.
local function suggestions(db, s)
  local low = s:lower():gsub("^cu%.", "")
  local function search(matches)
    local out = {}
    for _, e in ipairs(db.entries) do
      if (e.kind == "function" or e.var or e.kind == "alias") and matches(e) then
        out[#out + 1] = e.short
        if #out >= 12 then break end
      end
    end
    return out
  end
  if low == "" then return {} end
  local out = search(function(e) return e.short:lower():find(low, 1, true) end)
  if #out == 0 then
    out = search(function(e) return table.concat(e.desc, " "):lower():find(low, 1, true) end)
  end
  return out
end

local function not_found(db, what, s, out)
  out[#out + 1] = "cu.help: no help for " .. what .. "."
  local near = s and suggestions(db, s) or {}
  if #near > 0 then out[#out + 1] = "Did you mean: " .. table.concat(near, ", ") .. "?" end
  out[#out + 1] = "help() lists everything."
end

local function describe_array(a)
  if a.freed then return "cu.Array (freed)" end
  local shape = table.concat(a.shape, ", ")
  return string.format("cu.Array: shape {%s}, dtype %s, %s%s (%d element%s, %d bytes)", shape,
    a.dtype, a.location, a.location == "device" and (" " .. a.device) or "", a.size,
    a.size == 1 and "" or "s", a.nbytes)
end

-- The live function an entry documents, if it can be found without creating objects.
local function live_function(e)
  local v
  if e.owner then
    local methods = M.methods_of(e.owner)
    v = methods and rawget(methods, e.method)
  elseif cu then
    v = e.name == "help" and rawget(_G, "help") or cu
    for part in e.name:gsub("^cu%.", ""):gmatch("[^%.]+") do
      v = type(v) == "table" and rawget(v, part) or nil
    end
  end
  return type(v) == "function" and v or nil
end

-- A function's entry, and the other names of the same function ("Also: Array:sum").
local function render_function_value(db, e, f, out)
  render(db, e, out)
  local also = {}
  for _, n in ipairs(f and names_of(f) or {}) do
    if n ~= e.name then also[#also + 1] = (n:gsub("^cu%.(%u)", "%1")) end
  end
  if #also > 0 then out[#out + 1] = "  Also: " .. table.concat(also, ", ") end
end

local function help_value(db, x, out)
  local tx = type(x)
  if x == nil or rawequal(x, cu) or x == "cu" then
    overview(db, out)
    return
  end
  if tx == "string" then
    local found = lookup(db, x)
    if #found == 0 then return not_found(db, string.format("%q", x), x, out) end
    for i, e in ipairs(found) do
      if i > 1 then out[#out + 1] = "" end
      if e.kind == "field" then
        render_field(e.class, e.field, out)
      elseif e.kind == "function" then
        render_function_value(db, e, live_function(e), out)
      else
        render(db, e, out)
      end
    end
    return
  end
  if tx == "function" then
    local names = names_of(x)
    local e
    for _, n in ipairs(names) do
      e = db.by_name[n]
      if e then break end
    end
    if not e then return not_found(db, "this function (it is not part of cu)", nil, out) end
    render_function_value(db, e, x, out)
    return
  end
  if tx == "table" then
    for _, t in ipairs(live_tables()) do
      if rawequal(t.tbl, x) then
        local c = db.classes[t.prefix:sub(1, -2)]
        if c then return render_class(c, out) end
      end
    end
  end
  local mt = getmetatable(x)
  local type_name = type(mt) == "table" and rawget(mt, "__name")
  local c = type_name and db.classes[type_name]
  if c then
    local header
    if type_name == "cu.Array" then
      header = describe_array(x)
    elseif tx == "userdata" or type_name == "cu.Complex" then
      local ok, s = pcall(tostring, x)
      header = ok and s or type_name
    end
    render_class(c, out, header)
    return
  end
  not_found(db, "a " .. (type_name or tx) .. " value", nil, out)
end

local OPTIONS = { text = true }

local cache_text, cache_db

-- help(text, x [, opts]): the description of x from the annotation text.
function M.help(text, x, opts)
  -- A second value that is not a table is ignored: help(require "cu.testing") passes require's
  -- second result.
  if type(opts) ~= "table" then opts = nil end
  if opts then
    for k in pairs(opts) do
      if not OPTIONS[k] then
        error(string.format("bad argument #2 to 'help' (unknown option '%s'; the options are text)",
          tostring(k)), 3)
      end
    end
  end
  if cache_text ~= text then
    cache_db = M.parse(text)
    cache_text = text
  end
  local out = {}
  help_value(cache_db, x, out)
  local s = table.concat(out, "\n") .. "\n"
  if opts and opts.text then return s end
  if io then
    io.write(s)
  else
    print(s:sub(1, -2)) -- the sandbox (docs/sandbox.md) has no io
  end
end

return M
