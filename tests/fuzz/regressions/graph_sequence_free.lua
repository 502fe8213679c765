-- Found by the fuzzer (tools/fuzz, seed 3400 of fuzz.short): cu.arange and cu.linspace did not
-- record their use of the new array on the stream, so a graph that captured them did not keep the
-- array: freeing it and launching the graph wrote into freed memory (heap corruption, an abort at
-- exit). The graph now keeps it, as it keeps the outputs of every other captured operation.
for _, make in ipairs({
  function() return cu.arange(5, "f64") end,
  function() return cu.linspace(0, 4, 5, "f64") end,
  function() return cu.arange(0, 5, 1, "f64") end,
}) do
  local a
  local g = cu.graph(function() a = make() end)
  assert(g.arrays == 1, "the graph keeps the array it fills, got " .. g.arrays)
  a:free()
  -- memory freed too early would be handed out again here, and the launches would write into it
  local others = {}
  for i = 1, 8 do others[i] = cu.full(5, 7, "f64") end
  for _ = 1, 3 do g:launch() end
  cu.sync()
  for i = 1, 8 do
    local t = others[i]:totable()
    for j = 1, 5 do assert(t[j] == 7, "a later array was overwritten: " .. tostring(t[j])) end
  end
  g:free()
end

-- Outside a capture: a sequence on one stream, freed after work on another.
local s = cu.stream()
for _ = 1, 20 do
  local a = cu.arange(1000, "f64", {stream = s})
  local e = cu.event()
  e:record(s)
  cu.current_stream():wait(e)
  local total = a:sum():item()
  a:free()
  assert(total == 999 * 1000 / 2, "sum " .. total)
end
print("ok")
