-- cu.json: decode (every JSON type, integers and floats, null, invalid text), encode (arrays and
-- objects, sorted keys, indent, what JSON cannot hold), round trips and JSON lines.
local T = require "cu.testing"

local json = cu.json
local null = json.null

-- decode that must succeed.
local function decode(text)
  local v, err = json.decode(text)
  T.truthy(err == nil, "decode " .. text .. ": " .. tostring(err))
  return v
end

-- decode that must fail: the message, which must contain `needle`.
local function invalid(text, needle)
  local v, err = json.decode(text)
  T.eq(v, nil, "decode " .. text)
  T.eq(type(err), "string", "the message of " .. text)
  if needle and not err:find(needle, 1, true) then
    error(string.format("decode %q: expected a message containing %q, got %q", text, needle, err),
      2)
  end
  return err
end

local function number_type(text)
  return math.type(decode(text))
end

T.case("decode: every JSON type", function()
  local v = decode('{"s": "text", "i": 42, "f": 2.5, "t": true, "F": false, "n": null, ' ..
    '"a": [1, "two", [3], {"four": 4}], "o": {"nested": {"deep": []}}, "e": {}}')
  T.eq(v.s, "text")
  T.eq(v.i, 42)
  T.eq(v.f, 2.5)
  T.eq(v.t, true)
  T.eq(v.F, false)
  T.truthy(rawequal(v.n, null), "null is cu.json.null")
  T.eq(v.a, { 1, "two", { 3 }, { four = 4 } })
  T.eq(v.o.nested.deep, {})
  T.eq(v.e, {})
  T.eq(decode("[]"), {})
  T.eq(decode("{}"), {})
  T.eq(decode('"top"'), "top")
  T.eq(decode(" 7 "), 7)
  T.eq(decode("true"), true)
  T.eq(decode("false"), false)
  T.truthy(rawequal(decode("null"), null), "a top-level null")
  T.eq(decode('"\\u00e9\\n\\t\\"\\\\\\/ \\ud83d\\ude00"'), "é\n\t\"\\/ 😀")
  T.eq(decode('"é ∑"'), "é ∑")
  T.eq(decode('{"a": 1, "a": 2}').a, 2, "a repeated key keeps its last value")
  T.eq(decode(' \t\r\n[1]\r\n'), { 1 })
end)

T.case("decode: integers stay integers, everything else is a float", function()
  T.eq(number_type("1"), "integer")
  T.eq(number_type("-1"), "integer")
  T.eq(number_type("0"), "integer")
  T.eq(number_type("-0"), "integer")
  T.eq(number_type("1.0"), "float")
  T.eq(number_type("1e2"), "float")
  T.eq(decode("1e2"), 100.0)
  T.eq(number_type("1e300"), "float")
  T.eq(decode("1e300"), 1e300)
  T.eq(decode("9223372036854775807"), math.maxinteger)
  T.eq(number_type("9223372036854775807"), "integer")
  T.eq(decode("-9223372036854775808"), math.mininteger)
  T.eq(number_type("-9223372036854775808"), "integer")
  -- Beyond int64: floats.
  T.eq(number_type("9223372036854775808"), "float")
  T.eq(decode("9223372036854775808"), 2.0 ^ 63)
  T.eq(number_type("18446744073709551615"), "float")
  T.eq(decode("18446744073709551615"), 2.0 ^ 64)
  T.eq(number_type("18446744073709551616"), "float")
  T.eq(number_type("-9223372036854775809"), "float")
  T.eq(decode("-9223372036854775809"), -(2.0 ^ 63))
  T.eq(decode("0.1"), 0.1)
  T.eq(decode("-2.5e-3"), -0.0025)
  T.eq(decode("[1, 1.0]"), { 1, 1.0 })
  T.eq(math.type(decode("[1, 1.0]")[2]), "float")
end)

T.case("decode: null keeps its place in arrays", function()
  local a = decode("[null, 1, null, null, 2, null]")
  T.eq(#a, 6)
  for _, i in ipairs({ 1, 3, 4, 6 }) do T.truthy(rawequal(a[i], null), "a[" .. i .. "] is null") end
  T.eq(a[2], 1)
  T.eq(a[5], 2)
  T.eq(type(null), "userdata")
  T.truthy(type(null) ~= "table", "null is not a table")
  T.eq(json.encode(a), "[null,1,null,null,2,null]")
end)

T.case("decode: text that is not JSON gives nil and a message with the byte", function()
  T.eq(invalid("[1,]", "at byte 4"):match("^invalid JSON at byte 4: "), "invalid JSON at byte 4: ")
  invalid("", "at byte 1")
  invalid("{", "at byte 2")
  invalid('{"a" 1}', "at byte 6")
  invalid("{'a': 1}", "at byte 2")
  invalid("[1 2]", "at byte 4")
  invalid("nul", "invalid JSON")
  invalid("NaN", "at byte 1")
  invalid("Infinity", "at byte 1")
  invalid("01", "invalid JSON")
  invalid("1 2", "at byte 3")
  invalid('"unterminated', "invalid JSON")
  invalid('"bad \\x escape"', "invalid JSON")
  -- The message quotes the input, bytes of invalid UTF-8 as \xHH: it can itself be encoded.
  local quoting = invalid('"\255"', "invalid JSON at byte 2")
  T.truthy(quoting:find("\\xFF", 1, true), quoting)
  T.eq(type(json.encode(quoting)), "string")
  invalid("[1] // comment", "invalid JSON")
  invalid('{"a": 1,}', "at byte 9")
  invalid("1e400", "number overflow")
  -- Later lines: the line and column too.
  T.eq(invalid('{\n  "a": 1,\n  "b": ]\n}', "at byte 20"),
    "invalid JSON at byte 20 (line 3, column 8): syntax error while parsing value - unexpected " ..
    "']'; expected '[', '{', or a literal")
  -- Nesting: 200 levels decode, 201 do not.
  local ok = decode(string.rep("[", 200) .. string.rep("]", 200))
  T.eq(type(ok), "table")
  invalid(string.rep("[", 201) .. string.rep("]", 201), "nested deeper than 200 levels at byte 201")
  invalid('{"a":' .. string.rep("[", 250), "at byte 205")
  -- cu still works after a failed decode.
  T.eq(decode("[1]"), { 1 })
end)

T.case("decode: a non-string argument is an error", function()
  T.raises(function() json.decode(12) end, "string expected, got number")
  T.raises(function() json.decode() end, "string expected, got no value")
  T.raises(function() json.decode({}) end, "string expected, got table")
  T.raises(function() json.decode(nil) end, "string expected, got nil")
end)

T.case("encode: scalars, arrays and objects with sorted keys", function()
  T.eq(json.encode(1), "1")
  T.eq(json.encode(-7), "-7")
  T.eq(json.encode(math.maxinteger), "9223372036854775807")
  T.eq(json.encode(math.mininteger), "-9223372036854775808")
  T.eq(json.encode(1.0), "1.0")
  T.eq(json.encode(2.5), "2.5")
  T.eq(json.encode(0.1), "0.1")
  T.eq(json.encode(1e300), "1e+300")
  T.eq(json.encode(true), "true")
  T.eq(json.encode(false), "false")
  T.eq(json.encode(null), "null")
  T.eq(json.encode("a \"quoted\"\n\tline\\ é"), '"a \\"quoted\\"\\n\\tline\\\\ é"')
  T.eq(json.encode("\0\1\31"), '"\\u0000\\u0001\\u001f"')
  T.eq(json.encode({}), "{}")
  T.eq(json.encode({ 1, 2, 3 }), "[1,2,3]")
  T.eq(json.encode({ "x", { y = true }, { {} } }), '["x",{"y":true},[{}]]')
  T.eq(json.encode({ zeta = 1, alpha = 2, Mid = 3, ["10"] = 4, ["9"] = 5, [""] = 6 }),
    '{"":6,"10":4,"9":5,"Mid":3,"alpha":2,"zeta":1}')
  T.eq(json.encode({ b = { d = 1, c = 2 }, a = { 3, 2, 1 } }), '{"a":[3,2,1],"b":{"c":2,"d":1}}')
  -- The raw contents, whatever the metatable says.
  local proxy = setmetatable({ real = 1 }, { __index = function() return 2 end,
    __pairs = function() error("not called") end, __len = function() return 99 end })
  T.eq(json.encode(proxy), '{"real":1}')
  -- Stable: the same text every time.
  local t = {}
  for i = 1, 50 do t["k" .. i] = i end
  local first = json.encode(t)
  for _ = 1, 5 do T.eq(json.encode(t), first) end
end)

T.case("encode: floats read back to the same value", function()
  local values = { 0.1, 1 / 3, math.pi, -math.pi * 1e-300, 2 ^ 53 + 0.0, 1e308, 5e-324,
    2.2250738585072014e-308, 123456789.123456789, -0.0, 1e21, 1e-7 }
  for _ = 1, 200 do values[#values + 1] = (math.random() - 0.5) * 10 ^ math.random(-300, 300) end
  for _, x in ipairs(values) do
    local text = json.encode(x)
    local back = decode(text)
    T.eq(math.type(back), "float", text)
    T.truthy(back == x, string.format("%.17g -> %s -> %.17g", x, text, back))
    T.truthy(#text <= 24, "shortest digits: " .. text)
  end
  T.eq(json.encode(-0.0), "-0.0")
end)

T.case("encode: indent pretty-prints", function()
  local v = { name = "copy", sizes = { 1, 2 }, gpu = { median = 0.5 }, empty = {} }
  T.eq(json.encode(v, { indent = 2 }), [[
{
  "empty": {},
  "gpu": {
    "median": 0.5
  },
  "name": "copy",
  "sizes": [
    1,
    2
  ]
}]])
  T.eq(json.encode({ 1, { a = 1 } }, { indent = 4 }),
    "[\n    1,\n    {\n        \"a\": 1\n    }\n]")
  T.eq(json.encode({ 1 }, { indent = 0 }), "[\n1\n]")
  T.eq(json.encode({ 1 }, {}), "[1]")
  T.eq(json.encode({ 1 }, nil), "[1]")
  T.eq(json.encode("x", { indent = 2 }), '"x"')
  T.eq(decode(json.encode(v, { indent = 3 })), v)
end)

T.case("encode: errors name the value and its place", function()
  local function f() end
  T.raises(function() json.encode({ a = { b = { 1, 2, f } } }) end,
    "bad argument #1 to 'encode' (cannot encode a function at .a.b[3]")
  T.raises(function() json.encode(f) end, "bad argument #1 to 'encode' (cannot encode a function")
  T.raises(function() json.encode({ ["two words"] = { x = f } }) end,
    'cannot encode a function at ["two words"].x')
  T.raises(function() json.encode({ cu.zeros(2) }) end, "cannot encode a cu.Array at [1]")
  T.raises(function() json.encode({ s = cu.stream() }) end, "cannot encode a cu.Stream at .s")
  T.raises(function() json.encode({ co = coroutine.create(f) }) end, "cannot encode a thread at .co")
  T.raises(function() json.encode(io.stdout) end, "cannot encode a FILE*")
  -- Numbers JSON cannot hold.
  T.raises(function() json.encode({ x = { 0 / 0 } }) end,
    "cannot encode nan (JSON numbers are finite) at .x[1]")
  T.raises(function() json.encode(math.huge) end, "cannot encode inf")
  T.raises(function() json.encode({ t = -math.huge }) end,
    "cannot encode -inf (JSON numbers are finite) at .t")
  -- Tables that are neither arrays nor objects.
  T.raises(function() json.encode({ 1, 2, x = 3 }) end,
    "cannot encode a table with both string and integer keys")
  T.raises(function() json.encode({ a = { [1] = "one", two = 2 } }) end, 'at .a')
  T.raises(function() json.encode({ [1] = 1, [3] = 3 }) end,
    "cannot encode a table with the key 3 and 2 integer keys (an array has the keys 1..n; " ..
    "cu.json.null fills holes)")
  T.raises(function() json.encode({ [0] = "zero", "one" }) end, "with the key 0")
  T.raises(function() json.encode({ [-1] = 1 }) end, "with the key -1")
  T.raises(function() json.encode({ [1.5] = 1 }) end, "with the key 1.5")
  T.raises(function() json.encode({ x = { [true] = 1 } }) end, "with the key true (JSON objects " ..
    "have string keys, arrays the keys 1..n) at .x")
  T.raises(function() json.encode({ [{}] = 1 }) end, "with the key a table")
  -- nil, cycles, depth.
  T.raises(function() json.encode(nil) end, "cannot encode nil (cu.json.null is JSON's null)")
  T.raises(function() json.encode() end, "value expected")
  local a = { b = { c = {} } }
  a.b.c.back = a
  T.raises(function() json.encode(a) end,
    "cannot encode a table that contains itself (a cycle) at .b.c.back")
  local self_list = {}
  self_list[1] = self_list
  T.raises(function() json.encode(self_list) end, "a cycle) at [1]")
  local shared = { 1 }
  T.eq(json.encode({ shared, shared, { s = shared } }), '[[1],[1],{"s":[1]}]',
    "a table used twice is not a cycle")
  local deep = {}
  local t = deep
  for _ = 1, 199 do
    t[1] = {}
    t = t[1]
  end
  T.eq(#json.encode(deep), 400, "200 levels")
  t[1] = {}
  T.raises(function() json.encode(deep) end, "cannot encode tables nested deeper than 200 levels")
end)

T.case("encode: strings and keys must be valid UTF-8", function()
  T.eq(json.encode("\u{7FF}\u{FFFF}\u{10000}\u{10FFFF}"), '"\u{7FF}\u{FFFF}\u{10000}\u{10FFFF}"')
  T.raises(function() json.encode({ name = "ab\255" }) end,
    "bad argument #1 to 'encode' (cannot encode a string that is not valid UTF-8 (byte 3 is 0xFF) at .name")
  T.raises(function() json.encode({ ["k\200"] = 1 }) end,
    'cannot encode a key that is not valid UTF-8 (byte 2 is 0xC8) at ["k\\200"]')
  local bad = {
    "\192\128",         -- overlong NUL
    "\224\128\128",     -- overlong
    "\240\128\128\128", -- overlong
    "\237\160\128",     -- a surrogate (U+D800)
    "\244\144\128\128", -- above U+10FFFF
    "\248\136\128\128\128",
    "\195",             -- truncated
    "\226\130",         -- truncated
    "\128",             -- a lone continuation byte
    "é\255",
  }
  for i, s in ipairs(bad) do
    T.raises(function() json.encode({ s }) end, "not valid UTF-8", "bad string " .. i)
  end
end)

T.case("encode: options", function()
  T.raises(function() json.encode({}, { indnet = 2 }) end,
    "bad argument #2 to 'encode' (unknown option 'indnet'; the options are indent)")
  T.raises(function() json.encode({}, { indent = -1 }) end,
    "bad argument #2 to 'encode' (option 'indent': integer 0..16 expected, got -1)")
  T.raises(function() json.encode({}, { indent = 1.5 }) end, "got 1.5")
  T.raises(function() json.encode({}, { indent = "2" }) end, 'got "2"')
  T.raises(function() json.encode({}, { indent = 17 }) end, "got 17")
  T.raises(function() json.encode({}, 2) end, "table expected, got number")
  T.eq(json.encode({ 1 }, { indent = 1.0 }), "[\n 1\n]")
end)

T.case("round trip: decode(encode(t)) equals t", function()
  local t = {
    name = "sweep \"copy\" ✓",
    n = 1 << 40,
    big = math.maxinteger,
    small = math.mininteger,
    ratio = 0.30000000000000004,
    one = 1.0,
    flags = { true, false, true },
    holes = { 1, null, 3 },
    points = {
      { params = { n = 1024, dtype = "f32" }, gpu = { median = 0.0123, samples = { 1.5, 2.5 } } },
      { params = { n = 2048, dtype = "f64" }, gpu = { median = 1e-9 }, ok = false },
    },
    empty = {},
    nested = { { { { "deep" } } } },
  }
  for _, opts in ipairs({ {}, { indent = 2 } }) do
    local text = json.encode(t, opts)
    local back = decode(text)
    T.eq(back, t)
    T.eq(math.type(back.one), "float")
    T.eq(math.type(back.n), "integer")
    T.eq(math.type(back.points[1].params.n), "integer")
    T.truthy(rawequal(back.holes[2], null), "null")
    T.eq(json.encode(back, opts), text, "the same text again")
  end
end)

T.case("JSON lines: one record per line", function()
  local text = table.concat({
    '{"op": "copy", "n": 1024, "ms": 0.25, "ok": true}',
    '{"op": "reduce", "n": 2048, "ms": 1.5e-3, "error": null}',
    "",
    '{"op": "matmul", "n": 4096, "ms": 12, "tags": ["a", "b"]}\r',
    '[1, 2, 3]',
  }, "\n") .. "\n"
  local records = {}
  for line in text:gmatch("[^\n]+") do
    local r, err = json.decode(line)
    T.truthy(r ~= nil, tostring(err))
    records[#records + 1] = r
  end
  T.eq(#records, 4)
  T.eq(records[1].op, "copy")
  T.eq(math.type(records[1].n), "integer")
  T.eq(records[2].ms, 0.0015)
  T.truthy(rawequal(records[2].error, null), "null field")
  T.eq(records[3].tags, { "a", "b" })
  T.eq(math.type(records[3].ms), "integer")
  T.eq(records[4], { 1, 2, 3 })
  -- A broken line is reported and the others still read.
  local good, bad = 0, {}
  for line in ('{"a": 1}\n{"a": \n{"a": 3}\n'):gmatch("[^\n]+") do
    local r, err = json.decode(line)
    if r then good = good + 1 else bad[#bad + 1] = err end
  end
  T.eq(good, 2)
  T.eq(#bad, 1)
  T.truthy(bad[1]:find("at byte 7", 1, true), bad[1])
  -- Writing JSON lines.
  local lines = {}
  for _, r in ipairs(records) do lines[#lines + 1] = json.encode(r) end
  T.eq(lines[1], '{"ms":0.25,"n":1024,"ok":true,"op":"copy"}')
  for i, l in ipairs(lines) do
    T.truthy(not l:find("\n"), "one line")
    T.eq(decode(l), records[i])
  end
end)

T.case("cu.json.null is one value, and help describes cu.json", function()
  T.truthy(rawequal(cu.json.null, (require "cu").json.null), "the same null")
  T.eq(json.encode({ a = cu.json.null }), '{"a":null}')
  local text = cu.help(cu.json, { text = true })
  T.truthy(text:find("cu.json.encode(value, opts?) -> string", 1, true), text)
  T.truthy(text:find("cu.json.decode(text)", 1, true), text)
  T.truthy(cu.help(cu.json.decode, { text = true }):find("invalid JSON", 1, true))
end)

os.exit(T.run())
