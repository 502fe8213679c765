-- The sandbox on the GPU (docs/sandbox.md): `culua --backend cuda --sandbox` runs each script
-- below in a process of its own. A kernel that loops forever ends in the time-limit error within
-- the limit and some slack (the wait for it raises; the process then leaves the kernel to the
-- driver), a kernel that traps ends in a clear device error, the quota caps device memory, and a
-- sandboxed kernel that behaves computes the right result.
-- Run as: culua --backend cuda tests/gpu/test_sandbox_gpu.lua (exit 69 without a GPU).
local T = require "cu.testing"

local function interpreter()
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function now()
  local f = assert(io.popen("date +%s.%N"))
  local t = tonumber(f:read("l"))
  f:close()
  return t
end

-- Runs `source` sandboxed on the GPU; returns the output, the exit status and the seconds taken.
local function sandboxed(source, options)
  local path = os.tmpname() .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(source)
  f:close()
  local cmd = ("timeout 120 %s --backend cuda --sandbox %s %s 2>&1"):format(
    shell_quote(interpreter()), options or "", shell_quote(path))
  local t0 = now()
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  os.remove(path)
  return out, code, now() - t0
end

T.case("a kernel that loops forever ends in the time-limit error", function()
  local out, code, seconds = sandboxed([[
    local m = cu.compile [=[
      extern "C" __global__ void spin(const volatile int* stop) { while (*stop == 0) {} }
    ]=]
    local stop = cu.zeros(1, "i32")
    m.spin({grid = 1, block = 1}, stop)
    print("launched")
    cu.sync()
    print("never")
  ]], "--max-time 3")
  T.eq(code, 1, out)
  T.truthy(out:find("launched\n", 1, true), out)
  T.truthy(out:find("the sandbox's time limit of 3 s was exceeded while waiting for the device",
    1, true), out)
  T.eq(out:find("never", 1, true), nil)
  -- The limit, the compile before it (a few seconds at most) and the exit with a kernel running.
  T.truthy(seconds < 3 + 30, ("took %.1f s"):format(seconds))
end)

T.case("a caught time-limit error does not let the script go on", function()
  local out, code, seconds = sandboxed([[
    local m = cu.compile [=[
      extern "C" __global__ void spin(const volatile int* stop) { while (*stop == 0) {} }
    ]=]
    local stop = cu.zeros(1, "i32")
    m.spin({grid = 1, block = 1}, stop)
    local ok, err = pcall(cu.sync)
    print("caught", ok, err.kind)
    while true do end
  ]], "--max-time 3")
  T.eq(code, 1, out)
  T.truthy(out:find("caught\tfalse\tlimit", 1, true), out)
  T.truthy(out:find("the sandbox's time limit of 3 s was exceeded", 1, true), out)
  T.truthy(seconds < 3 + 30, ("took %.1f s"):format(seconds))
end)

T.case("a kernel that traps ends in a clear device error", function()
  local out, code, seconds = sandboxed([[
    local m = cu.compile [=[ extern "C" __global__ void boom() { asm volatile("trap;"); } ]=]
    m.boom({grid = 1, block = 1})
    cu.sync()
    print("never")
  ]], "--max-time 10")
  T.eq(code, 1, out)
  T.truthy(out:find("culua: ", 1, true), out)
  T.eq(out:find("never", 1, true), nil)
  T.truthy(seconds < 60, ("took %.1f s"):format(seconds))
end)

T.case("a sandboxed kernel computes; include and include paths are refused", function()
  local out, code = sandboxed([[
    local m = cu.compile [=[
      extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
      }
    ]=]
    local n = 4097
    local x, y = cu.arange(n):astype("f32"), cu.ones(n)
    m.saxpy({grid = (n + 255) // 256, block = 256}, 2, x, y, n)
    local expected = x * 2 + 1
    print("maxdiff", cu.abs(y - expected):max():item())
    print(pcall(cu.compile, '#include "/etc/passwd"\n__global__ void k() {}'))
    print(pcall(cu.compile, '__global__ void k() {}', {options = {"-I/etc"}}))
    -- A line splice inside the directive (NVRTC joins the lines and reads the file).
    print("spliced", pcall(cu.compile, '#inc\\\nlude "/etc/passwd"\n__global__ void k() {}'))
    print("embed", pcall(cu.compile, '#embed "/etc/passwd"\n__global__ void k() {}'))
    local h = cu.elementwise("f32 x -> f32 y", "y = x * 2")
    print("template", h(cu.ones(8)):sum():item())
    local half = cu.elementwise("f16 x -> f16 y", "y = x + x")
    print("half", half(cu.ones(8, "f16")):astype("f32"):sum():item())
    local cx = cu.elementwise("c64 x -> c64 y", "y = x * cuda::std::complex<float>(0, 2)")
    print("complex", cx(cu.ones(8, "c64")):sum():item())
  ]], "--max-time 60")
  T.eq(code, 0, out)
  T.truthy(out:find("maxdiff\t0.0\n", 1, true), out)
  T.truthy(out:find("does not allow 'include' in kernel source", 1, true), out)
  T.truthy(out:find("does not allow the compiler option '-I/etc'", 1, true), out)
  T.truthy(out:find("spliced\tfalse\t[^\n]*does not allow 'include' in kernel source"), out)
  T.truthy(out:find("embed\tfalse\t[^\n]*does not allow '#embed' in kernel source"), out)
  T.eq(out:find("root:", 1, true), nil, out)
  T.truthy(out:find("template\t16.0", 1, true), out)
  T.truthy(out:find("half\t16.0", 1, true), out) -- culua's own #include <cuda_fp16.h> is allowed
  T.truthy(out:find("complex\t0+16j", 1, true), out) -- the complex prelude holds no include
end)

T.case("the quota caps device memory", function()
  local out, code = sandboxed([[
    keep = {}
    for i = 1, 1000 do keep[i] = cu.zeros(1 << 28) end
  ]], "--max-device-memory 4G")
  T.eq(code, 1, out)
  T.truthy(out:find("the sandbox's memory quota is exhausted: requested 1.0 GiB", 1, true), out)
  T.truthy(out:find("of the quota of 4 GiB in use", 1, true), out)
end)

os.exit(T.run())
