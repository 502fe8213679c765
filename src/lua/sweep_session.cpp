// cu.sweep's session: what the sweeps of one Lua state share (Session, sweep_internal.hpp), kept in
// a userdata in the registry; and the description of the run that result files carry.
#include <new>
#include <string>
#include <utility>

#include "core/version.hpp"
#include "lua/sweep_internal.hpp"
#include "measure/results.hpp"

namespace culua::detail::lua::sweeps {

namespace {

constexpr char kSessionType[] = "cu.SweepSession";  // the address keys the session
// The session's metatable (an internal type: no cu. name, so not one of the module's types).
constexpr char kSessionMetatable[] = "culua.SweepSession";

int session_gc(lua_State* L) {
  auto* s = static_cast<Session*>(arg_udata(L, 1, kSessionMetatable));
  s->~Session();
  new (s) Session{};  // idempotent
  return 0;
}

Value script_description(lua_State* L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) {
    lua_pop(L, 1);
    return Value();
  }
  const int arg = lua_gettop(L);
  Value::Object o;
  o.reserve(4);
  lua_rawgeti(L, arg, 0);
  if (lua_type(L, -1) == LUA_TSTRING) {
    const std::string path = lua_tostring(L, -1);
    o.emplace_back("path", path);
    if (path != "-") {
      try {
        o.emplace_back("fnv1a64", measure::fnv1a64_hex(measure::read_text_file(path)));
      } catch (const Error&) {
        // The script may have moved since it started; the file is then described without it.
      }
    }
  } else {
    o.emplace_back("path", Value());
  }
  lua_pop(L, 1);
  Value::List args, command;
  for (lua_Integer i = 1; lua_rawgeti(L, arg, i) == LUA_TSTRING; ++i) {
    args.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_Integer first = 0;
  while (true) {
    const int t = lua_rawgeti(L, arg, first - 1);
    lua_pop(L, 1);
    if (t != LUA_TSTRING) break;
    --first;
  }
  for (lua_Integer i = first; lua_rawgeti(L, arg, i) == LUA_TSTRING; ++i) {
    command.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  o.emplace_back("args", std::move(args));
  o.emplace_back("command", std::move(command));
  return Value(std::move(o));
}

Session& session(lua_State* L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, kSessionType) == LUA_TUSERDATA) {
    auto* s = static_cast<Session*>(lua_touserdata(L, -1));
    lua_pop(L, 1);
    return *s;
  }
  lua_pop(L, 1);
  auto* s = static_cast<Session*>(lua_newuserdatauv(L, sizeof(Session), 0));
  if (luaL_newmetatable(L, kSessionMetatable)) {
    lua_pushcfunction(L, entry<session_gc>);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  new (s) Session{};
  lua_rawsetp(L, LUA_REGISTRYINDEX, kSessionType);
  return *s;
}

}  // namespace

Session& started_session(lua_State* L) {
  Session& s = session(L);
  if (!s.started) {
    s.date = measure::utc_timestamp();
    s.script = script_description(L);
    s.started = true;
  }
  return s;
}

Value::Object run_description(lua_State* L, const Session& s) {
  Runtime& rt = runtime(L);
  Value::Object o;
  o.emplace_back("culua_version", CULUA_VERSION);
  o.emplace_back("date", s.date);
  o.emplace_back("host", measure::host_name());
  o.emplace_back("script", s.script);
  const auto backend = backend_name(rt.kind());
  o.emplace_back("backend", std::string(backend));
  try {
    const DeviceInfo d = rt.backend().device_info(rt.device());
    Value::Object dev{{"index", d.index},
                      {"name", d.name},
                      {"sm_count", d.sm_count},
                      {"memory", static_cast<int64_t>(d.memory)},
                      {"l2", static_cast<int64_t>(d.l2)}};
    if (rt.kind() == BackendKind::Cuda)
      dev.emplace_back("cc", fmt::format("{}.{}", d.cc_major, d.cc_minor));
    o.emplace_back("device", std::move(dev));
  } catch (const Error& e) {
    o.emplace_back("device", Value::Object{{"error", e.what()}});
  }
  if (rt.kind() == BackendKind::Cuda) o.emplace_back("cuda", measure::cuda_versions(rt.backend()));
  return o;
}

}  // namespace culua::detail::lua::sweeps
