-- The on-disk kernel cache on the GPU: a cached image the driver refuses (its bytes
-- replaced by junk, the metadata kept so that it is still a cache hit) is no error: the file is
-- dropped, the source compiled afresh and stored again, and the kernel works. Each step runs in a
-- child culua with CULUA_CACHE_DIR set, since a process keeps the modules it loaded (a second
-- compile in this one would not load the file again).
-- Run as: culua --backend cuda tests/gpu/test_kernel_cache_gpu.lua (exit 69 without a GPU).
package.path = (arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

if cu.backend ~= "cuda" then
  print("SKIPPED: needs the CUDA backend")
  os.exit(69)
end

-- Compiles a kernel, runs it and checks every element; prints the cache outcome and the file.
local CHILD = [[
local m = cu.compile([=[
extern "C" __global__ void affine(int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 3 * i + 1;
}
]=])
local n = 1000
local y = cu.zeros(n, "i32")
m.affine({grid = (n + 255) // 256, block = 256}, y, n)
local t = y:totable()
local wrong = 0
for i = 1, n do
  if t[i] ~= 3 * (i - 1) + 1 then wrong = wrong + 1 end
end
print("cache=" .. m.info.cache .. " wrong=" .. wrong)
print("file=" .. m.info.cache_file)
]]

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- Runs CHILD in `culua --backend cuda` with the cache in `dir` (its default size cap); returns the
-- output (stdout and stderr) and the exit code.
local function run_child(dir)
  local script = os.tmpname()
  write(script, CHILD)
  local cmd = string.format("CULUA_CACHE_DIR=%s CULUA_CACHE_MAX_BYTES= %s --backend cuda %s 2>&1",
    S.shell_quote(dir), S.shell_quote(S.culua_path()), S.shell_quote(script))
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  os.remove(script)
  return out, code
end

T.case("a cached image the driver refuses is compiled afresh, stored again, and the kernel works",
  function()
    local dir = os.tmpname() -- a fresh name for the cache folder, which culua creates
    os.remove(dir)
    local out, code = run_child(dir)
    T.eq(code, 0, out)
    T.truthy(out:find("cache=miss wrong=0\n", 1, true), out)
    local file = out:match("file=([^\n]+)")
    T.truthy(file, out)
    local good = read(file)
    local newline = good:find("\n", 1, true)
    T.truthy(newline, "the cache file starts with its metadata line")
    -- The metadata line, the key's bytes, the image's.
    local key_bytes = tonumber(good:sub(1, newline):match('"key_bytes":(%d+)'))
    T.truthy(key_bytes, "the metadata gives the key's length")
    local head, image = good:sub(1, newline + key_bytes), good:sub(newline + key_bytes + 1)
    T.truthy(#image > 64, "an image of " .. #image .. " bytes")

    -- Same length (so the metadata and the key still match: a hit), ending in a zero byte. The first is not
    -- even an ELF file; the second starts like one, so the driver itself has to refuse it.
    local junk = ("corrupt!"):rep(#image // 8 + 1):sub(1, #image - 1) .. "\0"
    local corruptions = { junk = junk, elf = "\x7fELF" .. junk:sub(5) }
    for _, what in ipairs({ "junk", "elf" }) do
      local bad = corruptions[what]
      T.eq(#bad, #image)
      write(file, head .. bad)
      out, code = run_child(dir)
      T.eq(code, 0, what .. ": " .. out)
      -- The user sees the kernel work and nothing else: compiled afresh ("miss"), no error.
      T.eq(out, "cache=miss wrong=0\nfile=" .. file .. "\n", what)
      local replaced = read(file)
      local nl = replaced:find("\n", 1, true)
      T.truthy(nl, what .. ": the replaced file has its metadata line")
      T.truthy(replaced:sub(nl + key_bytes + 1) ~= bad, what .. ": the corrupt image was replaced")
      -- The fresh entry is a good hit.
      out, code = run_child(dir)
      T.eq(code, 0, what .. ": " .. out)
      T.eq(out, "cache=hit wrong=0\nfile=" .. file .. "\n", what)
    end
    os.execute("rm -rf " .. S.shell_quote(dir))
  end)

os.exit(T.run())
