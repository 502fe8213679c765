#include "lua/binding.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <new>

#include "core/base/error.hpp"
#include "core/base/error_kind.hpp"

namespace culua::detail::lua {

namespace {

std::string where(lua_State* L) {
  luaL_where(L, 1);
  std::string w = lua_tostring(L, -1);
  lua_pop(L, 1);
  while (!w.empty() && (w.back() == ' ' || w.back() == ':')) w.pop_back();
  return w.empty() ? "?" : w;
}

// The Lua-visible name of the running C function ("empty", "to_host"), for message prefixes.
std::string function_name(lua_State* L) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "n", &ar) || !ar.name) return {};
  if (ar.namewhat && std::strcmp(ar.namewhat, "metamethod") == 0) return {};
  return ar.name;
}

}  // namespace

void new_metatable(lua_State* L, const char* type) {
  luaL_newmetatable(L, type);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, type);
}

namespace {

// The context of the state whose registry is `registry`, remembered per OS thread (a state may be
// used from several threads in turn, and several states from several threads). Any context
// being finalized invalidates every thread's entry: a new state may get the same registry address.
struct ContextCache {
  const void* registry = nullptr;
  Context* ctx = nullptr;
  uint64_t generation = 0;
};
thread_local ContextCache t_context_cache;
std::atomic<uint64_t> g_context_generation{1};

}  // namespace

Context* find_context(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, kContextKey);
  auto* ctx = static_cast<Context*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return ctx;
}

void drop_context(lua_State* L) {
  lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kContextKey);
  g_context_generation.fetch_add(1, std::memory_order_relaxed);
}

void mark_closing(lua_State* L) noexcept {
  if (Context* ctx = find_context(L)) ctx->closing = true;
}

Context* live_context(lua_State* L) {
  // The registry's address identifies the state (it is shared by all its threads).
  const void* registry = lua_topointer(L, LUA_REGISTRYINDEX);
  const uint64_t generation = g_context_generation.load(std::memory_order_relaxed);
  ContextCache& cache = t_context_cache;
  if (cache.registry == registry && cache.generation == generation) return cache.ctx;
  Context* ctx = find_context(L);
  if (ctx) cache = {registry, ctx, generation};
  return ctx;
}

Context* refuse_when_closing_context(lua_State* L, const char* what) {
  Context* ctx = live_context(L);
  if (ctx && ctx->closing) {
    fail(ErrorKind::Released,
         "the Lua state is closing: no new {} (a finalizer's object would never be freed)", what);
  }
  return ctx;
}

void refuse_when_closing(lua_State* L, const char* what) {
  refuse_when_closing_context(L, what);
}

Context& cached_context(lua_State* L) {
  Context* ctx = live_context(L);
  if (!ctx)
    fail(ErrorKind::Released, "the cu module is not open in this Lua state (it was closed)");
  return *ctx;
}

std::string error_message(lua_State* L, const std::exception& e) {
  std::string msg;
  if (dynamic_cast<const std::bad_alloc*>(&e)) {
    msg = "out of host memory";
  } else {
    msg = e.what();
  }
  if (const auto* err = dynamic_cast<const Error*>(&e); err && err->kind() == ErrorKind::Fatal) {
    if (Context* ctx = find_context(L); ctx && ctx->rt) {
      Runtime& rt = *ctx->rt;
      if (rt.fatal_location().empty()) rt.set_fatal_location(where(L));
      msg += " (first raised at " + rt.fatal_location() + ")";
    }
  }
  const std::string fn = function_name(L);
  if (fn.empty()) return msg;
  return fn + ": " + msg;
}

PendingError pending_error(lua_State* L, const std::exception& e) {
  PendingError p;
  if (const auto* a = dynamic_cast<const ArgumentError*>(&e)) {
    p.kind = PendingError::Kind::Argument;
    p.error_kind = a->kind();
    p.arg = a->arg();
    p.message = a->what();
  } else if (const auto* v = dynamic_cast<const LuaErrorValue*>(&e)) {
    p.kind = PendingError::Kind::Value;
    p.arg = v->ref();
  } else if (const auto* plain = dynamic_cast<const PlainError*>(&e)) {
    p.error_kind = plain->kind();
    p.message = e.what();
  } else {
    if (const auto* err = dynamic_cast<const Error*>(&e)) {
      p.error_kind = err->kind();
    } else if (dynamic_cast<const std::bad_alloc*>(&e)) {
      p.error_kind = ErrorKind::OutOfMemory;
    }
    p.message = error_message(L, e);
  }
  return p;
}

namespace {

// lauxlib's findfield: the name ("cu.empty") under which the value on top of the stack is found
// in the table at objidx, searching `level` tables deep; pushes it and returns true.
bool find_field(lua_State* L, int objidx, int level) {
  if (level == 0 || !lua_istable(L, -1)) return false;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      if (lua_rawequal(L, objidx, -1)) {
        lua_pop(L, 1);
        return true;
      }
      if (find_field(L, objidx, level - 1)) {
        lua_pushliteral(L, ".");
        lua_replace(L, -3);  // the value's slot becomes the separator
        lua_concat(L, 3);    // key "." name
        return true;
      }
    }
    lua_pop(L, 1);
  }
  return false;
}

// lauxlib's pushglobalfuncname: the running function's name in package.loaded ("cu.empty"),
// pushed; false (nothing pushed) when not found.
bool push_global_function_name(lua_State* L, lua_Debug* ar) {
  const int top = lua_gettop(L);
  lua_getinfo(L, "f", ar);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_checkstack(L, 6, "not enough stack");
  if (find_field(L, top + 1, 2)) {
    const char* name = lua_tostring(L, -1);
    if (std::strncmp(name, LUA_GNAME ".", 3) == 0) {
      lua_pushstring(L, name + 3);
      lua_remove(L, -2);
    }
    lua_copy(L, -1, top + 1);
    lua_settop(L, top + 1);
    return true;
  }
  lua_settop(L, top);
  return false;
}

// The text of the cu.Error at idx: "where: message" (message alone without a position).
void push_error_text(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, idx, "where") == LUA_TSTRING && lua_rawlen(L, -1) > 0) {
    lua_pushliteral(L, ": ");
  } else {
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    lua_pushliteral(L, "");
  }
  if (lua_getfield(L, idx, "message") != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushliteral(L, "?");
  }
  lua_concat(L, 3);
}

bool is_error(lua_State* L, int idx) {
  return lua_type(L, idx) == LUA_TTABLE && is_type(L, idx, kErrorType);
}

int error_tostring(lua_State* L) {
  check_type(L, 1, kErrorType);
  push_error_text(L, 1);
  return 1;
}

int error_len(lua_State* L) {
  check_type(L, 1, kErrorType);
  push_error_text(L, 1);
  lua_pushinteger(L, static_cast<lua_Integer>(lua_rawlen(L, -1)));
  return 1;
}

int error_concat(lua_State* L) {
  if (!is_error(L, 1) && !is_error(L, 2)) type_error(L, 1, kErrorType);
  for (int i = 1; i <= 2; ++i) {
    if (is_error(L, i)) {
      push_error_text(L, i);
      lua_replace(L, i);
    }
  }
  lua_settop(L, 2);
  lua_concat(L, 2);
  return 1;
}

// A string method called on a cu.Error (err:find(...)): runs on the error's text.
int error_string_method(lua_State* L) {
  if (is_error(L, 1)) {
    push_error_text(L, 1);
    lua_replace(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// err.find, err.match, ...: the string library's function, applied to the error's text. Fields
// of the error itself (kind, message, ...) are raw and never reach here.
int error_index(lua_State* L) {
  check_type(L, 1, kErrorType);
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_pushliteral(L, "");
  if (!lua_getmetatable(L, -1) || lua_getfield(L, -1, "__index") != LUA_TTABLE) return 0;
  if (lua_getfield(L, -1, lua_tostring(L, 2)) != LUA_TFUNCTION) return 0;
  lua_pushcclosure(L, error_string_method, 1);
  return 1;
}

int l_error_kind(lua_State* L) {
  const char* kind = error_kind(L, 1);
  if (kind) {
    lua_pushstring(L, kind);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

}  // namespace

void push_error(lua_State* L, ErrorKind kind, int arg, const char* func) {
  const int message = lua_gettop(L);
  lua_rawgetp(L, LUA_REGISTRYINDEX, kErrorType);
  if (!lua_istable(L, -1)) {  // no cu.Error yet: the text as luaL_error gives it
    lua_pop(L, 1);
    luaL_where(L, 1);
    lua_insert(L, message);
    lua_concat(L, 2);
    return;
  }
  lua_createtable(L, 0, 5);
  lua_insert(L, -2);
  lua_setmetatable(L, -2);
  lua_pushstring(L, kind_name(kind));
  lua_setfield(L, -2, "kind");
  lua_pushvalue(L, message);
  lua_setfield(L, -2, "message");
  luaL_where(L, 1);  // "file.lua:12: " or ""
  size_t len = 0;
  const char* where = lua_tolstring(L, -1, &len);
  if (len > 2) {
    lua_pushlstring(L, where, len - 2);
    lua_setfield(L, -3, "where");
  }
  lua_pop(L, 1);
  if (func) {
    lua_pushstring(L, func);
    lua_setfield(L, -2, "func");
  }
  if (arg > 0) {
    lua_pushinteger(L, arg);
    lua_setfield(L, -2, "arg");
  }
  lua_replace(L, message);
}

const char* error_kind(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (!is_error(L, idx)) return nullptr;
  lua_rawgetp(L, LUA_REGISTRYINDEX, kErrorType);  // keeps the interned kind string alive
  lua_getfield(L, idx, "kind");
  const char* kind = lua_tostring(L, -1);
  lua_pop(L, 2);
  return kind;
}

void register_error(lua_State* L) {
  new_metatable(L, kErrorType);
  // guarded: an error object outlives the module's context (printed after cu was closed).
  const luaL_Reg methods[] = {{"__tostring", guarded<error_tostring>},
                              {"__len", guarded<error_len>},
                              {"__concat", guarded<error_concat>},
                              {"__index", guarded<error_index>},
                              {nullptr, nullptr}};
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_error_kind>);
  lua_setfield(L, -2, "error_kind");
}

int raise_error(lua_State* L, PendingError& error) {
  if (error.kind == PendingError::Kind::Value) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, error.arg);
    luaL_unref(L, LUA_REGISTRYINDEX, error.arg);
    return lua_error(L);
  }
  const ErrorKind kind = error.error_kind;
  int arg = error.arg;
  lua_pushlstring(L, error.message.data(), error.message.size());
  std::string().swap(error.message);
  if (error.kind == PendingError::Kind::Message) {
    lua_Debug ar;
    const bool named = lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name &&
                       !(ar.namewhat && std::strcmp(ar.namewhat, "metamethod") == 0);
    push_error(L, kind, 0, named ? ar.name : nullptr);
    return lua_error(L);
  }
  // As luaL_argerror words it.
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) {
    lua_pushfstring(L, "bad argument #%d (%s)", arg, lua_tostring(L, -1));
    lua_remove(L, -2);
    push_error(L, kind, arg, nullptr);
    return lua_error(L);
  }
  lua_getinfo(L, "n", &ar);
  if (ar.namewhat && std::strcmp(ar.namewhat, "method") == 0) {
    --arg;  // self is not counted
    if (arg == 0) {
      lua_pushfstring(L, "calling '%s' on bad self (%s)", ar.name, lua_tostring(L, -1));
      lua_remove(L, -2);
      push_error(L, kind, 0, ar.name);
      return lua_error(L);
    }
  }
  const int extra = lua_gettop(L);
  const char* name = ar.name;
  if (!name) name = push_global_function_name(L, &ar) ? lua_tostring(L, -1) : "?";
  lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, name, lua_tostring(L, extra));
  push_error(L, kind, arg, name);
  return lua_error(L);
}

void arg_error(int arg, const std::string& message, ErrorKind kind) {
  throw ArgumentError(arg, message, kind);
}

void option_error(int arg, const char* key, ErrorKind kind, const std::string& message) {
  const std::string text = fmt::format("option '{}': {}", key, message);
  if (arg > 0) throw ArgumentError(arg, text, kind);
  throw Error(kind, text);
}

void type_error(lua_State* L, int arg, const char* expected) {
  // As luaL_typeerror: a __name in the metatable names the value's type.
  const int idx = lua_absindex(L, arg);
  std::string actual;
  const int name_type = luaL_getmetafield(L, idx, "__name");
  if (name_type == LUA_TSTRING) {
    actual = lua_tostring(L, -1);
  } else if (lua_type(L, idx) == LUA_TLIGHTUSERDATA) {
    actual = "light userdata";
  } else {
    actual = luaL_typename(L, idx);
  }
  if (name_type != LUA_TNIL) lua_pop(L, 1);
  throw ArgumentError(arg, fmt::format("{} expected, got {}", expected, actual), ErrorKind::Type);
}

lua_Number arg_number(lua_State* L, int arg) {
  int ok = 0;
  const lua_Number v = lua_tonumberx(L, arg, &ok);
  if (!ok) type_error(L, arg, lua_typename(L, LUA_TNUMBER));
  return v;
}

lua_Integer arg_integer(lua_State* L, int arg) {
  int ok = 0;
  const lua_Integer v = lua_tointegerx(L, arg, &ok);
  if (!ok) {
    if (lua_isnumber(L, arg)) arg_error(arg, "number has no integer representation");
    type_error(L, arg, lua_typename(L, LUA_TNUMBER));
  }
  return v;
}

const char* arg_string(lua_State* L, int arg, size_t* len) {
  const char* s = lua_tolstring(L, arg, len);
  if (!s) type_error(L, arg, lua_typename(L, LUA_TSTRING));
  return s;
}

lua_Number opt_arg_number(lua_State* L, int arg, lua_Number fallback) {
  return lua_isnoneornil(L, arg) ? fallback : arg_number(L, arg);
}

lua_Integer opt_arg_integer(lua_State* L, int arg, lua_Integer fallback) {
  return lua_isnoneornil(L, arg) ? fallback : arg_integer(L, arg);
}

const char* opt_arg_string(lua_State* L, int arg, const char* fallback) {
  return lua_isnoneornil(L, arg) ? fallback : arg_string(L, arg);
}

void arg_type(lua_State* L, int arg, int type) {
  if (lua_type(L, arg) != type) type_error(L, arg, lua_typename(L, type));
}

void arg_any(lua_State* L, int arg) {
  if (lua_type(L, arg) == LUA_TNONE) arg_error(arg, "value expected");
}

void* arg_udata(lua_State* L, int arg, const char* type) {
  void* p = lua_type(L, arg) == LUA_TUSERDATA ? luaL_testudata(L, arg, type) : nullptr;
  if (!p) type_error(L, arg, type);
  return p;
}

bool is_type(lua_State* L, int idx, const char* type) {
  idx = lua_absindex(L, idx);
  if (!lua_getmetatable(L, idx)) return false;
  lua_rawgetp(L, LUA_REGISTRYINDEX, type);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

void check_type(lua_State* L, int idx, const char* type) {
  if (!is_type(L, idx, type)) type_error(L, idx, type);
}

void check_stack(lua_State* L, int n, const char* what) {
  if (lua_checkstack(L, n)) return;
  throw PlainError(what ? fmt::format("stack overflow ({})", what) : "stack overflow");
}

void raise_value(lua_State* L) {
  throw LuaErrorValue(luaL_ref(L, LUA_REGISTRYINDEX));
}

void call_lua(lua_State* L, int nargs, int nresults) {
#if defined(CULUA_LUA_CXX)
  lua_call(L, nargs, nresults);
#else
  if (lua_pcall(L, nargs, nresults, 0) != LUA_OK) raise_value(L);
#endif
}

int64_t check_integer(lua_State* L, int idx, const char* what) {
  if (lua_type(L, idx) != LUA_TNUMBER) {
    fail(ErrorKind::Type, "{} must be an integer, got {}", what, luaL_typename(L, idx));
  }
  if (lua_isinteger(L, idx)) return lua_tointeger(L, idx);
  const double d = lua_tonumber(L, idx);
  if (std::isnan(d) || std::isinf(d) || std::trunc(d) != d) {
    fail(ErrorKind::Value, "{} must be an integer, got {}", what, lua_tostring(L, idx));
  }
  if (d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
    fail(ErrorKind::Value, "{} {} overflows a 64-bit integer", what, lua_tostring(L, idx));
  }
  return static_cast<int64_t>(d);
}

namespace {

Shape read_shape(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  Shape s;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    s.push(check_integer(L, idx, "size"));
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    const lua_Integer n = luaL_len(L, idx);
    if (n > kMaxDims)
      fail(ErrorKind::Value, "shape has {} dimensions; at most {} are supported", int(n), kMaxDims);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, idx, i);
      s.push(check_integer(L, -1, "size"));
      lua_pop(L, 1);
    }
  } else {
    fail(ErrorKind::Type, "shape must be an integer or a table of integers, got {}",
         luaL_typename(L, idx));
  }
  return s;
}

}  // namespace

Shape check_shape(lua_State* L, int idx) {
  return as_argument(idx, [&] {
    Shape s = read_shape(L, idx);
    checked_numel(s, 1);
    return s;
  });
}

Shape check_shape_args(lua_State* L, int idx) {
  // -1 is resolved by the caller
  if (lua_type(L, idx) == LUA_TTABLE) return as_argument(idx, [&] { return read_shape(L, idx); });
  Shape s;
  const int top = lua_gettop(L);
  if (idx > top) arg_error(idx, "a shape expected, got no value", ErrorKind::Type);
  for (int i = idx; i <= top; ++i)
    s.push(as_argument(i, [&] { return check_integer(L, i, "size"); }));
  return s;
}

DType check_dtype(lua_State* L, int idx) {
  return as_argument(idx, [&] {
    if (lua_type(L, idx) != LUA_TSTRING) {
      fail(ErrorKind::Type, "dtype must be a string such as \"f32\", got {}",
           luaL_typename(L, idx));
    }
    size_t len = 0;
    const char* s = lua_tolstring(L, idx, &len);
    if (auto t = parse_dtype(std::string_view(s, len))) return *t;
    const std::string names(dtype_names());
    fail(ErrorKind::Value, "unknown dtype '{}' (expected one of {})", s, names);
  });
}

int check_axis(lua_State* L, int idx, int ndim, bool positions) {
  const int64_t k = check_integer(L, idx, "axis");
  if (k >= 1 && k <= ndim) return static_cast<int>(k - 1);
  if (k < 0 && k >= -int64_t{ndim}) return static_cast<int>(ndim + k);  // no -k: mininteger
  if (ndim == 0) {
    fail(ErrorKind::Index, "axis {} is out of range for a 0-d array (it has no axes)",
         lua_Integer(k));
  }
  if (positions) {
    if (k == 0) {
      fail(ErrorKind::Index, "axis 0 is out of range: axes start at 1 (1..{}, or -{}..-1)", ndim,
           ndim);
    }
    fail(ErrorKind::Index, "axis {} is out of range (1..{}, or -{}..-1)", lua_Integer(k), ndim,
         ndim);
  }
  if (k == 0) {
    fail(ErrorKind::Index, "axis 0 is out of range: axes start at 1 (1..{} for a {}-d array)", ndim,
         ndim);
  }
  fail(ErrorKind::Index, "axis {} is out of range for a {}-d array (axes 1..{}, or -{}..-1)",
       lua_Integer(k), ndim, ndim, ndim);
}

int64_t check_index(lua_State* L, int idx, int64_t length) {
  const int64_t i = check_integer(L, idx, "index");
  if (i >= 1 && i <= length) return i - 1;
  if (i < 0 && i >= -length) return length + i;  // (not -i: i may be the most negative integer)
  if (i == 0)
    fail(ErrorKind::Index, "index 0 is out of range: indices start at 1 (1..{})",
         lua_Integer(length));
  fail(ErrorKind::Index, "index {} is out of range 1..{}", lua_Integer(i), lua_Integer(length));
}

bool is_scalar(lua_State* L, int idx) {
  const int t = lua_type(L, idx);
  return t == LUA_TNUMBER || t == LUA_TBOOLEAN ||
         (t == LUA_TUSERDATA && has_metatable(L, idx, context(L).complex_mt));
}

Scalar check_scalar(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      return lua_isinteger(L, idx) ? Scalar::integer(lua_tointeger(L, idx))
                                   : Scalar::real(lua_tonumber(L, idx));
    case LUA_TBOOLEAN:
      return Scalar::boolean(lua_toboolean(L, idx));
    case LUA_TUSERDATA:
      if (has_metatable(L, idx, context(L).complex_mt)) {
        const auto* z = static_cast<const double*>(lua_touserdata(L, idx));
        return Scalar::complex(z[0], z[1]);
      }
      break;
    default:
      break;
  }
  if (idx > 0) {
    arg_error(idx,
              fmt::format("number, boolean or cu.complex expected, got {}", luaL_typename(L, idx)),
              ErrorKind::Type);
  }
  fail(ErrorKind::Type, "number, boolean or cu.complex expected, got {}", luaL_typename(L, idx));
  return {};
}

void push_scalar(lua_State* L, const Scalar& v) {
  switch (v.kind) {
    case Scalar::Kind::Bool:
      lua_pushboolean(L, v.b);
      return;
    case Scalar::Kind::Int:
      // A u64 value from 2^63 up is no Lua integer: it comes as the nearest float (docs/guide).
      if (v.big) {
        lua_pushnumber(L, static_cast<double>(static_cast<uint64_t>(v.i)));
      } else {
        lua_pushinteger(L, v.i);
      }
      return;
    case Scalar::Kind::Float:
      lua_pushnumber(L, v.re);
      return;
    case Scalar::Kind::Complex: {
      auto* z = static_cast<double*>(lua_newuserdatauv(L, 2 * sizeof(double), 0));
      z[0] = v.re;
      z[1] = v.im;
      set_metatable(L, kComplexType);
      return;
    }
  }
}

namespace {
// arg > 0: the table is that argument (bad argument #arg); 0: a plain error.
void check_keys(lua_State* L, int idx, int arg, std::initializer_list<const char*> allowed,
                bool positional) {
  if (lua_isnoneornil(L, idx)) return;
  idx = lua_absindex(L, idx);
  arg_type(L, idx, LUA_TTABLE);
  const auto n = positional ? static_cast<lua_Integer>(lua_rawlen(L, idx)) : 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= n) continue;
    bool ok = false;
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char* key = lua_tostring(L, -1);
      for (const char* a : allowed) ok = ok || std::strcmp(a, key) == 0;
    }
    if (!ok) {
      std::string names;
      for (const char* a : allowed) names += std::string(names.empty() ? "" : ", ") + a;
      lua_pushvalue(L, -1);
      const char* key = luaL_tolstring(L, -1, nullptr);
      const std::string message =
          fmt::format("unknown option '{}'; the options are {}{}", key, names.c_str(),
                      positional ? ", and the function's arguments as opts[1], opts[2], ..." : "");
      if (arg > 0) arg_error(arg, message);
      fail(ErrorKind::Value, "{}", message);
    }
  }
}
}  // namespace

void check_options(lua_State* L, int idx, std::initializer_list<const char*> allowed,
                   bool positional) {
  check_keys(L, idx, idx > 0 ? idx : 0, allowed, positional);
}

void check_fields(lua_State* L, int idx, std::initializer_list<const char*> allowed) {
  check_keys(L, idx, 0, allowed, false);
}

std::string defined_at(lua_State* L, int fn) {
  lua_Debug ar;
  lua_pushvalue(L, fn);
  lua_getinfo(L, ">S", &ar);
  if (ar.linedefined > 0) return std::string(ar.short_src) + ":" + std::to_string(ar.linedefined);
  return ar.short_src;
}

bool get_option(lua_State* L, int idx, const char* key) {
  if (idx == 0 || lua_type(L, idx) != LUA_TTABLE) return false;
  if (lua_getfield(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

Stream* opt_stream(lua_State* L, int opts_idx) {
  if (!get_option(L, opts_idx, "stream")) return nullptr;
  Stream* s = test_stream(L, -1);
  if (!s)
    option_error(opts_idx, "stream", ErrorKind::Type,
                 fmt::format("cu.Stream expected, got {}", luaL_typename(L, -1)));
  lua_pop(L, 1);
  return s;
}

bool opt_boolean(lua_State* L, int opts_idx, const char* key, bool fallback) {
  if (!get_option(L, opts_idx, key)) return fallback;
  if (!lua_isboolean(L, -1))
    option_error(opts_idx, key, ErrorKind::Type,
                 fmt::format("boolean expected, got {}", luaL_typename(L, -1)));
  const bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

Array* opt_array(lua_State* L, int opts_idx, const char* key) {
  if (!get_option(L, opts_idx, key)) return nullptr;
  ArrayBox* box = test_array(L, -1);
  if (!box)
    option_error(opts_idx, key, ErrorKind::Type,
                 fmt::format("cu.Array expected, got {}", luaL_typename(L, -1)));
  lua_pop(L, 1);
  as_option(opts_idx, key, [&] { box->array.check_alive(); });  // the option names it
  return &box->array;
}

}  // namespace culua::detail::lua
