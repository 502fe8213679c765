-- A small JSON reader for the tests of result files (tests/lua/test_sweep.lua and others): objects
-- become tables, arrays become sequences, null becomes json.null. Raises on invalid input.
--
--   package.path = (arg[0]:match("^(.*)[/\\]") or ".") .. "/?.lua;" .. package.path
--   local json = require "json_reader"
--   local t = json.decode('{"a": [1, 2.5, "x", null]}')

local json = { null = setmetatable({}, { __tostring = function() return "null" end }) }

local escapes = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r",
  t = "\t" }

local function decode(s)
  local pos = 1

  local function fail(what)
    error(string.format("invalid JSON at byte %d: %s", pos, what), 0)
  end

  local function skip()
    pos = s:find("[^ \t\r\n]", pos) or #s + 1
  end

  local value

  local function str()
    pos = pos + 1 -- opening quote
    local parts = {}
    while true do
      local c = s:sub(pos, pos)
      if c == "" then fail("unterminated string") end
      if c == '"' then
        pos = pos + 1
        return table.concat(parts)
      elseif c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        if e == "u" then
          local hex = s:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then fail("bad \\u escape") end
          parts[#parts + 1] = utf8.char(tonumber(hex, 16))
          pos = pos + 6
        elseif escapes[e] then
          parts[#parts + 1] = escapes[e]
          pos = pos + 2
        else
          fail("bad escape")
        end
      else
        parts[#parts + 1] = c
        pos = pos + 1
      end
    end
  end

  function value()
    skip()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1
      skip()
      if s:sub(pos, pos) == "}" then
        pos = pos + 1
        return t
      end
      while true do
        skip()
        if s:sub(pos, pos) ~= '"' then fail("expected a member name") end
        local k = str()
        skip()
        if s:sub(pos, pos) ~= ":" then fail("expected ':'") end
        pos = pos + 1
        t[k] = value()
        skip()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d ~= "," then fail("expected ',' or '}'") end
      end
    elseif c == "[" then
      local t = {}
      pos = pos + 1
      skip()
      if s:sub(pos, pos) == "]" then
        pos = pos + 1
        return t
      end
      while true do
        t[#t + 1] = value()
        skip()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d ~= "," then fail("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    elseif s:sub(pos, pos + 3) == "true" then
      pos = pos + 4
      return true
    elseif s:sub(pos, pos + 4) == "false" then
      pos = pos + 5
      return false
    elseif s:sub(pos, pos + 3) == "null" then
      pos = pos + 4
      return json.null
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" then fail("unexpected character '" .. c .. "'") end
      pos = pos + #num
      -- integers stay integers (math.tointeger), as culua wrote them
      if num:find("[.eE]") then return tonumber(num) end
      return math.tointeger(tonumber(num))
    end
  end

  local v = value()
  skip()
  if pos <= #s then fail("trailing characters") end
  return v
end

json.decode = decode

function json.read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return decode(text), text
end

return json
