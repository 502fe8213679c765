// Shared machinery of the Lua bindings: the per-state context, the trampoline that turns C++
// exceptions into Lua errors, and argument conversion. Only src/lua includes Lua's headers.
#pragma once

#include <lua.hpp>

#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include "core/array.hpp"
#include "core/runtime.hpp"
#include "core/scalar.hpp"
#include "lua/cu_module.hpp"

namespace culua::detail::measure {
class TraceRecorder;
}

namespace culua::detail::lua {

// One per lua_State, owned by the state (a userdata in the registry), reachable through the
// state's extra space. Metatable addresses allow a type check without a string lookup.
struct Context {
  Runtime* rt = nullptr;
  const void* array_mt = nullptr;
  const void* stream_mt = nullptr;
  const void* event_mt = nullptr;
  const void* complex_mt = nullptr;
  const void* kernel_mt = nullptr;
  const void* bound_mt = nullptr;  // a kernel with its launch configuration (k:configure)
  // The launch configuration table whose keys were last checked (kernel launches check a table
  // used for many launches once).
  const void* checked_launch_config = nullptr;
  uint64_t launch_site_version = 0;  // the last LaunchSite version handed out
  RunOptions run_options;            // from the command line
  // The thread (main state or coroutine) of the latest call into the bindings: where the script
  // location of the operation being issued is read (the trace, strict-mode messages).
  lua_State* active = nullptr;
  std::unordered_set<std::string> warned_sites;   // host-clock tripwire: once per call site
  std::shared_ptr<measure::TraceRecorder> trace;  // cu.trace: the running or last trace
};

// Type names; their addresses also key the metatables in the registry (a light userdata key is
// found without hashing a string, which matters when creating an array per operation).
inline constexpr char kArrayType[] = "cu.Array";
inline constexpr char kStreamType[] = "cu.Stream";
inline constexpr char kEventType[] = "cu.Event";
inline constexpr char kComplexType[] = "cu.Complex";
inline constexpr char kScopeType[] = "cu.StreamScope";

// Creates the metatable of `type` (see luaL_newmetatable) and leaves it on the stack.
void new_metatable(lua_State* L, const char* type);
// Sets the metatable of `type` on the value on top of the stack.
inline void set_metatable(lua_State* L, const char* type) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, type);
  lua_setmetatable(L, -2);
}

inline Context& context(lua_State* L) {
  return **static_cast<Context**>(lua_getextraspace(L));
}
inline Runtime& runtime(lua_State* L) {
  return *context(L).rt;
}

// Converts the exception in flight into the message of a Lua error (and notes where a fatal
// device error first surfaced).
std::string error_message(lua_State* L, const std::exception& e);

// The one trampoline of every C function registered with Lua. A Lua error raised inside F (a
// `lua_longjmp*` thrown by the C++ build of Lua) is not caught here and unwinds through.
template <lua_CFunction F>
int entry(lua_State* L) {
  context(L).active = L;
  std::string message;
  try {
    return F(L);
  } catch (const std::exception& e) {
    message = error_message(L, e);
  }
  return luaL_error(L, "%s", message.c_str());
}

// Is the value at idx a userdata whose metatable is `mt`?
inline bool has_metatable(lua_State* L, int idx, const void* mt) {
  if (!lua_getmetatable(L, idx)) return false;
  const bool same = lua_topointer(L, -1) == mt;
  lua_pop(L, 1);
  return same;
}

// Sizes and indices.
int64_t check_integer(lua_State* L, int idx, const char* what);
Shape check_shape(lua_State* L, int idx);
// A shape for view/reshape from a table at idx, or from the integers idx..top; may hold one -1.
Shape check_shape_args(lua_State* L, int idx);
DType check_dtype(lua_State* L, int idx);
// 1-based index (negative counts from the end) into a dimension of `length`; returns 0-based.
int64_t check_index(lua_State* L, int idx, int64_t length);

// Scalars: numbers, booleans and cu.complex values.
bool is_scalar(lua_State* L, int idx);
Scalar check_scalar(lua_State* L, int idx);
void push_scalar(lua_State* L, const Scalar& v);

// Options tables. check_options raises on keys not in `allowed` (catches typos).
void check_options(lua_State* L, int idx, std::initializer_list<const char*> allowed);
// Pushes opts[key] and returns true when present; otherwise pushes nothing.
bool get_option(lua_State* L, int idx, const char* key);
Stream* opt_stream(lua_State* L, int opts_idx);
bool opt_boolean(lua_State* L, int opts_idx, const char* key, bool fallback);
// opts[key] as an array (for out=), or null when absent; raises for other values and freed arrays.
Array* opt_array(lua_State* L, int opts_idx, const char* key);

// Arrays (array.cpp).
struct ArrayBox {
  Array array;
};
ArrayBox* new_array(lua_State* L);  // pushes an empty cu.Array
void push_array(lua_State* L, Array a);
Array& check_array(lua_State* L, int idx);    // raises for non-arrays and freed arrays
ArrayBox* test_array(lua_State* L, int idx);  // null when not a cu.Array

// Streams and events (stream.cpp, event.cpp).
void push_stream(lua_State* L, std::shared_ptr<Stream> s);
Stream& check_stream(lua_State* L, int idx);
Stream* test_stream(lua_State* L, int idx);
Event* test_event(lua_State* L, int idx);

// Registration of each type: metatables and the functions they add to the module table at -1.
void register_array(lua_State* L);
void register_stream(lua_State* L);
void register_event(lua_State* L);
void register_complex(lua_State* L);
// Math: elementwise (math.cpp), reductions (reduce.cpp), random numbers (random.cpp), matrix
// products (linalg.cpp). Each adds functions to the module table at -1 and may add array methods.
void register_math(lua_State* L);
void register_reduce(lua_State* L);
void register_random(lua_State* L);
void register_linalg(lua_State* L);
// Run-time kernels: cu.compile (kernel.cpp), cu.elementwise and cu.reduction (kernel_template.cpp).
void register_kernel(lua_State* L);
void register_kernel_templates(lua_State* L);
// Measurement: cu.time, cu.clock, cu.ledger, cu.strict, cu.trace, cu.range (measure.cpp); cu.bench
// (bench.cpp); cu.sweep and cu.plot (sweep.cpp).
void register_measure(lua_State* L);
void register_bench(lua_State* L);
void register_sweep(lua_State* L);
// Adds methods (a:sum(), a:exp()) to cu.Array; call after register_array.
void add_array_methods(lua_State* L, const luaL_Reg* methods);

}  // namespace culua::detail::lua
