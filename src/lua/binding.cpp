#include "lua/binding.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <new>

#include "core/error.hpp"

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

Context& cached_context(lua_State* L) {
  // The registry's address identifies the state (it is shared by all its threads).
  const void* registry = lua_topointer(L, LUA_REGISTRYINDEX);
  const uint64_t generation = g_context_generation.load(std::memory_order_relaxed);
  ContextCache& cache = t_context_cache;
  if (cache.registry == registry && cache.generation == generation) return *cache.ctx;
  Context* ctx = find_context(L);
  if (!ctx)
    fail(ErrorKind::Released, "the cu module is not open in this Lua state (it was closed)");
  cache = {registry, ctx, generation};
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
  // Messages that name their function themselves ("cu.bench: ...") get no second prefix.
  if (fn.empty() || msg.rfind("cu.", 0) == 0) return msg;
  return fn + ": " + msg;
}

PendingError pending_error(lua_State* L, const std::exception& e) {
  PendingError p;
  if (const auto* a = dynamic_cast<const ArgumentError*>(&e)) {
    p.kind = PendingError::Kind::Argument;
    p.arg = a->arg();
    p.message = a->what();
  } else if (const auto* v = dynamic_cast<const LuaErrorValue*>(&e)) {
    p.kind = PendingError::Kind::Value;
    p.arg = v->ref();
  } else if (dynamic_cast<const PlainError*>(&e)) {
    p.message = e.what();
  } else {
    p.message = error_message(L, e);
  }
  return p;
}

int raise_error(lua_State* L, PendingError& error) {
  switch (error.kind) {
    case PendingError::Kind::Value:
      lua_rawgeti(L, LUA_REGISTRYINDEX, error.arg);
      luaL_unref(L, LUA_REGISTRYINDEX, error.arg);
      return lua_error(L);
    case PendingError::Kind::Argument:
      lua_pushlstring(L, error.message.data(), error.message.size());
      std::string().swap(error.message);
      return luaL_argerror(L, error.arg, lua_tostring(L, -1));
    case PendingError::Kind::Message:
      break;
  }
  luaL_where(L, 1);
  lua_pushlstring(L, error.message.data(), error.message.size());
  std::string().swap(error.message);
  lua_concat(L, 2);
  return lua_error(L);
}

void arg_error(int arg, const std::string& message) {
  throw ArgumentError(arg, message);
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
  throw ArgumentError(arg, fmt::format("{} expected, got {}", expected, actual));
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
  Shape s = read_shape(L, idx);
  checked_numel(s, 1);
  return s;
}

Shape check_shape_args(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TTABLE) return read_shape(L, idx);  // -1 is resolved by the caller
  Shape s;
  const int top = lua_gettop(L);
  if (idx > top) fail(ErrorKind::Value, "a shape is required");
  for (int i = idx; i <= top; ++i) s.push(check_integer(L, i, "size"));
  return s;
}

DType check_dtype(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TSTRING) {
    fail(ErrorKind::Type, "dtype must be a string such as \"f32\", got {}", luaL_typename(L, idx));
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, idx, &len);
  if (auto t = parse_dtype(std::string_view(s, len))) return *t;
  const std::string names(dtype_names());
  fail(ErrorKind::Value, "unknown dtype '{}' (expected one of {})", s, names);
}

int64_t check_index(lua_State* L, int idx, int64_t length) {
  const int64_t i = check_integer(L, idx, "index");
  if (i >= 1 && i <= length) return i - 1;
  if (i < 0 && -i <= length) return length + i;
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
  fail(ErrorKind::Type, "expected a number, boolean or cu.complex value, got {}",
       luaL_typename(L, idx));
  return {};
}

void push_scalar(lua_State* L, const Scalar& v) {
  switch (v.kind) {
    case Scalar::Kind::Bool:
      lua_pushboolean(L, v.b);
      return;
    case Scalar::Kind::Int:
      lua_pushinteger(L, v.i);
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

void check_options(lua_State* L, int idx, std::initializer_list<const char*> allowed,
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
      fail(ErrorKind::Value, "unknown option '{}' (this function takes: {}{})", key, names.c_str(),
           positional ? ", and the function's arguments as opts[1], opts[2], ..." : "");
    }
  }
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
    fail(ErrorKind::Type, "option 'stream' must be a cu.Stream, got {}", luaL_typename(L, -1));
  lua_pop(L, 1);
  return s;
}

bool opt_boolean(lua_State* L, int opts_idx, const char* key, bool fallback) {
  if (!get_option(L, opts_idx, key)) return fallback;
  if (!lua_isboolean(L, -1))
    fail(ErrorKind::Type, "option '{}' must be a boolean, got {}", key, luaL_typename(L, -1));
  const bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

Array* opt_array(lua_State* L, int opts_idx, const char* key) {
  if (!get_option(L, opts_idx, key)) return nullptr;
  ArrayBox* box = test_array(L, -1);
  if (!box)
    fail(ErrorKind::Type, "option '{}' must be a cu.Array, got {}", key, luaL_typename(L, -1));
  lua_pop(L, 1);
  box->array.check_alive(key);
  return &box->array;
}

}  // namespace culua::detail::lua
