// Measurement bindings: cu.time, cu.clock.
#include <chrono>

#include "core/error.hpp"
#include "lua/binding.hpp"

namespace culua::lua {

namespace {

int l_clock(lua_State* L) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  lua_pushnumber(L, std::chrono::duration<double>(now).count());
  return 1;
}

// cu.time(fn [, {stream=}]): events around fn on the stream, synchronized; milliseconds.
int l_time(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  check_options(L, 2, {"stream"});
  Runtime& rt = runtime(L);
  Stream* given = opt_stream(L, 2);
  Stream& s = given ? *given : rt.current_stream();
  Backend& b = rt.backend();
  auto start = b.create_event(s.device(), true);
  auto stop = b.create_event(s.device(), true);
  start->record(s);
  lua_pushvalue(L, 1);
  lua_call(L, 0, 0);
  stop->record(s);
  stop->synchronize();
  lua_pushnumber(L, start->elapsed_ms(*stop));
  return 1;
}

}  // namespace

void register_measure(lua_State* L) {
  const luaL_Reg functions[] = {
      {"clock", entry<l_clock>}, {"time", entry<l_time>}, {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
}

}  // namespace culua::lua
