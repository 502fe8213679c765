// cu.fuse(fn[, opts]): fn runs as ordinary Lua, its elementwise operations recorded and run as a
// few passes over their elements when it returns (src/fuse, docs/fusion.md).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/runtime.hpp"
#include "fuse/kernel_cache.hpp"
#include "fuse/recorder.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// CULUA_FUSE=0: fused functions run eagerly (each operation launched as it is written).
bool fusion_off() {
  const char* env = std::getenv("CULUA_FUSE");
  return env && std::strcmp(env, "0") == 0;
}

// Runs the function at index 1 with the arguments above it, recorded; returns its results (the
// stack holds them). `sources`: the generated kernels of the groups are added to it.
int run_recorded(lua_State* L, bool explain, std::vector<std::string>* sources) {
  Runtime& rt = runtime(L);
  const int nargs = lua_gettop(L) - 1;
  int status = LUA_OK;
  std::string explained;
  {
    Context& ctx = context(L);
    if (!ctx.fused_kernels) ctx.fused_kernels = std::make_shared<fuse::KernelCache>();
    fuse::Recorder recorder(rt, explain, ctx.fused_kernels.get());
    recorder.keep_sources(sources);
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

// The function cu.fuse returns: upvalue 1 is fn, upvalue 2 explain.
int fused_call(lua_State* L) {
  check_stack(L, 2, "fused function call");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (fusion_off() || runtime(L).monitor().recorder) {  // nested: the outer call records
    call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  return run_recorded(L, lua_toboolean(L, lua_upvalueindex(2)) != 0, nullptr);
}

// cu.fuse(fn [, {explain=}]) (through the table's __call: argument 1 is cu.fuse itself).
int l_fuse(lua_State* L) {
  lua_remove(L, 1);
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  check_options(L, 2, {"explain"});
  const bool explain = opt_boolean(L, 2, "explain", false);
  lua_settop(L, 1);
  lua_pushboolean(L, explain ? 1 : 0);
  lua_pushcclosure(L, entry<fused_call>, 2);
  return 1;
}

// cu.fuse.source(fn, ...): runs fn(...) fused; returns the CUDA sources of its groups of several
// operations (each complete: the prelude and the kernel), as a list.
int l_source(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  if (runtime(L).monitor().recorder) {
    throw PlainError("cu.fuse.source cannot run inside a fused function");
  }
  std::vector<std::string> sources;
  run_recorded(L, false, &sources);
  lua_settop(L, 0);
  lua_createtable(L, static_cast<int>(sources.size()), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    lua_pushlstring(L, sources[i].data(), sources[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

}  // namespace

void register_fuse(lua_State* L) {
  lua_createtable(L, 0, 1);  // cu.fuse: callable, with cu.fuse.source
  lua_pushcfunction(L, entry<l_source>);
  lua_setfield(L, -2, "source");
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, entry<l_fuse>);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "fuse");
}

}  // namespace culua::detail::lua
