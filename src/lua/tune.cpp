// cu.tune: the embedded Lua module cu.tune (lua/cu/tune.lua) does the search on top of cu.sweep;
// this binding hands it the facts Lua cannot read (the driver and runtime versions, for the
// cache key) and returns its results as they are.
#include <fmt/format.h>

#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

int l_tune(lua_State* L) {
  const bool none = lua_isnone(L, 1);
  lua_settop(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cu.tune");
  lua_call(L, 1, 1);
  lua_getfield(L, 2, "tune");
  lua_pushvalue(L, 1);
  lua_createtable(L, 0, 3);
  if (none) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "none");
  }
  Runtime& rt = runtime(L);
  if (rt.kind() == BackendKind::Cuda) {
    const BackendVersions v = rt.backend().versions();
    const auto text = [](int x) { return fmt::format("{}.{}", x / 1000, (x % 1000) / 10); };
    if (v.driver > 0) {
      lua_pushstring(L, text(v.driver).c_str());
      lua_setfield(L, -2, "driver");
    }
    if (v.runtime > 0) {
      lua_pushstring(L, text(v.runtime).c_str());
      lua_setfield(L, -2, "runtime");
    }
  }
  lua_call(L, 2, LUA_MULTRET);
  return lua_gettop(L) - 2;
}

}  // namespace

void register_tune(lua_State* L) {
  lua_pushcfunction(L, entry<l_tune>);
  lua_setfield(L, -2, "tune");
}

}  // namespace culua::detail::lua
