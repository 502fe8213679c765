-- Memory: free(), <close>, views keeping memory alive, garbage collection of unreachable arrays,
-- and out-of-memory errors (in a child culua whose host-backend memory is capped).
package.path = (arg and arg[0] and arg[0]:match("^(.*)[/\\]") or "tests/lua") .. "/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

T.case("free", function()
  local a = cu.arange(10, "i32")
  local b = cu.arange(10, "i32")
  T.eq(a.freed, false)
  a:free()
  T.eq(a.freed, true)
  S.raises_released(function() return a[1] end)
  S.raises_released(function() return a:totable() end)
  S.raises_released(function() return a.shape end)
  a:free() -- a second free is harmless
  T.eq(a.freed, true)
  T.eq(b:totable(), { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, "other arrays are untouched")
  S.check_runtime("after free")
end)

T.case("free releases every view of the memory", function()
  local a = cu.arange(12, "i32")
  local v = a:view(3, 4)
  local row = v[2]
  local t = v:transpose()
  local n = a:narrow(1, 3, 2)
  a:free()
  for name, x in pairs({ view = v, row = row, transpose = t, narrow = n }) do
    T.eq(x.freed, true, name)
    S.raises_released(function() return x:totable() end, name)
  end
  -- freeing through a view frees the base too
  local b = cu.arange(6, "i32")
  local bv = b:view(2, 3)
  bv:free()
  T.eq(b.freed, true)
  S.raises_released(function() return b[1] end)
  -- a clone is separate memory
  local c = cu.arange(4, "i32")
  local cc = c:clone()
  c:free()
  T.eq(cc.freed, false)
  T.eq(cc:totable(), { 0, 1, 2, 3 })
end)

T.case("free of host arrays", function()
  for _, pinned in ipairs({ false, true }) do
    local h = cu.host.zeros(5, { pinned = pinned })
    local v = h:narrow(1, 2, 2)
    h:free()
    T.eq(h.freed, true)
    T.eq(v.freed, true)
    S.raises_released(function() return v[1] end)
  end
  S.check_runtime()
end)

T.case("free while work on the array is queued", function()
  local s = cu.stream()
  local a = cu.zeros(1 << 16, "f32", { stream = s })
  local b = cu.zeros(1 << 16, "f32", { stream = s })
  cu.sleep(100, { stream = s })
  a:fill(3, { stream = s })
  cu.copy(b, a, { stream = s })
  local dt = S.timed(function() a:free() end)
  T.truthy(dt < 0.05, "free does not wait for queued work (" .. dt .. " s)")
  T.eq(b[1 << 16], 3.0, "the queued copy read valid memory")
  T.eq(b[1], 3.0)
end)

T.case("<close> frees at the end of the scope", function()
  local outer, view
  do
    local a <close> = cu.arange(8, "i32")
    outer = a
    view = a:view(2, 4)
    T.eq(a.freed, false)
    T.eq(view[2][4], 7)
  end
  T.eq(outer.freed, true)
  T.eq(view.freed, true)
  S.raises_released(function() return outer[1] end)
  -- on an error too
  local captured
  local ok = pcall(function()
    local b <close> = cu.zeros(4)
    captured = b
    error("boom")
  end)
  T.eq(ok, false)
  T.eq(captured.freed, true)
  -- an already freed array in a <close> variable
  do
    local c <close> = cu.zeros(2)
    c:free()
  end
  do
    local h <close> = cu.host.zeros(2, { pinned = true })
    captured = h
  end
  T.eq(captured.freed, true)
  S.check_runtime("after <close>")
end)

T.case("views keep the memory alive after the base is collected", function()
  local vals = S.randints(100, -1000, 1000)
  local view
  do
    local a = cu.array(vals, "i32")
    view = a:narrow(1, 51, 50)
  end
  collectgarbage()
  collectgarbage()
  -- allocate and write other arrays to reuse any memory that was wrongly released
  for _ = 1, 10 do cu.full(100, -1, "i32") end
  local expect = {}
  for i = 1, 50 do expect[i] = vals[50 + i] end
  T.eq(view:totable(), expect)
  local row
  do
    local m = cu.host.array(S.matrix(vals, 10, 10), "i32")
    row = m[10]
  end
  collectgarbage()
  for _ = 1, 10 do cu.host.full(100, -1, "i32") end
  T.eq(row:totable(),
    { vals[91], vals[92], vals[93], vals[94], vals[95], vals[96], vals[97], vals[98], vals[99], vals[100] })
end)

T.case("out of memory names the requested and free bytes", function()
  local msg = T.raises(function() cu.empty(1 << 48, "u8") end, "out of")
  T.truthy(msg:find("requested", 1, true), msg)
  T.truthy(msg:find("256.0 TiB", 1, true) or msg:find("281474976710656", 1, true), "the requested size: " .. msg)
  T.truthy(msg:find("free", 1, true), msg)
  S.check_runtime("after running out of device memory")
  local hmsg = T.raises(function() cu.host.empty(1 << 48, "u8") end, "out of")
  T.truthy(hmsg:find("requested", 1, true), hmsg)
  S.check_runtime("after running out of host memory")
  T.raises(function() cu.host.empty(1 << 48, "u8", { pinned = true }) end, "out of")
  S.check_runtime("after running out of pinned memory")
  T.raises(function() cu.empty(1 << 48, "u8"):fill(0) end, "out of")
  T.raises(function() cu.zeros(1 << 46, "f32") end, "out of")
end)

-- Child runs under a capped host backend ---------------------------------------------------------

local CAP = "CULUA_HOST_MEMORY_LIMIT=64M"

T.case("with a memory cap, garbage arrays are collected and memory reused", function()
  local out, code = S.run_child([[
    -- 200 arrays of 4 MiB (800 MiB in all) under a 64 MiB cap, none kept
    for i = 1, 200 do
      local a = cu.zeros(1 << 20, "f32")
      a[1] = i
      assert(a[1] == i)
    end
    -- temporaries created by operations are garbage too
    local x = cu.ones(1 << 20, "f32")
    for i = 1, 50 do
      local y = x:astype("f64"):astype("i32")
      assert(y[-1] == 1)
    end
    -- host arrays are not capped but device temporaries of transfers are
    local h = cu.host.ones(1 << 20, "f32")
    for i = 1, 50 do assert(h:to_device()[1] == 1.0) end
    print("ok")
  ]], CAP)
  T.eq(out, "ok\n", "child output")
  T.eq(code, 0)
end)

T.case("with a memory cap, held arrays run out with a clear error and the runtime recovers", function()
  local out, code = S.run_child([[
    local keep = {}
    local ok, err = pcall(function()
      for i = 1, 100 do keep[i] = cu.zeros(1 << 20, "f32") end -- 4 MiB each
    end)
    assert(not ok, "100 arrays of 4 MiB fit under 64 MiB")
    print("kept " .. #keep)
    print(err)
    keep = nil
    collectgarbage()
    local big = cu.full(12 << 20, 2, "f32") -- 48 MiB
    assert(big[-1] == 2.0)
    big:free()
    local again = cu.zeros(12 << 20, "f32")
    assert(again[1] == 0.0)
    print("recovered")
  ]], CAP)
  local kept = tonumber(out:match("kept (%d+)"))
  T.truthy(kept and kept >= 10 and kept <= 16, "arrays kept before running out: " .. out)
  T.truthy(out:find("out of", 1, true), out)
  T.truthy(out:find("requested 4.0 MiB", 1, true), "the requested size: " .. out)
  T.truthy(out:find("free", 1, true), out)
  T.truthy(out:find("recovered\n", 1, true), out)
  T.eq(code, 0, out)
end)

T.case("with a memory cap, free and <close> give the memory back at once", function()
  local out, code = S.run_child([[
    collectgarbage("stop") -- only explicit frees may release memory here
    local keep = {}
    for i = 1, 10 do
      local a = cu.zeros(10 << 20, "f32") -- 40 MiB: two never fit
      a:free()
      keep[i] = a
    end
    for i = 1, 10 do
      local b <close> = cu.ones(10 << 20, "f32")
      keep[#keep + 1] = b
      assert(b[1] == 1.0)
    end
    local v = cu.zeros(10 << 20, "f32"):view(2, -1)
    v:free() -- freeing a view frees the memory
    keep[#keep + 1] = v
    local last = cu.zeros(10 << 20, "f32")
    print("ok")
  ]], CAP)
  T.eq(out, "ok\n", "child output")
  T.eq(code, 0)
end)

T.case("with a memory cap, a request beyond the cap fails at once", function()
  local out, code = S.run_child([[
    local ok, err = pcall(function() return cu.empty(100 << 20, "u8") end)
    print(ok, err)
    local a = cu.zeros(1000)
    print(a[1000])
  ]], CAP)
  T.truthy(out:find("^false"), out)
  T.truthy(out:find("out of", 1, true) and out:find("requested 100.0 MiB", 1, true), out)
  T.truthy(out:find("0.0\n", 1, true), out)
  T.eq(code, 0, out)
end)

os.exit(T.run())
