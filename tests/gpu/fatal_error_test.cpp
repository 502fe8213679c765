// A sticky CUDA error (an illegal address in a kernel) poisons the runtime: the call that
// detects it raises with the error and the script line, and every later call fails fast with the
// original error and that line. Its own process: the fault destroys the CUDA context.
#include <lua.hpp>

#include <cstdio>
#include <string>

#include "backends/backends.hpp"
#include "core/runtime/runtime.hpp"
#include "cuda/cuda_backend.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"

namespace {

int launch_fault(lua_State* L) {
  culua::detail::Runtime& rt = culua::detail::lua::runtime(L);
  culua::detail::cuda::launch_fault(rt.backend(), rt.current_stream());
  return 0;
}

constexpr const char* kScript = R"lua(
local a = cu.ones(1000)
fault()
local ok, err = pcall(function() cu.sync() end)
assert(not ok, "the sync after the fault must fail")
print("detected: " .. err)
assert(err:find("cudaErrorIllegalAddress", 1, true), "names the CUDA error")
assert(err:find("first raised at fatal.lua:4", 1, true), "names the line that detected it")
assert(err:find("fault (test kernel)", 1, true), "names the last operation queued")

local ok2, err2 = pcall(function() return cu.empty(10) end)
assert(not ok2)
print("later call: " .. err2)
assert(err2:find("unusable", 1, true) and err2:find("cudaErrorIllegalAddress", 1, true))
assert(err2:find("first raised at fatal.lua:4", 1, true))

local ok3, err3 = pcall(function() return a:totable() end)
assert(not ok3 and err3:find("cudaErrorIllegalAddress", 1, true), err3)
local ok4, err4 = pcall(function() return cu.stream() end)
assert(not ok4 and err4:find("unusable", 1, true), err4)
a = nil
collectgarbage()  -- releasing arrays of a poisoned runtime must not crash or raise
print("ok")
)lua";

}  // namespace

int main() {
  std::string why;
  if (!culua::detail::cuda::device_available(&why)) {
    std::printf("no CUDA device (%s): skipping\n", why.c_str());
    return 77;
  }
  int status = 1;
  {
    culua::detail::Runtime rt(culua::detail::backends::engines(culua::detail::BackendKind::Cuda));
    lua_State* L = luaL_newstate();
    luaL_openlibs(L);
    culua::detail::lua::open_cu(L, rt);
    lua_setglobal(L, "cu");
    lua_pushcfunction(L, culua::detail::lua::entry<launch_fault>);
    lua_setglobal(L, "fault");
    if (luaL_loadbuffer(L, kScript, std::char_traits<char>::length(kScript), "=fatal.lua") ==
            LUA_OK &&
        lua_pcall(L, 0, 0, 0) == LUA_OK) {
      status = 0;
    } else {
      std::printf("FAILED: %s\n", lua_tostring(L, -1));
    }
    lua_close(L);
  }  // the runtime of a poisoned context must tear down without crashing or hanging
  std::printf("%s\n", status == 0 ? "fatal error test passed" : "fatal error test failed");
  return status;
}
