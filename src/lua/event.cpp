// cu.Event and cu.event().
#include <new>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

struct EventBox {
  std::shared_ptr<Event> event;
};

EventBox* test_box(lua_State* L, int idx) {
  void* p = lua_touserdata(L, idx);
  if (!p || !has_metatable(L, idx, context(L).event_mt)) return nullptr;
  return static_cast<EventBox*>(p);
}

Event& check_event(lua_State* L, int idx) {
  Event* e = test_event(L, idx);
  if (!e) type_error(L, idx, kEventType);
  return *e;
}

int l_event(lua_State* L) {
  check_options(L, 1, {"timing"});
  const bool timing = opt_boolean(L, 1, "timing", true);
  Runtime& rt = runtime(L);
  refuse_when_closing(L, "events");
  auto* box = static_cast<EventBox*>(lua_newuserdatauv(L, sizeof(EventBox), 0));
  new (box) EventBox{};
  set_metatable(L, kEventType);
  box->event = rt.backend().create_event(rt.device(), timing);
  return 1;
}

int e_record(lua_State* L) {
  Event& e = check_event(L, 1);
  Stream& s = lua_isnoneornil(L, 2) ? runtime(L).current_stream() : check_stream(L, 2);
  runtime(L).monitor().flush_recorded();  // inside cu.fuse: after the operations before it
  e.record(s);
  lua_settop(L, 1);
  return 1;
}

int e_sync(lua_State* L) {
  Event& e = check_event(L, 1);
  Monitor::Wait wait(runtime(L).monitor(), "event:sync()", false);
  e.synchronize();
  return 0;
}

int e_done(lua_State* L) {
  Event& e = check_event(L, 1);
  Capture::forbid("event:done()");
  lua_pushboolean(L, e.query());
  return 1;
}

int e_elapsed(lua_State* L) {
  Event& start = check_event(L, 1);
  Event& end = check_event(L, 2);
  Monitor::Wait wait(runtime(L).monitor(), "event:elapsed()", false);
  lua_pushnumber(L, start.elapsed_ms(end));
  return 1;
}

// e2 - e1: milliseconds from e1 to e2.
int e_sub(lua_State* L) {
  Event& end = check_event(L, 1);
  Event& start = check_event(L, 2);
  Monitor::Wait wait(runtime(L).monitor(), "event subtraction", false);
  lua_pushnumber(L, start.elapsed_ms(end));
  return 1;
}

int e_release(lua_State* L) {
  EventBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kEventType);
  box->event.reset();
  return 0;
}

int e_tostring(lua_State* L) {
  EventBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kEventType);
  if (!box->event) {
    lua_pushliteral(L, "cu.Event(<released>)");
  } else {
    lua_pushfstring(L, "cu.Event(device=%d, timing=%s, %s)", box->event->device(),
                    box->event->timing() ? "true" : "false",
                    box->event->recorded() ? "recorded" : "not recorded");
  }
  return 1;
}

int e_index(lua_State* L) {
  if (!test_box(L, 1)) type_error(L, 1, kEventType);
  if (push_upvalue_method(L)) return 1;
  Event& e = check_event(L, 1);
  const char* key = lua_tostring(L, 2);
  const std::string_view k = key ? key : "";
  if (k == "recorded") {
    lua_pushboolean(L, e.recorded());
  } else if (k == "timing") {
    lua_pushboolean(L, e.timing());
  } else if (k == "device") {
    lua_pushinteger(L, e.device());
  } else {
    fail(ErrorKind::Index, "cu.Event has no field or method '{}'", luaL_tolstring(L, 2, nullptr));
  }
  return 1;
}

const luaL_Reg kMethods[] = {
    {"record", entry<e_record>},   {"sync", entry<e_sync>}, {"done", entry<e_done>},
    {"elapsed", entry<e_elapsed>}, {nullptr, nullptr},
};

}  // namespace

Event* test_event(lua_State* L, int idx) {
  EventBox* box = test_box(L, idx);
  if (!box) return nullptr;
  check_alive(box->event, "event");
  return box->event.get();
}

void register_event(lua_State* L) {
  new_metatable(L, kEventType);
  context(L).event_mt = lua_topointer(L, -1);
  const luaL_Reg meta[] = {{"__gc", entry<e_release>},
                           {"__close", entry<e_release>},
                           {"__tostring", entry<e_tostring>},
                           {"__sub", entry<e_sub>},
                           {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, kMethods);
  lua_pushcclosure(L, entry<e_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_event>);
  lua_setfield(L, -2, "event");
}

}  // namespace culua::detail::lua
