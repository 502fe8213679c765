-- cu.script, the helper of the experiment scripts: key=value options and --flags from `arg`, the
-- error naming an argument that is neither, integer and number options with their defaults, and
-- the RESULT lines (their format, and printed together at the end).
local T = require "cu.testing"
local script = require "cu.script"

-- The error raised by fn (the whole message: script.args raises it without a position).
local function error_of(fn)
  local ok, err = pcall(fn)
  T.eq(ok, false, "an error expected")
  return err
end

-- What fn prints, line by line (print replaced for the call).
local function printed(fn)
  local lines = {}
  local real_print = print
  print = function(...) -- luacheck: ignore 121 (captures what the results print)
    local parts = table.pack(...)
    for i = 1, parts.n do parts[i] = tostring(parts[i]) end
    lines[#lines + 1] = table.concat(parts, "\t", 1, parts.n)
  end
  local ok, err = pcall(fn)
  print = real_print -- luacheck: ignore 121
  if not ok then error(err, 0) end
  return table.concat(lines, "\n")
end

T.case("options and flags", function()
  local opt, flags = script.args({ "n=512", "--quick", "plot=out.png", "--no-isolate", "--results" },
    "key=value, --quick or --results")
  T.eq(opt.n, "512")
  T.eq(opt.plot, "out.png")
  T.eq(flags.quick, true)
  T.eq(flags.results, true)
  T.eq(flags["no-isolate"], true)
  T.eq(flags.deltas, nil)
  T.eq(opt.quick, nil, "a flag is not an option")
end)

T.case("no arguments: arg may be nil or empty", function()
  local opt, flags = script.args(nil, "key=value")
  T.eq(next(opt), nil)
  T.eq(next(flags), nil)
  opt, flags = script.args({}, "key=value")
  T.eq(next(opt), nil)
  T.eq(next(flags), nil)
end)

T.case("values are kept as text, up to the end of the argument", function()
  local opt = script.args({ "counts=1,10,100", "expr=a=b", "empty=", "n=1", "n=2", "dt=1e-4" }, "key=value")
  T.eq(opt.counts, "1,10,100")
  T.eq(opt.expr, "a=b")
  T.eq(opt.empty, "")
  T.eq(opt.n, "2", "the last of a repeated key")
  T.eq(opt.dt, "1e-4")
end)

T.case("anything else is an error naming the argument and what the script expects", function()
  for _, bad in ipairs({ "512", "-q", "--", "=5", "a.b=1", "--=x" }) do
    T.eq(error_of(function() script.args({ "n=1", bad, "--quick" }, "key=value, --quick or --results") end),
      "unknown argument '" .. bad .. "' (expected key=value, --quick or --results)")
  end
  T.eq(error_of(function() script.args({ "x" }, "n=, steps= or --quick") end),
    "unknown argument 'x' (expected n=, steps= or --quick)")
  T.raises(function() script.args({}) end, "expected must be a string")
end)

T.case("integer and number options", function()
  local opt = script.args({ "n=64", "big=1e3", "half=2.5", "word=abc", "none=", "dt=1e-4" }, "key=value")
  T.eq(script.int(opt, "n", 1), 64)
  T.eq(math.type(script.int(opt, "n", 1)), "integer")
  T.eq(script.int(opt, "big", 1), 1000, "a whole float is an integer")
  T.eq(math.type(script.int(opt, "big", 1)), "integer")
  T.eq(script.int(opt, "absent", 7), 7)
  T.eq(script.int(opt, "absent", nil), nil)
  -- Not integers: the default, as the scripts always did.
  T.eq(script.int(opt, "half", 7), 7)
  T.eq(script.int(opt, "word", 7), 7)
  T.eq(script.int(opt, "none", 7), 7)
  T.eq(script.number(opt, "dt", 1), 1e-4)
  T.eq(script.number(opt, "half", 1), 2.5)
  T.eq(script.number(opt, "n", 1), 64)
  T.eq(script.number(opt, "word", 0.5), 0.5)
  T.eq(script.number(opt, "absent", 0.5), 0.5)
end)

T.case("RESULT lines", function()
  T.eq(script.line("n", 512), "RESULT n=512")
  T.eq(script.line("ms", string.format("%.6f", 1.5)), "RESULT ms=1.500000")
  T.eq(script.line("ratio", 0.25), "RESULT ratio=0.25")
  T.eq(script.line("whole", 2.0), "RESULT whole=2.0")
  T.eq(script.line("nccl", tostring(false)), "RESULT nccl=false")
  T.eq(script.line("delta", "1,-2"), "RESULT delta=1,-2")
end)

T.case("results are kept in order and printed together", function()
  local results = script.results()
  T.eq(printed(function() results:add("n", 16) end), "", "add prints nothing")
  results:add("speedup", string.format("%.4f", 3))
  results:add("op", "add")
  T.eq(results.lines, { "RESULT n=16", "RESULT speedup=3.0000", "RESULT op=add" })
  T.eq(printed(function() results:print() end), "RESULT n=16\nRESULT speedup=3.0000\nRESULT op=add")
  -- The lines read back as the tests of the experiments read them.
  local read = {}
  for key, value in printed(function() results:print() end):gmatch("RESULT ([%w_]+)=([^\n]*)") do
    read[key] = tonumber(value) or value
  end
  T.eq(read, { n = 16, speedup = 3, op = "add" })
  T.eq(script.results().lines, {}, "each list is new")
end)

T.case("the functions are those of the annotations (lua/meta/cu.lua)", function()
  local f = assert(io.open("lua/meta/cu.lua", "rb"))
  local db = require("cu.help").parse(f:read("a"))
  f:close()
  local function names(class, methods)
    local annotated, live = {}, {}
    for _, m in ipairs(T.truthy(db.classes[class], "---@class " .. class).methods) do
      annotated[#annotated + 1] = m.method
    end
    for k, v in pairs(methods) do
      if type(v) == "function" and k:sub(1, 2) ~= "__" then live[#live + 1] = k end
    end
    table.sort(annotated)
    table.sort(live)
    T.eq(annotated, live, class)
  end
  names("cu.script", script)
  names("cu.ScriptResults", getmetatable(script.results()).__index)
end)

os.exit(T.run())
