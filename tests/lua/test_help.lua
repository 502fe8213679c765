-- cu.help and the global help: descriptions of functions, methods, types and objects from the
-- annotation file lua/meta/cu.lua (embedded in the binary). Run from the repository root.
local T = require "cu.testing"

local function text(x, ...)
  if select("#", ...) > 0 then return cu.help(x, ...) end
  return cu.help(x, { text = true })
end

-- Plain-text search (no patterns).
local function has(haystack, needle, what)
  if not haystack:find(needle, 1, true) then
    error(string.format("%sexpected to find %q in:\n%s", what and (what .. ": ") or "", needle,
      haystack), 2)
  end
end

T.case("the global help is cu.help", function()
  T.truthy(rawequal(help, cu.help), "help == cu.help")
  T.eq(type(cu.help), "function")
end)

T.case("a function: signature, description, parameters, returns, options", function()
  local s = text(cu.zeros)
  T.eq(s:match("^[^\n]*"), "cu.zeros(shape, dtype?, opts?) -> cu.Array")
  has(s, "cu.zeros(shape, opts) -> cu.Array", "the overload")
  has(s, "filled with zeros")
  has(s, "asynchronous")
  has(s, "Parameters:")
  has(s, "dtype?  cu.DType")
  has(s, "Returns: cu.Array")
  has(s, "Options (cu.CreateOptions):")
  has(s, "stream?")
end)

T.case("by name: zeros, cu.zeros and the function give the same text", function()
  T.eq(text("zeros"), text(cu.zeros))
  T.eq(text("cu.zeros"), text(cu.zeros))
  has(text("cu.host.zeros"), "cu.host.zeros(shape, dtype?, opts?) -> cu.Array")
  has(text("host.zeros"), "host array filled with zeros")
  has(text("trace.stop"), "cu.trace.stop(file?) -> cu.TraceSummary")
end)

T.case("methods: Array:sum and a function that is both", function()
  local s = text("Array:sum")
  T.eq(s:match("^[^\n]*"), "Array:sum(opts?) -> cu.Array")
  has(s, "no synchronization")
  has(s, "axis?")
  T.eq(text("cu.Array:sum"), s)
  T.eq(text("Array.sum"), s)
  local f = text(cu.sum)
  T.eq(f:match("^[^\n]*"), "cu.sum(a, opts?) -> cu.Array")
  has(f, "Also: Array:sum")
  local a = cu.zeros(3)
  T.eq(text(a.sum), f)
  T.eq(text("sum"), f)
  has(s, "Also: cu.sum")
  has(text(a.view), "Array:view(shape) -> cu.Array")
  has(text(a.view), "Array:view(...) -> cu.Array", "the overload")
end)

T.case("an array: its shape, dtype, location and methods", function()
  local a = cu.zeros({ 2, 3 }, "i32")
  local s = text(a)
  T.eq(s:match("^[^\n]*"), "cu.Array: shape {2, 3}, dtype i32, device 0 (6 elements, 24 bytes)")
  has(s, "Fields:")
  has(s, "is_contiguous")
  has(s, "Operators: + - * / // % ^ unary - & | ~ << >> unary ~ #")
  has(s, "Methods")
  has(s, "reshape")
  has(s, "argmax")
  has(text(cu.host.ones(1, { pinned = true })),
    "cu.Array: shape {1}, dtype f32, pinned (1 element, 4 bytes)")
  a:free()
  T.eq(text(a):match("^[^\n]*"), "cu.Array (freed)")
  has(text("Array"), "An n-dimensional array")
  has(text("cu.Array"), "An n-dimensional array")
end)

T.case("streams, events, complex values, ledgers, kernel templates", function()
  local st = cu.stream()
  local s = text(st)
  T.eq(s:match("^[^\n]*"), tostring(st))
  has(s, "Stream:sync()")
  has(s, "Stream:wait(x) -> cu.Stream")
  has(text(st.sync), "Stream:sync()")
  local e = text(cu.event())
  has(e, "cu.Event(device=0")
  has(e, "Event:elapsed(stop) -> number")
  has(e, "Operators: -")
  local z = text(cu.complex(1, 2))
  T.eq(z:match("^[^\n]*"), "1+2j")
  has(z, "Complex:abs() -> number")
  has(text(cu.complex(1, 2).conj), "Complex:conj() -> cu.Complex")
  has(text(cu.ledger()), "h2d_bytes")
  has(text(cu.elementwise("f32 x -> f32 y", "y = x")), "What cu.elementwise returns")
  has(text(cu.trace), "cu.trace.start(opts?)")
  has(text(cu.host), "cu.host.rand(shape, dtype?, opts?) -> cu.Array")
  local T2 = require "cu.testing"
  has(text(T2), "testing.raises(fn, needle?, what?) -> string")
  has(text(T2.eq), "testing.eq(actual, expected, what?)")
end)

T.case("fields, aliases and names of several methods", function()
  has(text("Array.shape"), "Array.shape: integer[]")
  has(text("BenchResult.gpu"), "cu.BenchStats")
  local d = text("DType")
  has(d, "cu.DType")
  has(d, '"bf16"')
  has(d, "complex128")
  local done = text("done")
  has(done, "Stream:done() -> boolean")
  has(done, "Event:done() -> boolean")
end)

T.case("the overview lists the functions by group", function()
  local s = text()
  has(s, "help(x) describes")
  has(s, "Arrays")
  has(s, "empty zeros ones full array arange linspace copy")
  has(s, "Reductions")
  has(s, "cu.Stream")
  has(s, "bench")
  T.eq(text(cu), s)
  T.eq(text(nil), s)
end)

T.case("unknown things give a message, not an error", function()
  local s = text("no_such_function")
  has(s, 'no help for "no_such_function"')
  has(s, "help() lists everything")
  has(text("random"), "Did you mean:")
  has(text("random"), "rand")
  has(text("Array:no_such_method"), 'no help for "Array:no_such_method"')
  has(text(print), "no help for this function")
  has(text(io.stdout), "no help for a FILE* value")
  has(text(42), "no help for a number value")
  has(text({}), "no help for a table value")
end)

-- What fn writes with io.write, and the number of values it returns.
local function capture(fn)
  local written = {}
  local write = io.write
  io.write = function(...) -- luacheck: ignore 122 (captures what help prints)
    for i = 1, select("#", ...) do written[#written + 1] = tostring(select(i, ...)) end
  end
  local ok, n = pcall(function() return select("#", fn()) end)
  io.write = write -- luacheck: ignore 122
  T.truthy(ok, tostring(n))
  return table.concat(written), n
end

T.case("printing returns nothing; text=true returns the text", function()
  local written, n = capture(function() return help("zeros") end)
  T.eq(n, 0, "values returned")
  T.eq(written, text("zeros"))
  T.eq(type(text("zeros")), "string")
  T.raises(function() help("zeros", { txt = true }) end, "unknown option 'txt'")
  -- A second value that is not a table (require's second result) is ignored.
  written, n = capture(function() return cu.help(require "cu.testing") end)
  T.eq(n, 0, "values returned")
  has(written, "testing.case(name, fn)")
end)

T.case("the embedded text is the annotation file's", function()
  local f = assert(io.open("lua/meta/cu.lua", "rb"))
  local db = require("cu.help").parse(f:read("a"))
  f:close()
  local checked = 0
  for _, e in ipairs(db.entries) do
    if e.kind == "function" then
      local s = text(e.name)
      has(s, e.display .. "(", e.name)
      has(s, table.concat(e.desc, " "):match("^%S+%s+%S+%s+%S+"), e.name)
      checked = checked + 1
    end
  end
  T.truthy(checked > 100, "functions checked: " .. checked)
end)

os.exit(T.run())
