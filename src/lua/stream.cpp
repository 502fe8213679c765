// cu.Stream, cu.stream(), cu.current_stream() and cu.use_stream().
#include <new>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "lua/binding.hpp"
#include "lua/sandbox.hpp"

namespace culua::detail::lua {

namespace {

constexpr const char* kStreamObjects = "cu.stream_objects";  // weak: Stream* -> its userdata

struct StreamBox {
  std::shared_ptr<Stream> stream;
  bool counted = false;  // made by cu.stream: counts in Context::script_streams until released
};

// The open cu.use_stream scopes of a state form a stack (a list from the innermost outwards, its
// head in the registry). Scopes may close out of order (a coroutine that ends or is closed while a
// scope opened after its own is still open): closing an inner scope restores its `previous`;
// closing one that has an inner scope open changes nothing now and hands its `previous` to that
// inner scope. However they close, the current stream is that of the innermost open scope, and
// once all are closed, the stream current before the first.
struct ScopeBox {
  std::shared_ptr<Stream> previous;
  bool closed = false;
  ScopeBox* outer = nullptr;  // the scope opened before this one, still open
  ScopeBox* inner = nullptr;  // the scope opened after this one, still open
};

const char kInnermostScope = 0;  // registry key (light userdata): the innermost open ScopeBox*

ScopeBox* innermost_scope(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kInnermostScope);
  auto* scope = static_cast<ScopeBox*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return scope;
}

void set_innermost_scope(lua_State* L, ScopeBox* scope) {
  if (scope) {
    lua_pushlightuserdata(L, scope);
  } else {
    lua_pushnil(L);
  }
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kInnermostScope);
}

// Takes `scope` out of the stack of open scopes (never raises).
void unlink_scope(lua_State* L, ScopeBox* scope) {
  if (scope->inner) {
    scope->inner->outer = scope->outer;
  } else {
    set_innermost_scope(L, scope->outer);
  }
  if (scope->outer) scope->outer->inner = scope->inner;
  scope->outer = scope->inner = nullptr;
}

StreamBox* test_box(lua_State* L, int idx) {
  void* p = lua_touserdata(L, idx);
  if (!p || !has_metatable(L, idx, context(L).stream_mt)) return nullptr;
  return static_cast<StreamBox*>(p);
}

StreamPriority check_priority(lua_State* L, int opts) {
  if (!get_option(L, opts, "priority")) return StreamPriority::Normal;
  const char* p = lua_tostring(L, -1);
  StreamPriority result = StreamPriority::Normal;
  if (!p) {
    option_error(
        opts, "priority", ErrorKind::Type,
        fmt::format("\"high\", \"normal\" or \"low\" expected, got {}", luaL_typename(L, -1)));
  } else if (std::string_view(p) == "high") {
    result = StreamPriority::High;
  } else if (std::string_view(p) == "low") {
    result = StreamPriority::Low;
  } else if (std::string_view(p) != "normal") {
    option_error(opts, "priority", ErrorKind::Value,
                 fmt::format("\"high\", \"normal\" or \"low\" expected, got '{}'", p));
  }
  lua_pop(L, 1);
  return result;
}

// The sandbox's cap on the streams a script holds (each a thread on the host backend): streams
// dropped but not yet collected are collected first.
void check_stream_limit(lua_State* L) {
  const Sandbox* box = Sandbox::of(L);
  if (!box || box->limits().streams == 0) return;
  const uint64_t limit = box->limits().streams;
  Context& ctx = context(L);
  if (ctx.script_streams < limit) return;
  lua_gc(L, LUA_GCCOLLECT);
  if (ctx.script_streams < limit) return;
  fail(ErrorKind::Limit,
       "the sandbox's stream limit of {} was reached (release streams with <close> or drop them "
       "before making more)",
       limit);
}

int l_stream(lua_State* L) {
  check_options(L, 1, {"priority"});
  const StreamPriority p = check_priority(L, 1);
  Runtime& rt = runtime(L);
  check_stream_limit(L);
  push_stream(L, rt.backend().create_stream(rt.device(), p));
  auto* box = static_cast<StreamBox*>(lua_touserdata(L, -1));
  if (!box->counted) {
    box->counted = true;
    ++context(L).script_streams;
  }
  return 1;
}

int l_current_stream(lua_State* L) {
  push_stream(L, runtime(L).current_stream_ptr());
  return 1;
}

int l_use_stream(lua_State* L) {
  Stream& s = check_stream(L, 1);
  Runtime& rt = runtime(L);
  refuse_when_closing(L, "stream scopes");
  auto* scope = static_cast<ScopeBox*>(lua_newuserdatauv(L, sizeof(ScopeBox), 0));
  new (scope) ScopeBox{};
  set_metatable(L, kScopeType);
  scope->previous = rt.current_stream_ptr();
  rt.set_current_stream(s.shared_from_this());
  scope->outer = innermost_scope(L);
  if (scope->outer) scope->outer->inner = scope;
  set_innermost_scope(L, scope);
  return 1;
}

int scope_close(lua_State* L) {
  auto* scope = check_box<ScopeBox>(L, 1, kScopeType);
  if (scope->closed) return 0;
  scope->closed = true;
  std::shared_ptr<Stream> previous = std::move(scope->previous);
  ScopeBox* inner = scope->inner;
  unlink_scope(L, scope);
  if (inner) {
    // Closed before a scope opened after it: that scope's stream stays current, and restores
    // what this one would have when it closes.
    inner->previous = std::move(previous);
  } else if (previous) {
    runtime(L).set_current_stream(std::move(previous));
  }
  return 0;
}

int scope_gc(lua_State* L) {
  // Dropped without <close>: the stream stays current (restoring at a random collection would
  // change the current stream under running code); an inner scope still restores its own
  // previous stream, which is this one's.
  auto* scope = check_box<ScopeBox>(L, 1, kScopeType);
  if (!scope->closed) unlink_scope(L, scope);
  scope->previous.reset();
  return 0;
}

int s_sync(lua_State* L) {
  Stream& s = check_stream(L, 1);
  {
    Monitor::Wait wait(runtime(L).monitor(), "stream:sync()", false);
    s.synchronize();
  }
  runtime(L).monitor().idle(s);
  return 0;
}

int s_done(lua_State* L) {
  Stream& s = check_stream(L, 1);
  Capture::forbid("stream:done()");
  lua_pushboolean(L, s.query());
  return 1;
}

int s_wait(lua_State* L) {
  Stream& s = check_stream(L, 1);
  runtime(L).monitor().flush_recorded();  // inside cu.fuse: after the operations before it
  if (Event* e = test_event(L, 2)) {
    s.wait(*e);
  } else if (Stream* other = test_stream(L, 2)) {
    if (other != &s) {
      auto ev = runtime(L).backend().create_event(other->device(), false);
      ev->record(*other);
      s.wait(*ev);
    }
  } else {
    type_error(L, 2, "cu.Event or cu.Stream");
  }
  lua_settop(L, 1);
  return 1;
}

int s_release(lua_State* L) {
  StreamBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kStreamType);
  if (box->counted && box->stream) --context(L).script_streams;
  box->counted = false;
  box->stream.reset();
  return 0;
}

int s_tostring(lua_State* L) {
  StreamBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kStreamType);
  if (!box->stream) {
    lua_pushliteral(L, "cu.Stream(<released>)");
    return 1;
  }
  const Stream& s = *box->stream;
  const auto p = priority_name(s.priority());
  lua_pushfstring(L, "cu.Stream(id=%I, device=%d, priority=%s)", lua_Integer(s.id()), s.device(),
                  std::string(p).c_str());
  return 1;
}

int s_index(lua_State* L) {
  if (!test_box(L, 1)) type_error(L, 1, kStreamType);
  if (push_upvalue_method(L)) return 1;
  Stream& s = check_stream(L, 1);
  const char* key = lua_tostring(L, 2);
  const std::string_view k = key ? key : "";
  if (k == "device") {
    lua_pushinteger(L, s.device());
  } else if (k == "priority") {
    const auto p = priority_name(s.priority());
    lua_pushlstring(L, p.data(), p.size());
  } else if (k == "id") {
    lua_pushinteger(L, static_cast<lua_Integer>(s.id()));
  } else {
    fail(ErrorKind::Index, "cu.Stream has no field or method '{}'", luaL_tolstring(L, 2, nullptr));
  }
  return 1;
}

const luaL_Reg kMethods[] = {
    {"sync", entry<s_sync>},
    {"done", entry<s_done>},
    {"wait", entry<s_wait>},
    {nullptr, nullptr},
};

}  // namespace

void push_stream(lua_State* L, std::shared_ptr<Stream> s) {
  lua_getfield(L, LUA_REGISTRYINDEX, kStreamObjects);
  if (lua_rawgetp(L, -1, s.get()) == LUA_TUSERDATA) {
    StreamBox* box = test_box(L, -1);
    if (box && box->stream == s) {
      lua_remove(L, -2);
      return;
    }
  }
  lua_pop(L, 1);
  const void* key = s.get();
  refuse_when_closing(L, "streams");
  auto* box = static_cast<StreamBox*>(lua_newuserdatauv(L, sizeof(StreamBox), 0));
  new (box) StreamBox{};
  set_metatable(L, kStreamType);
  box->stream = std::move(s);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, -3, key);
  lua_remove(L, -2);
}

Stream* test_stream(lua_State* L, int idx) {
  StreamBox* box = test_box(L, idx);
  if (!box) return nullptr;
  check_alive(box->stream, "stream");
  return box->stream.get();
}

Stream& check_stream(lua_State* L, int idx) {
  Stream* s = test_stream(L, idx);
  if (!s) type_error(L, idx, kStreamType);
  return *s;
}

void register_stream(lua_State* L) {
  lua_newtable(L);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_pushvalue(L, -1);
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kStreamObjects);

  new_metatable(L, kStreamType);
  context(L).stream_mt = lua_topointer(L, -1);
  const luaL_Reg meta[] = {{"__gc", entry<s_release>},
                           {"__close", entry<s_release>},
                           {"__tostring", entry<s_tostring>},
                           {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, kMethods);
  lua_pushcclosure(L, entry<s_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);

  new_metatable(L, kScopeType);
  const luaL_Reg scope_meta[] = {
      {"__close", entry<scope_close>}, {"__gc", entry<scope_gc>}, {nullptr, nullptr}};
  luaL_setfuncs(L, scope_meta, 0);
  lua_pop(L, 1);

  const luaL_Reg functions[] = {{"stream", entry<l_stream>},
                                {"current_stream", entry<l_current_stream>},
                                {"use_stream", entry<l_use_stream>},
                                {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
}

}  // namespace culua::detail::lua
