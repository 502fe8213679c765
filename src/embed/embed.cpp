// The embedding API (include/culua/culua.hpp) over the engine and the Lua bindings. Every call
// from C++ into Lua is protected (lua_pcall with a message handler that keeps the traceback);
// C++ exceptions never cross into Lua, Lua errors surface as culua::Error.
#include <lua.hpp>

#include <cmath>
#include <culua/culua.hpp>
#include <exception>
#include <new>

#include "backends/backends.hpp"
#include "core/base/error.hpp"
#include "core/base/error_kind.hpp"
#include "core/base/interrupt.hpp"
#include "core/model/array.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/runtime.hpp"
#include "core/version.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/lua_heap.hpp"
#include "lua/sandbox.hpp"

namespace culua {

namespace d = detail;

// The internal enumerations mirror the public ones.
static_assert(static_cast<int>(DType::F32) == static_cast<int>(d::DType::F32) &&
              static_cast<int>(DType::BF16) == static_cast<int>(d::DType::BF16) &&
              static_cast<int>(DType::Bool) == static_cast<int>(d::DType::Bool) &&
              static_cast<int>(DType::C128) == static_cast<int>(d::DType::C128) &&
              static_cast<int>(DType::U16) == static_cast<int>(d::DType::U16) &&
              static_cast<int>(DType::U64) == static_cast<int>(d::DType::U64) &&
              d::kNumDTypes == 15);

namespace {

d::DType to_internal(DType t) {
  return static_cast<d::DType>(t);
}

DType to_public(d::DType t) {
  return static_cast<DType>(t);
}

// An argument of the wrong type in a call of a registered C++ function: reported as Lua reports
// one, without the function-name prefix other errors get.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

// Runs `f`, turning the engine's exceptions into culua::Error.
template <class F>
auto translate(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const d::Error& e) {
    throw Error(e.what(), {}, d::kind_name(e.kind()));
  } catch (const std::bad_alloc&) {
    throw Error("out of host memory", {}, "out_of_memory");
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

std::vector<std::string> split_path(std::string_view name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = name.find('.', start);
    parts.emplace_back(name.substr(start, dot == std::string_view::npos ? name.npos : dot - start));
    if (parts.back().empty()) throw Error("invalid name \"" + std::string(name) + "\"");
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (parts.empty()) throw Error("empty name");
  return parts;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Free functions, Error

std::string_view dtype_name(DType t) {
  return d::name(to_internal(t));
}

size_t itemsize(DType t) {
  return d::itemsize(to_internal(t));
}

std::string_view version() {
  return CULUA_VERSION;
}

Error::Error(const std::string& message, const std::string& traceback, const std::string& kind)
    : std::runtime_error(traceback.empty() ? message : message + "\n" + traceback),
      message_(message),
      traceback_(traceback),
      kind_(kind) {}

namespace embed_detail {
void bad_argument(std::string_view function, size_t index, const std::string& why) {
  throw ArgumentError("bad argument #" + std::to_string(index) + " to '" + std::string(function) +
                      "' (" + why + ")");
}
}  // namespace embed_detail

// ---------------------------------------------------------------------------------------------
// Array

struct Array::Impl {
  struct Binding {
    std::shared_ptr<d::Runtime> engine;
    d::Array array;
  };
  void* data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  bool wrapped = false;
  // A wrapped array: one binding per Runtime it was set into. An array from a script: its own.
  std::vector<Binding> bindings;

  const Binding& bound(const char* what) const {
    if (bindings.empty()) {
      throw Error(std::string(what) + ": the wrapped array has not been set into a Runtime yet");
    }
    return bindings.front();
  }
};

namespace {

const Array::Impl& impl_of(const std::shared_ptr<Array::Impl>& impl) {
  if (!impl) throw Error("empty culua::Array");
  return *impl;
}

Array from_internal(const std::shared_ptr<d::Runtime>& engine, const d::Array& a) {
  auto impl = std::make_shared<Array::Impl>();
  impl->data = a.data();
  const d::Shape s = a.shape();
  for (int i = 0; i < s.ndim; ++i) impl->shape.push_back(s[i]);
  impl->dtype = to_public(a.dtype());
  impl->wrapped = !a.buffer()->owned();
  impl->bindings.push_back({engine, a});
  return Array(std::move(impl));
}

}  // namespace

Array Array::wrap(void* data, std::vector<int64_t> shape, DType dtype) {
  if (!data) throw Error("Array::wrap: null pointer");
  if (shape.empty()) throw Error("Array::wrap: empty shape (a scalar is shape {1})");
  if (static_cast<int>(shape.size()) > d::kMaxDims) {
    throw Error("Array::wrap: " + std::to_string(shape.size()) + " dimensions; at most " +
                std::to_string(d::kMaxDims) + " are supported");
  }
  for (int64_t n : shape) {
    if (n <= 0) {
      throw Error("Array::wrap: every dimension must be positive (got " + std::to_string(n) + ")");
    }
  }
  auto impl = std::make_shared<Impl>();
  impl->data = data;
  impl->shape = std::move(shape);
  impl->dtype = dtype;
  impl->wrapped = true;
  return Array(std::move(impl));
}

void* Array::data() const {
  return impl_of(impl_).data;
}
const std::vector<int64_t>& Array::shape() const {
  return impl_of(impl_).shape;
}
DType Array::dtype() const {
  return impl_of(impl_).dtype;
}
int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t s : impl_of(impl_).shape) n *= s;
  return n;
}
size_t Array::nbytes() const {
  return static_cast<size_t>(size()) * itemsize(dtype());
}
bool Array::is_wrapped() const {
  return impl_of(impl_).wrapped;
}
bool Array::on_device() const {
  return impl_of(impl_).bound("Array::on_device").array.location() == d::Location::Device;
}
int Array::device() const {
  return impl_of(impl_).bound("Array::device").array.device();
}

void Array::copy_to_host(void* dst, size_t bytes) const {
  const Impl::Binding& b = impl_of(impl_).bound("Array::copy_to_host");
  if (bytes != nbytes()) {
    throw Error("Array::copy_to_host: " + std::to_string(bytes) + " bytes given, the array has " +
                std::to_string(nbytes()));
  }
  if (!dst) throw Error("Array::copy_to_host: null destination");
  translate([&] {
    b.array.check_alive();
    d::Runtime& rt = *b.engine;
    const d::Array host = d::Array::wrap(rt.backend_ptr(), dst, b.array.shape(), b.array.dtype(),
                                         d::Location::Pageable, b.array.device());
    d::copy(rt, host, b.array);
  });
}

void Array::copy_from_host(const void* src, size_t bytes) {
  const Impl::Binding& b = impl_of(impl_).bound("Array::copy_from_host");
  if (bytes != nbytes()) {
    throw Error("Array::copy_from_host: " + std::to_string(bytes) + " bytes given, the array has " +
                std::to_string(nbytes()));
  }
  if (!src) throw Error("Array::copy_from_host: null source");
  translate([&] {
    b.array.check_alive();
    d::Runtime& rt = *b.engine;
    const d::Array host = d::Array::wrap(rt.backend_ptr(), const_cast<void*>(src), b.array.shape(),
                                         b.array.dtype(), d::Location::Pageable, b.array.device());
    d::copy(rt, b.array, host);
  });
}

// ---------------------------------------------------------------------------------------------
// Value

Value Value::other(std::string lua_type_name) {
  Value v;
  v.other_ = std::move(lua_type_name);
  return v;
}

Value::Type Value::type() const {
  switch (v_.index()) {
    case 1:
      return Type::Boolean;
    case 2:
      return Type::Integer;
    case 3:
      return Type::Number;
    case 4:
      return Type::String;
    case 5:
      return Type::Array;
    default:
      return other_.empty() ? Type::Nil : Type::Other;
  }
}

std::string Value::type_name() const {
  switch (type()) {
    case Type::Nil:
      return "nil";
    case Type::Boolean:
      return "boolean";
    case Type::Integer:
    case Type::Number:
      return "number";
    case Type::String:
      return "string";
    case Type::Array:
      return "cu.Array";
    case Type::Other:
      break;
  }
  return other_;
}

namespace {
[[noreturn]] void wrong_type(const char* expected, const Value& v) {
  throw Error(std::string(expected) + " expected, got " + v.type_name());
}
}  // namespace

bool Value::as_bool() const {
  if (const bool* b = std::get_if<bool>(&v_)) return *b;
  wrong_type("boolean", *this);
}

int64_t Value::as_integer() const {
  if (const int64_t* i = std::get_if<int64_t>(&v_)) return *i;
  if (const double* x = std::get_if<double>(&v_)) {
    if (*x >= -9223372036854775808.0 && *x < 9223372036854775808.0 &&
        static_cast<double>(static_cast<int64_t>(*x)) == *x) {
      return static_cast<int64_t>(*x);
    }
    throw Error("number has no integer representation");
  }
  wrong_type("integer", *this);
}

double Value::as_number() const {
  if (const double* x = std::get_if<double>(&v_)) return *x;
  if (const int64_t* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
  wrong_type("number", *this);
}

const std::string& Value::as_string() const {
  if (const std::string* s = std::get_if<std::string>(&v_)) return *s;
  wrong_type("string", *this);
}

const Array& Value::as_array() const {
  if (const Array* a = std::get_if<Array>(&v_)) {
    if (!*a) throw Error("empty culua::Array");
    return *a;
  }
  wrong_type("cu.Array", *this);
}

// ---------------------------------------------------------------------------------------------
// Runtime

struct Runtime::Impl {
  std::shared_ptr<d::Runtime> engine;
  lua_State* L = nullptr;
  d::InterruptFlag interrupt;
  std::string traceback;   // of the latest error, kept by the message handler
  std::string error_kind;  // of the latest error when it is a cu.Error (err.kind)
  // Options::sandbox: destroyed after the state (its allocator serves the state).
  std::unique_ptr<d::lua::Sandbox> sandbox;
  d::lua::LuaHeap heap;    // the state's allocator, destroyed after it
  bool limit_hit = false;  // an entry ended by a sandbox limit (queued work may still run)

  ~Impl() {
    // A wait cut short by the time limit leaves its work queued: the teardown does not wait for
    // it (the host backend drops it; CUDA work ends with the process). Other queued work of a
    // sandbox is waited for within one time limit (a queued cu.sleep of an hour is not).
    if (!limit_hit && engine && sandbox && !sandbox->wait_for_queued_work(*engine, true, nullptr)) {
      limit_hit = true;
    }
    if (limit_hit && engine) engine->abandon_queued_work();
    if (L) {
      d::lua::mark_closing(L);
      lua_close(L);  // before the engine: finalizers free arrays through it
    }
  }

  // Lua value at idx -> Value (inside a protected call).
  Value to_value(lua_State* S, int idx) {
    switch (lua_type(S, idx)) {
      case LUA_TNIL:
      case LUA_TNONE:
        return Value();
      case LUA_TBOOLEAN:
        return Value(static_cast<bool>(lua_toboolean(S, idx)));
      case LUA_TNUMBER:
        if (lua_isinteger(S, idx)) return Value(static_cast<int64_t>(lua_tointeger(S, idx)));
        return Value(static_cast<double>(lua_tonumber(S, idx)));
      case LUA_TSTRING: {
        size_t len = 0;
        const char* s = lua_tolstring(S, idx, &len);
        return Value(std::string(s, len));
      }
      default:
        break;
    }
    if (d::lua::ArrayBox* box = d::lua::test_array(S, idx)) {
      box->array.check_alive();
      return Value(from_internal(engine, box->array));
    }
    if (luaL_getmetafield(S, idx, "__name") == LUA_TSTRING) {
      std::string name = lua_tostring(S, -1);
      lua_pop(S, 1);
      return Value::other(std::move(name));
    }
    return Value::other(luaL_typename(S, idx));
  }

  // Value -> Lua (inside a protected call).
  void push_value(lua_State* S, const Value& v) {
    switch (v.type()) {
      case Value::Type::Nil:
      case Value::Type::Other:
        lua_pushnil(S);
        return;
      case Value::Type::Boolean:
        lua_pushboolean(S, v.as_bool());
        return;
      case Value::Type::Integer:
        lua_pushinteger(S, static_cast<lua_Integer>(v.as_integer()));
        return;
      case Value::Type::Number:
        lua_pushnumber(S, v.as_number());
        return;
      case Value::Type::String:
        lua_pushlstring(S, v.as_string().data(), v.as_string().size());
        return;
      case Value::Type::Array:
        d::lua::push_array(S, bind(v.as_array()));
        return;
    }
  }

  // The internal array of `a` in this runtime: a wrapped array is wrapped once per runtime.
  d::Array bind(const Array& a) {
    Array::Impl& ai = *a.impl();
    for (const auto& b : ai.bindings) {
      if (b.engine == engine) return b.array;
    }
    if (!ai.wrapped) {
      throw Error(
          "this array belongs to another culua::Runtime (arrays made by a script stay in its "
          "runtime; wrap memory to share it)");
    }
    const d::PointerInfo where = engine->backend().locate(ai.data);
    d::Shape shape;
    for (int64_t n : ai.shape) shape.push(n);
    d::Array arr = d::Array::wrap(engine->backend_ptr(), ai.data, shape, to_internal(ai.dtype),
                                  where.location, where.device);
    ai.bindings.push_back({engine, arr});
    return arr;
  }
};

namespace {

using Impl = Runtime::Impl;

int message_handler(lua_State* L);

void stop_hook(lua_State* L, lua_Debug* ar) {
  // An interrupted wait raises its own error: the call of the message handler and the return
  // from it must not replace that error with this one.
  // The handler may call the __tostring of a cu.Error: a hook event in a function it called.
  lua_getinfo(L, "f", ar);
  bool in_handler = lua_tocfunction(L, -1) == message_handler;
  lua_pop(L, 1);
  lua_Debug caller;
  if (!in_handler && lua_getstack(L, 1, &caller) && lua_getinfo(L, "f", &caller)) {
    in_handler = lua_tocfunction(L, -1) == message_handler;
    lua_pop(L, 1);
  }
  if (in_handler) return;
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

// Message handler: the message as a string; the traceback goes to Impl::traceback.
int message_handler(lua_State* L) {
  auto* impl = static_cast<Impl*>(lua_touserdata(L, lua_upvalueindex(1)));
  impl->error_kind.clear();
  if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING &&
      std::string_view(lua_tostring(L, -1)) == "cu.Error" &&
      lua_getfield(L, 1, "kind") == LUA_TSTRING) {
    impl->error_kind = lua_tostring(L, -1);
  }
  lua_settop(L, 1);
  if (!lua_isstring(L, 1)) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      lua_replace(L, 1);
    } else {
      lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
      lua_replace(L, 1);
    }
  }
  luaL_traceback(L, L, nullptr, 1);
  impl->traceback = lua_tostring(L, -1);
  lua_pop(L, 1);
  lua_settop(L, 1);
  return 1;
}

struct Protected {
  Impl* impl;
  const std::function<void(lua_State*)>* body;
  std::exception_ptr cxx_error;  // a C++ exception from the body, rethrown as it was
};

int protected_body(lua_State* L) {
  auto* p = static_cast<Protected*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  try {
    (*p->body)(L);
    return 0;
  } catch (const std::exception& e) {
    p->cxx_error = std::current_exception();
  }
  lua_pushliteral(L, "C++ exception");
  return lua_error(L);
}

// Runs `body` in a protected call on the runtime's state, interruptible by interrupt().
void protect(Impl& impl, const std::function<void(lua_State*)>& body) {
  lua_State* L = impl.L;
  impl.interrupt.clear();
  if (impl.sandbox) {
    impl.sandbox->enter(L);
  } else {
    lua_sethook(L, nullptr, 0, 0);
  }
  d::InterruptScope scope(&impl.interrupt);
  Protected p{&impl, &body, nullptr};
  const int base = lua_gettop(L);
  lua_pushlightuserdata(L, &impl);
  lua_pushcclosure(L, message_handler, 1);
  lua_pushcfunction(L, protected_body);
  lua_pushlightuserdata(L, &p);
  impl.traceback.clear();
  impl.error_kind.clear();
  int status = lua_pcall(L, 1, 0, base + 1);
  // In a sandbox, an entry a limit or an interrupt ended cuts short the host work it queued;
  // outside one, queued work goes on after an interrupt, as on a GPU.
  if (impl.sandbox) status = impl.sandbox->leave(L, status);
  std::string message;
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    message = msg ? msg : "(error object is not a string)";
  }
  lua_settop(L, base);
  if (!impl.sandbox) lua_sethook(L, nullptr, 0, 0);
  if (p.cxx_error) translate([&] { std::rethrow_exception(p.cxx_error); });
  if (status != LUA_OK && impl.sandbox) {
    // What ended the entry when a limit did, also where the script's own error (an error
    // handler that failed too, a message of its own) reached the host instead.
    const std::string limit = impl.sandbox->failure_message();
    const std::string kind = impl.sandbox->failure_kind();
    if (kind == "limit" || (kind == "out_of_memory" && status == LUA_ERRMEM)) {
      if (kind == "limit") impl.limit_hit = true;
      if (message.find(limit) == std::string::npos) message = limit;
      impl.error_kind = kind;
    }
    if (impl.error_kind == "limit") impl.limit_hit = true;
  }
  if (status != LUA_OK) throw Error(message, impl.traceback, impl.error_kind);
}

// Pushes the value at a dotted path (nil when a table on the way is missing).
void push_path(lua_State* L, const std::vector<std::string>& parts, size_t count) {
  lua_pushglobaltable(L);
  for (size_t i = 0; i < count; ++i) {
    if (lua_isnil(L, -1)) return;
    lua_getfield(L, -1, parts[i].c_str());
    lua_remove(L, -2);
  }
}

// A registered C++ function, owned by its Lua closure (the upvalue).
struct FunctionBox {
  Function f;
  std::string name;
  Impl* impl;
};

int function_gc(lua_State* L) {
  static_cast<FunctionBox*>(lua_touserdata(L, 1))->~FunctionBox();
  return 0;
}

int call_function(lua_State* L) {
  auto* box = static_cast<FunctionBox*>(lua_touserdata(L, lua_upvalueindex(1)));
  std::string message;
  try {
    std::vector<Value> args;
    const int n = lua_gettop(L);
    args.reserve(static_cast<size_t>(n));
    for (int i = 1; i <= n; ++i) args.push_back(box->impl->to_value(L, i));
    const std::vector<Value> out = box->f(args);
    if (!lua_checkstack(L, static_cast<int>(out.size()) + LUA_MINSTACK)) {
      throw Error("too many results");
    }
    for (const Value& v : out) box->impl->push_value(L, v);
    return static_cast<int>(out.size());
  } catch (const ArgumentError& e) {
    message = e.message();
  } catch (const Error& e) {
    message = box->name + ": " + e.message();
  } catch (const std::bad_alloc&) {
    message = box->name + ": out of host memory";
  } catch (const std::exception& e) {
    message = box->name + ": " + e.what();
  }
  return luaL_error(L, "%s", message.c_str());
}

constexpr char kFunctionType[] = "culua.Function";

d::BackendKind backend_kind(Backend b) {
  switch (b) {
    case Backend::Host:
      return d::BackendKind::Host;
    case Backend::Cuda:
      return d::BackendKind::Cuda;
    default:
      return d::BackendKind::Auto;
  }
}

}  // namespace

Runtime::Runtime() : Runtime(Options{}) {}

Runtime::Runtime(const Options& options) : impl_(std::make_unique<Impl>()) {
  d::RuntimeOptions ro;
  ro.backend = backend_kind(options.backend);
  if (options.device < 0) throw Error("Options::device must not be negative");
  ro.device = options.device;
  translate([&] {
    impl_->engine = std::make_shared<d::Runtime>(d::backends::engines(ro));
    // An explicitly requested backend must be there now, not at the first operation.
    if (options.backend == Backend::Cuda) impl_->engine->backend();
  });
  impl_->L = luaL_newstate();
  if (!impl_->L) throw Error("cannot create the Lua state: not enough memory");
  impl_->heap.install(impl_->L);
  lua_gc(impl_->L, LUA_GCGEN, 0, 0);
  const bool all_libs = options.open_libs;
  protect(*impl_, [&](lua_State* L) {
    if (all_libs) {
      luaL_openlibs(L);
    } else {
      const luaL_Reg safe[] = {
          {LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
          {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
          {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
          {LUA_UTF8LIBNAME, luaopen_utf8}};
      for (const luaL_Reg& lib : safe) {
        luaL_requiref(L, lib.name, lib.func, 1);
        lua_pop(L, 1);
      }
    }
    d::lua::open_cu(L, *impl_->engine);
    // The state collects generationally (above): a step is a young collection.
    impl_->engine->collect_young = [L] { lua_gc(L, LUA_GCSTEP, 0); };
    lua_setglobal(L, "cu");
    luaL_newmetatable(L, kFunctionType);
    lua_pushcfunction(L, function_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
  });
  if (options.sandbox.enabled) {
    const SandboxOptions& so = options.sandbox;
    if (!(so.time_limit >= 0) || !std::isfinite(so.time_limit)) {
      throw Error("Options::sandbox.time_limit must be a finite number of seconds, 0 or more");
    }
    d::lua::SandboxLimits limits;
    limits.time_s = so.time_limit;
    limits.instructions = so.instruction_limit;
    limits.heap_bytes = so.heap_limit;
    limits.memory_bytes = so.memory_limit;
    limits.output_files = so.output_files;
    limits.streams = so.stream_limit;
    if (so.on_stuck && (!(so.watchdog_grace >= 0) || !std::isfinite(so.watchdog_grace))) {
      throw Error("Options::sandbox.watchdog_grace must be a finite number of seconds, 0 or more");
    }
    auto box = std::make_unique<d::lua::Sandbox>(std::move(limits));
    if (so.on_stuck) box->enable_watchdog(so.watchdog_grace, so.on_stuck);
    protect(*impl_, [&](lua_State* L) { box->install(L, *impl_->engine, &impl_->interrupt); });
    impl_->sandbox = std::move(box);
  }
}

Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

namespace {
Impl& live(const std::unique_ptr<Impl>& impl) {
  if (!impl) throw Error("use of a moved-from culua::Runtime");
  return *impl;
}
}  // namespace

void Runtime::run_file(const std::string& path, const std::vector<std::string>& args) {
  Impl& impl = live(impl_);
  protect(impl, [&](lua_State* L) {
    lua_createtable(L, static_cast<int>(args.size()), 1);
    lua_pushstring(L, path.c_str());
    lua_rawseti(L, -2, 0);
    for (size_t i = 0; i < args.size(); ++i) {
      lua_pushstring(L, args[i].c_str());
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_setglobal(L, "arg");
    if (luaL_loadfilex(L, path.c_str(), d::lua::load_mode(L)) != LUA_OK) lua_error(L);
    luaL_checkstack(L, static_cast<int>(args.size()), "too many script arguments");
    for (const std::string& a : args) lua_pushstring(L, a.c_str());
    lua_call(L, static_cast<int>(args.size()), 0);
  });
}

void Runtime::run_string(std::string_view code, std::string_view chunkname) {
  Impl& impl = live(impl_);
  const std::string name(chunkname);
  protect(impl, [&](lua_State* L) {
    if (luaL_loadbufferx(L, code.data(), code.size(), name.c_str(), d::lua::load_mode(L)) !=
        LUA_OK) {
      lua_error(L);
    }
    lua_call(L, 0, 0);
  });
}

Value Runtime::eval_value(std::string_view expression) {
  Impl& impl = live(impl_);
  const std::string code = "return " + std::string(expression);
  Value result;
  protect(impl, [&](lua_State* L) {
    if (luaL_loadbufferx(L, code.data(), code.size(), "=(eval)", d::lua::load_mode(L)) != LUA_OK) {
      lua_error(L);
    }
    lua_call(L, 0, 1);
    result = impl.to_value(L, -1);
  });
  return result;
}

void Runtime::set(std::string_view name, const Value& value) {
  Impl& impl = live(impl_);
  const std::vector<std::string> parts = split_path(name);
  protect(impl, [&](lua_State* L) {
    push_path(L, parts, parts.size() - 1);
    if (!lua_istable(L, -1)) {
      throw Error("set(\"" + std::string(name) + "\"): no table at \"" +
                  std::string(name.substr(0, name.rfind('.'))) + "\"");
    }
    impl.push_value(L, value);
    lua_setfield(L, -2, parts.back().c_str());
  });
}

Value Runtime::get_value(std::string_view name) const {
  Impl& impl = live(impl_);
  const std::vector<std::string> parts = split_path(name);
  Value result;
  protect(impl, [&](lua_State* L) {
    push_path(L, parts, parts.size());
    result = impl.to_value(L, -1);
  });
  return result;
}

std::vector<Value> Runtime::call_values(std::string_view name, const std::vector<Value>& args) {
  Impl& impl = live(impl_);
  const std::vector<std::string> parts = split_path(name);
  std::vector<Value> results;
  protect(impl, [&](lua_State* L) {
    push_path(L, parts, parts.size());
    if (!lua_isfunction(L, -1)) {
      if (luaL_getmetafield(L, -1, "__call") == LUA_TNIL) {
        throw Error("call(\"" + std::string(name) + "\"): not a function (" + luaL_typename(L, -1) +
                    ")");
      }
      lua_pop(L, 1);  // callable through __call
    }
    luaL_checkstack(L, static_cast<int>(args.size()) + LUA_MINSTACK, "too many arguments");
    for (const Value& v : args) impl.push_value(L, v);
    const int base = lua_gettop(L) - static_cast<int>(args.size()) - 1;
    lua_call(L, static_cast<int>(args.size()), LUA_MULTRET);
    const int n = lua_gettop(L) - base;
    results.reserve(static_cast<size_t>(n));
    for (int i = 1; i <= n; ++i) results.push_back(impl.to_value(L, base + i));
  });
  return results;
}

void Runtime::set_function_values(std::string_view name, Function f) {
  Impl& impl = live(impl_);
  if (!f) throw Error("set_function(\"" + std::string(name) + "\"): empty function");
  const std::vector<std::string> parts = split_path(name);
  protect(impl, [&](lua_State* L) {
    push_path(L, parts, parts.size() - 1);
    if (!lua_istable(L, -1)) {
      throw Error("set_function(\"" + std::string(name) + "\"): no table at \"" +
                  std::string(name.substr(0, name.rfind('.'))) + "\"");
    }
    auto* box = static_cast<FunctionBox*>(lua_newuserdatauv(L, sizeof(FunctionBox), 0));
    new (box) FunctionBox{std::move(f), parts.back(), &impl};
    luaL_setmetatable(L, kFunctionType);
    lua_pushcclosure(L, call_function, 1);
    lua_setfield(L, -2, parts.back().c_str());
  });
}

void Runtime::use_stream(CUstream_st* stream) {
  Impl& impl = live(impl_);
  translate([&] {
    d::Runtime& rt = *impl.engine;
    const int device = rt.device();
    if (stream) {
      rt.set_current_stream(rt.backend().wrap_stream(stream, device));
    } else {
      rt.set_current_stream(rt.backend().default_stream(device));
    }
  });
}

void Runtime::synchronize() {
  Impl& impl = live(impl_);
  impl.interrupt.clear();
  d::InterruptScope scope(&impl.interrupt);
  translate([&] { impl.engine->synchronize(); });
}

void Runtime::interrupt() noexcept {
  if (!impl_) return;
  impl_->interrupt.request();
  if (impl_->L && impl_->sandbox) {
    d::lua::Sandbox::interrupt_now(impl_->L);  // the sandbox's hook stays: pcall cannot hold it
  } else if (impl_->L) {
    lua_sethook(impl_->L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
  }
}

void Runtime::collect_garbage() {
  Impl& impl = live(impl_);
  protect(impl, [](lua_State* L) { lua_gc(L, LUA_GCCOLLECT); });
}

std::string Runtime::backend() const {
  Impl& impl = live(impl_);
  return translate([&] { return std::string(d::backend_name(impl.engine->kind())); });
}

int Runtime::device() const {
  Impl& impl = live(impl_);
  return translate([&] { return impl.engine->device(); });
}

}  // namespace culua
