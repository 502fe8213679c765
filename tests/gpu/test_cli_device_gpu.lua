-- `culua --device N` on the CUDA backend: a device that does not exist is refused at start (exit 1,
-- naming the option and the devices), before the script runs; the last device is started on.
-- Run as: culua --backend cuda tests/gpu/test_cli_device_gpu.lua (exit 69 without a GPU).
package.path = (arg[0]:match("^(.*)[/\\]") or "tests/gpu") .. "/../lua/?.lua;" .. package.path
local T = require "cu.testing"
local S = require "support"

if cu.backend ~= "cuda" then
  print("SKIPPED: needs the CUDA backend")
  os.exit(69)
end

local exe = S.culua_path()

local function run(args)
  local f = assert(io.popen(("%s %s 2>&1"):format(S.shell_quote(exe), args), "r"))
  local out = f:read("a")
  local _, _, code = f:close()
  return out, code
end

local n = #cu.devices()

T.case("a device past the last is refused at start, naming the option and the count", function()
  local expected = ("%s: --device: device %d does not exist: the CUDA backend has %d device%s, numbered %s\n")
    :format(exe, n, n, n == 1 and "" or "s", n == 1 and "0" or ("0 to " .. (n - 1)))
  for _, backend in ipairs({ "--backend cuda", "" }) do -- by name, and chosen because a GPU is present
    local out, code = run(backend .. " --device " .. n .. " -e 'print(\"ran\")'")
    T.eq({ out, code }, { expected, 1 }, backend)
  end
end)

T.case("the last device is the one the script starts on", function()
  local out, code = run("--backend cuda --device " .. (n - 1) ..
    " -e 'print(cu.device(), cu.zeros(2).device, cu.ones(4):sum():item())'")
  T.eq({ out, code }, { ("%d\t%d\t4.0\n"):format(n - 1, n - 1), 0 })
end)

os.exit(T.run())
