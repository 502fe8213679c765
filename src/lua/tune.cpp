// cu.tune: the embedded Lua module cu.tune (lua/cu/tune.lua) does the search on top of cu.sweep;
// this binding hands it the facts Lua cannot read (the driver and runtime versions, for the
// cache key) and returns its results as they are.
#include <fmt/format.h>

#include <cstring>

#include "core/base/error_kind.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// env.error(kind, message, where, func [, arg]): the cu.Error value that lua/cu/tune.lua raises
// with error(e, 0), as the bindings raise theirs: err.kind (a kind's name, "value" when unknown),
// err.message, err.where (the script's line that tune.lua found, "file.lua:12"), err.func, err.arg.
int tune_error(lua_State* L) {
  const char* kind_text = lua_tostring(L, 1);
  ErrorKind kind = ErrorKind::Value;
  for (ErrorKind k :
       {ErrorKind::Value, ErrorKind::Type, ErrorKind::Index, ErrorKind::OutOfMemory,
        ErrorKind::Released, ErrorKind::Unsupported, ErrorKind::Device, ErrorKind::Fatal,
        ErrorKind::Strict, ErrorKind::Interrupted, ErrorKind::Capture, ErrorKind::Limit}) {
    if (kind_text && std::strcmp(kind_name(k), kind_text) == 0) kind = k;
  }
  const char* func = lua_type(L, 4) == LUA_TSTRING ? lua_tostring(L, 4) : nullptr;
  const int arg = lua_isinteger(L, 5) ? static_cast<int>(lua_tointeger(L, 5)) : 0;
  lua_pushstring(L, lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
  push_error(L, kind, arg, func);
  if (lua_istable(L, -1)) {
    // push_error took the position of this function's caller, a line of tune.lua
    if (lua_type(L, 3) == LUA_TSTRING && lua_rawlen(L, 3) > 0) {
      lua_pushvalue(L, 3);
    } else {
      lua_pushnil(L);
    }
    lua_setfield(L, -2, "where");
  }
  return 1;
}

int l_tune(lua_State* L) {
  const bool none = lua_isnone(L, 1);
  lua_settop(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cu.tune");
  lua_call(L, 1, 1);
  lua_getfield(L, 2, "tune");
  lua_pushvalue(L, 1);
  lua_createtable(L, 0, 4);
  lua_pushcfunction(L, entry<tune_error>);
  lua_setfield(L, -2, "error");
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
