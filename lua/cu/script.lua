-- cu.script: the command line and the RESULT lines of experiment scripts (scripts/*.lua).
--
--   local script = require "cu.script"
--   local opt, flags = script.args(arg, "key=value, --quick or --results")
--   local n = script.int(opt, "n", flags.quick and 128 or 4096)
--   local results = script.results()
--   results:add("n", n)                    -- kept as "RESULT n=4096"
--   if flags.results then results:print() end
--
-- An argument is `key=value` (opt.key = "value", a string) or a flag `--word` (flags.word = true);
-- anything else raises "unknown argument 'x' (expected ...)". RESULT lines are `RESULT key=value`,
-- one a line, which tests and the performance suite read back.

local M = {}

-- Splits the script's arguments (the global `arg`; nil counts as none) into options and flags.
-- `expected` says what the script takes, for the message of an argument that is neither.
function M.args(argv, expected)
  assert(type(expected) == "string", "script.args(arg, expected): expected must be a string")
  local opt, flags = {}, {}
  for _, a in ipairs(argv or {}) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if k then
      opt[k] = v
    elseif a:match("^%-%-%w") then
      flags[a:sub(3)] = true
    else
      error("unknown argument '" .. a .. "' (expected " .. expected .. ")", 0)
    end
  end
  return opt, flags
end

-- opt[key] as an integer ("1e3" is 1000); `default` when absent or not an integer.
function M.int(opt, key, default)
  return math.tointeger(tonumber(opt[key])) or default
end

-- opt[key] as a number; `default` when absent or not a number.
function M.number(opt, key, default)
  return tonumber(opt[key]) or default
end

-- "RESULT key=value": value as tostring gives it (format numbers first for a fixed precision).
function M.line(key, value)
  return string.format("RESULT %s=%s", key, value)
end

local Results = {}
Results.__index = Results

-- Keeps the line RESULT key=value.
function Results:add(key, value)
  self.lines[#self.lines + 1] = M.line(key, value)
end

-- Prints the lines kept so far (as one print: the lines joined by newlines).
function Results:print()
  print(table.concat(self.lines, "\n"))
end

-- A list of RESULT lines, printed at the end of the script (after its report for people).
function M.results()
  return setmetatable({ lines = {} }, Results)
end

return M
