// cu.fuse(fn[, opts]): fn runs as ordinary Lua, its elementwise operations recorded and run as a
// few passes over their elements when it returns (src/fuse, docs/fusion.md).
#include <cstdlib>
#include <cstring>

#include "core/runtime.hpp"
#include "fuse/recorder.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// CULUA_FUSE=0: fused functions run eagerly (each operation launched as it is written).
bool fusion_off() {
  const char* env = std::getenv("CULUA_FUSE");
  return env && std::strcmp(env, "0") == 0;
}

// The function cu.fuse returns: upvalue 1 is fn, upvalue 2 explain.
int fused_call(lua_State* L) {
  Runtime& rt = runtime(L);
  const int nargs = lua_gettop(L);
  check_stack(L, 2, "fused function call");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (fusion_off() || rt.monitor().recorder) {  // nested: the outer call records
    call_lua(L, nargs, LUA_MULTRET);
    return lua_gettop(L);
  }
  const bool explain = lua_toboolean(L, lua_upvalueindex(2)) != 0;
  int status = LUA_OK;
  std::string explained;
  {
    fuse::Recorder recorder(rt, explain);
    const CollectorPaused paused(L);
    status = lua_pcall(L, nargs, LUA_MULTRET, 0);
    // Also after an error: what fn recorded runs, as it would have without cu.fuse.
    recorder.flush();
    explained = recorder.explained();
  }
  if (explain && !explained.empty()) {
    lua_getglobal(L, "io");
    if (lua_istable(L, -1)) lua_getfield(L, -1, "write");
    if (lua_isfunction(L, -1)) {
      lua_pushlstring(L, explained.data(), explained.size());
      call_lua(L, 1, 0);
    } else {
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  if (status != LUA_OK) raise_value(L);
  return lua_gettop(L);
}

// cu.fuse(fn [, {explain=}]).
int l_fuse(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  check_options(L, 2, {"explain"});
  const bool explain = opt_boolean(L, 2, "explain", false);
  lua_settop(L, 1);
  lua_pushboolean(L, explain ? 1 : 0);
  lua_pushcclosure(L, entry<fused_call>, 2);
  return 1;
}

}  // namespace

void register_fuse(lua_State* L) {
  lua_pushcfunction(L, entry<l_fuse>);
  lua_setfield(L, -2, "fuse");
}

}  // namespace culua::detail::lua
