-- Checks a suite run of the launch group against tests/bench/fake_baseline.sh (test
-- bench.suite_launch_rounds): 6 rounds, the native figure of each round different; every launch
-- form's record has the ratio of each round (culua's median over that round's native median) and
-- their median as `ratio`, which the launch targets use (suite.json and suite.md).
local dir = arg[1]
local f = assert(io.open(dir .. "/suite.json", "rb"), "no suite.json")
local data = assert(cu.json.decode(f:read("a")))
f:close()
local md = assert(io.open(dir .. "/suite.md", "rb")):read("a")

local function median(t)
  local c = table.move(t, 1, #t, 1, {})
  table.sort(c)
  local n = #c
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end
local function record(impl, op)
  for _, r in ipairs(data.records) do
    if r.impl == impl and r.op == op then return r end
  end
  error("no " .. impl .. " record for " .. op)
end
local function close(a, b) return math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b)) end

local ROUNDS = 6
for _, k in ipairs({ 0, 4, 8 }) do
  local native = record("native", "launch_rtc" .. k)
  -- The fake's medians are 2 .. 7 µs, one per round: their median is 4.5.
  assert(native.rounds == ROUNDS and close(native.median, 4.5),
    string.format("native launch_rtc%d: %s rounds, median %s", k, native.rounds, native.median))
  for _, form in ipairs({ "", "_call" }) do
    for _, kind in ipairs({ "launch", "enqueue" }) do
      local op = kind .. "_rtc" .. k .. form
      local r = record("culua", op)
      assert(r.rounds == ROUNDS, op .. ": " .. tostring(r.rounds) .. " rounds")
      assert(type(r.round_ratios) == "table" and #r.round_ratios == ROUNDS,
        op .. ": no ratio per round")
      for i, v in ipairs(r.round_ratios) do
        -- Round i's native median is i + 1 µs: its ratio times that is culua's median of the
        -- round, which lies within culua's min and max.
        local c = v * (i + 1)
        assert(c >= r.min * (1 - 1e-9) and c <= r.max * (1 + 1e-9),
          string.format("%s: round %d's ratio %s does not fit culua's figures", op, i, v))
      end
      assert(close(r.ratio, median(r.round_ratios)), op .. ": ratio is not the median of the rounds'")
    end
  end
end
local found = 0
for _, t in ipairs(data.targets) do
  local k, form = t.what:match("^launch from a Lua loop, (%d) arguments, (.*)$")
  if k then
    found = found + 1
    local r = record("culua", "launch_rtc" .. k .. (form == "`kc(...)`" and "" or "_call"))
    assert(close(t.ratio, r.ratio), t.what .. ": the target's ratio is not the record's")
    assert(t.met == (r.ratio <= 1.10), t.what .. ": met does not follow the ratio")
    assert(md:find(string.format("| %.3f |", r.ratio), 1, true), t.what .. ": ratio not in suite.md")
  end
end
assert(found == 6, "launch targets: " .. found)
print("launch rounds: ok")
