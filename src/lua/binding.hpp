// Shared machinery of the Lua bindings: the per-state context, the trampoline that turns C++
// exceptions into Lua errors, and argument conversion. Only src/lua includes Lua's headers.
#pragma once

#include <lua.hpp>

#include <exception>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/base/error.hpp"
#include "core/model/array.hpp"
#include "core/model/scalar.hpp"
#include "core/runtime/graph.hpp"
#include "core/runtime/runtime.hpp"
#include "lua/cu_module.hpp"

namespace culua::detail::measure {
class TraceRecorder;
class Profiler;
}  // namespace culua::detail::measure
namespace culua::detail::fuse {
class KernelCache;
}
namespace culua::detail::dist {
class Communicator;
}

namespace culua::detail::lua {

// One per lua_State, owned by the state (a userdata in the registry), reachable through the
// state's extra space. Metatable addresses allow a type check without a string lookup.
struct Context {
  Runtime* rt = nullptr;
  const void* array_mt = nullptr;
  int array_mt_ref = LUA_NOREF;  // the array metatable's registry reference (new_array)
  // The metatable free() gives an array: the array one without __gc, so that the collector has no
  // finalizer to call for a released array (a Lua call it would make for every array freed).
  const void* released_array_mt = nullptr;
  int released_array_mt_ref = LUA_NOREF;
  const void* stream_mt = nullptr;
  uint64_t script_streams = 0;  // streams made by cu.stream and not yet released (the sandbox caps)
  const void* event_mt = nullptr;
  const void* complex_mt = nullptr;
  const void* kernel_mt = nullptr;
  const void* bound_mt = nullptr;  // a kernel with its launch configuration (k:configure)
  const void* graph_mt = nullptr;
  // The launch configuration table whose keys were last checked (kernel launches check a table
  // used for many launches once).
  const void* checked_launch_config = nullptr;
  // Registry references of the strings "grid", "block", "shared" and "stream": a launch reads its
  // configuration table with them (lua_gettable), without interning the names again.
  int launch_config_keys[4] = {LUA_NOREF, LUA_NOREF, LUA_NOREF, LUA_NOREF};
  uint64_t launch_site_version = 0;  // the last LaunchSite version handed out
  RunOptions run_options;            // from the command line
  // The thread (main state or coroutine) of the latest call into the bindings: where the script
  // location of the operation being issued is read (the trace, strict-mode messages).
  lua_State* active = nullptr;
  std::unordered_set<std::string> warned_sites;   // host-clock tripwire: once per call site
  std::shared_ptr<measure::TraceRecorder> trace;  // cu.trace: the running or last trace
  std::shared_ptr<measure::Profiler> profiler;    // cu.profile or --profile, while recording
  DisplayHook display;  // a Jupyter kernel's output (set_display_hook), or null
  std::shared_ptr<fuse::KernelCache> fused_kernels;  // cu.fuse's generated kernels (made on use)
  // The state is being closed (mark_closing): finalizers run, and Lua 5.4 registers no finalizer
  // for an object made from then on, so a new array would never be freed: making one raises.
  bool closing = false;
};

// Type names; their addresses also key the metatables in the registry (a light userdata key is
// found without hashing a string, which matters when creating an array per operation).
inline constexpr char kArrayType[] = "cu.Array";
inline constexpr char kStreamType[] = "cu.Stream";
inline constexpr char kEventType[] = "cu.Event";
inline constexpr char kComplexType[] = "cu.Complex";
inline constexpr char kScopeType[] = "cu.StreamScope";
inline constexpr char kGraphType[] = "cu.Graph";
inline constexpr char kErrorType[] = "cu.Error";
// Registry key (its address) of the Context userdata.
inline constexpr char kContextKey[] = "cu.context";

// Creates the metatable of `type` (see luaL_newmetatable) and leaves it on the stack.
void new_metatable(lua_State* L, const char* type);
// Sets the metatable of `type` on the value on top of the stack.
inline void set_metatable(lua_State* L, const char* type) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, type);
  lua_setmetatable(L, -2);
}

// t[key] = v for the table on top of the stack (results made of plain fields).
// For an __index whose methods table is its first upvalue: when the key (index 2) is a string
// naming a method, pushes it and returns true; otherwise leaves the stack as it was.
inline bool push_upvalue_method(lua_State* L) {
  if (lua_type(L, 2) != LUA_TSTRING) return false;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return true;
  lua_pop(L, 1);
  return false;
}

inline void set_number(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}
inline void set_integer(lua_State* L, const char* key, int64_t v) {
  lua_pushinteger(L, static_cast<lua_Integer>(v));
  lua_setfield(L, -2, key);
}
inline void set_string(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}
inline void set_boolean(lua_State* L, const char* key, bool v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, key);
}

// The context of L's state, or null before open_cu ran in it and after the state closed it (a
// registry lookup).
Context* find_context(lua_State* L);
// The context's finalizer: removes it from the registry, so that later finalizers (objects marked
// before the module was loaded, under stock Lua) find none, and a call into cu raises instead of
// using the released runtime.
void drop_context(lua_State* L);
// Called by the front ends (the CLI, the embedding Runtime, os.exit(code, true)) just before
// lua_close: from then on no new array may be made (Context::closing).
void mark_closing(lua_State* L) noexcept;
// Throws when the state is closing (mark_closing): `what` (e.g. "streams") names what a finalizer
// may not make then, since Lua would never finalize it.
void refuse_when_closing(lua_State* L, const char* what);
// find_context through the per-thread cache of cached_context (null when there is none), and
// refuse_when_closing with the context it found.
Context* live_context(lua_State* L);
Context* refuse_when_closing_context(lua_State* L, const char* what);
// The registry lookup, cached per OS thread for the last state used; throws when there is none.
Context& cached_context(lua_State* L);

// Where the context is found. CULUA_LUA_CXX (culua_lib): culua's own Lua, built as C++; culua
// creates the state and opens `cu` before any code runs, so every thread's extra space holds the
// context (lua_newthread copies the main thread's). Otherwise (cu.so, the module for stock Lua):
// the state belongs to the application that loaded the module. Its extra space is not ours to
// write, and a coroutine created before `require "cu"` copied whatever the main thread's held
// then (lua_newstate leaves it uninitialized), so the context is found in the registry, through
// a cache.
inline Context& context(lua_State* L) {
#if defined(CULUA_LUA_CXX)
  return **static_cast<Context**>(lua_getextraspace(L));
#else
  return cached_context(L);
#endif
}
inline Runtime& runtime(lua_State* L) {
  return *context(L).rt;
}

// --- Errors --------------------------------------------------------------------------------------
//
// Lua is built as C++ in culua (culua_lib: a Lua error is a C++ exception that unwinds
// destructors) and as C in the stock-Lua module cu.so (a Lua error longjmps over every C++ frame
// it crosses: what those frames own leaks, and RAII scopes such as strict mode or Monitor::Wait
// never end). So a binding never raises a Lua error itself: it throws a C++ exception, and entry<F>
// raises the Lua error after its catch block, where no C++ object is alive. Argument checks use
// the arg_* helpers below (Lua's own messages, raised through luaL_argerror), a message that
// luaL_error would raise is a PlainError, calls into Lua go through call_lua, and an error value
// to re-raise goes through raise_value.
//
// Lua API calls that can still raise inside a binding, accepted: those that fail only on memory
// errors (pushing values, creating tables and userdata, luaL_ref) and those that run metamethods
// of values a script passed (lua_getfield, luaL_len or luaL_tolstring on a table with __index,
// __len or __tostring). Under C Lua such an error skips the destructors of the interrupted call.

// An argument error: entry<F> raises "bad argument #arg to 'f' (what)", as luaL_argerror words
// it, as a cu.Error of `kind` with err.arg and err.func.
class ArgumentError : public std::runtime_error {
 public:
  ArgumentError(int arg, const std::string& message, ErrorKind kind = ErrorKind::Value)
      : std::runtime_error(message), arg_(arg), kind_(kind) {}
  int arg() const { return arg_; }
  ErrorKind kind() const { return kind_; }

 private:
  int arg_;
  ErrorKind kind_;
};

// A message raised as luaL_error raises it: prefixed with the caller's position only (other
// exceptions also get the name of the function).
class PlainError : public std::runtime_error {
 public:
  explicit PlainError(const std::string& message, ErrorKind kind = ErrorKind::Value)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// An error value raised by Lua code that a binding called, kept in the registry (reference ref())
// until entry<F> raises it again unchanged.
class LuaErrorValue : public std::exception {
 public:
  explicit LuaErrorValue(int ref) : ref_(ref) {}
  int ref() const { return ref_; }
  const char* what() const noexcept override { return "a Lua error"; }

 private:
  int ref_;
};

// The Lua error entry<F> raises for an exception F threw.
struct PendingError {
  enum class Kind { Message, Argument, Value };
  Kind kind = Kind::Message;
  ErrorKind error_kind = ErrorKind::Value;  // Message, Argument: err.kind
  int arg = 0;          // Argument: the argument's index; Value: the registry reference
  std::string message;  // Message (with the function's name), Argument
};
PendingError pending_error(lua_State* L, const std::exception& e);
// Raises `error` as a cu.Error (see push_error): its message is moved onto the Lua stack first, so
// no C++ memory is left to leak when a C build of Lua longjmps.
int raise_error(lua_State* L, PendingError& error);

// culua's error object. A script sees a table {kind=, message=, where=, func=, arg=} that behaves
// as the string "where: message" it replaces: tostring, print, `..`, `#`, string.format("%s") and
// the string methods (err:find(...), err:match(...)) use that text. kind is kind_name(ErrorKind)
// ("value", "out_of_memory", ...); where is the caller's position ("file.lua:12"), absent when
// unknown; func and arg are set for argument errors (func also for others when known). Pushes a
// cu.Error, or the plain text when the metatable is not registered (before open_cu).
// Expects the message (full, without the position) on top of the stack; replaces it.
void push_error(lua_State* L, ErrorKind kind, int arg, const char* func);
// The kind of the error value at idx ("value", ...), or null for a value that is not a cu.Error.
const char* error_kind(lua_State* L, int idx);
// Registers the cu.Error metatable and cu.error_kind in the module table at -1.
void register_error(lua_State* L);

// Converts the exception in flight into the message of a Lua error (and notes where a fatal
// device error first surfaced).
std::string error_message(lua_State* L, const std::exception& e);

// The trampoline: runs F (after noting L as the active thread when `active`); an exception
// becomes a Lua error raised after the catch block. In the C++ build of Lua, a Lua error raised
// inside F (a `lua_longjmp*` thrown by Lua: memory errors, metamethods, see above) is not caught
// here and unwinds through.
template <lua_CFunction F, bool active>
int trampoline(lua_State* L) {
  PendingError error;
  try {
    if constexpr (active) context(L).active = L;
    return F(L);
  } catch (const std::exception& e) {
    error = pending_error(L, e);
  }
  return raise_error(L, error);
}

// The one trampoline of every C function registered with Lua.
template <lua_CFunction F>
int entry(lua_State* L) {
  return trampoline<F, true>(L);
}

// The same without the context: luaopen_cu, which creates it, and the runtime's finalizer.
template <lua_CFunction F>
int guarded(lua_State* L) {
  return trampoline<F, false>(L);
}

// luaL_check*/luaL_opt* that throw ArgumentError: the same checks and messages.
[[noreturn]] void arg_error(int arg, const std::string& message, ErrorKind kind = ErrorKind::Value);
// An error in the field `key` of the options table that is argument `arg`: "bad argument #arg to
// 'f' (option 'key': message)". With arg 0 (options not passed as an argument) "option 'key':
// message" is raised as a plain error of the function.
[[noreturn]] void option_error(int arg, const char* key, ErrorKind kind,
                               const std::string& message);

// Runs the check `f` (a function of core or of this file that throws culua::detail::Error), making
// its error an argument error of argument `arg` (when arg > 0: an argument of the call, not a
// value pushed on the stack), or of the option `key` of the options table that is argument `arg`.
template <class F>
auto as_argument(int arg, F&& f) -> decltype(f()) {
  if (arg <= 0) return f();
  try {
    return f();
  } catch (const Error& e) {
    throw ArgumentError(arg, e.what(), e.kind());
  }
}
template <class F>
auto as_option(int arg, const char* key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    // "limit must be an integer" becomes "option 'limit': must be an integer"
    std::string_view message = e.what();
    const std::string_view name = key;
    if (message.size() > name.size() + 6 && message.substr(0, name.size()) == name &&
        message.substr(name.size(), 6) == " must ")
      message.remove_prefix(name.size() + 1);
    option_error(arg, key, e.kind(), std::string(message));
  }
}

[[noreturn]] void type_error(lua_State* L, int arg, const char* expected);  // luaL_typeerror
lua_Number arg_number(lua_State* L, int arg);
lua_Integer arg_integer(lua_State* L, int arg);
const char* arg_string(lua_State* L, int arg, size_t* len = nullptr);
lua_Number opt_arg_number(lua_State* L, int arg, lua_Number fallback);
lua_Integer opt_arg_integer(lua_State* L, int arg, lua_Integer fallback);
const char* opt_arg_string(lua_State* L, int arg, const char* fallback);
void arg_type(lua_State* L, int arg, int type);
void arg_any(lua_State* L, int arg);
void* arg_udata(lua_State* L, int arg, const char* type);
// luaL_checkstack: "stack overflow (what)".
void check_stack(lua_State* L, int n, const char* what = nullptr);

// Throws the value on top of the stack (popped, kept in the registry) as a LuaErrorValue: entry<F>
// raises it unchanged.
[[noreturn]] void raise_value(lua_State* L);

// lua_call for calls from a binding into Lua (callbacks, loaded chunks). In the C++ build it is
// lua_call (the error unwinds this frame; a traceback shows the callback's frames). In the C build
// it is lua_pcall, and an error is thrown as LuaErrorValue, which entry<F> raises again after C++
// cleanup (a traceback then starts at the binding).
void call_lua(lua_State* L, int nargs, int nresults);

// Is the value at idx (a userdata, or a table for the table-based types such as cu.BenchResult)
// of the culua type `type`, that is, is its metatable the one new_metatable registered for it? One
// registry lookup keyed by the name's address (no string hashing). Hot paths compare against a
// metatable cached in the context instead (has_metatable).
bool is_type(lua_State* L, int idx, const char* type);
// The check of a method's or metamethod's `self` (and of other arguments of a culua type): raises
// "bad argument #idx to 'f' (type expected, got ...)" for any other value, so that an explicit call
// such as getmetatable(a).__gc(5) is an error instead of a crash.
void check_type(lua_State* L, int idx, const char* type);
// check_type for a userdata type: its block.
template <class Box>
Box* check_box(lua_State* L, int idx, const char* type) {
  // A full userdata: debug.setmetatable can give any value (a light userdata) the metatable.
  if (lua_type(L, idx) != LUA_TUSERDATA) type_error(L, idx, type);
  check_type(L, idx, type);
  return static_cast<Box*>(lua_touserdata(L, idx));
}

// Is the value at idx a full userdata whose metatable is `mt`?
inline bool has_metatable(lua_State* L, int idx, const void* mt) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return false;
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
// An axis (1..ndim, or -ndim..-1 from the end) as the core's 0-based axis; raises Error(Index)
// naming the array's dimensions. `positions`: ndim counts the places an axis may take (an axis
// inserted by expand_dims, say), and the message names only that range.
int check_axis(lua_State* L, int idx, int ndim, bool positions = false);

// Scalars: numbers, booleans and cu.complex values.
bool is_scalar(lua_State* L, int idx);
Scalar check_scalar(lua_State* L, int idx);
void push_scalar(lua_State* L, const Scalar& v);

// The Lua collector stays off while a graph is captured or a fused function records (finalizers
// would free or query device objects in the middle of it). Restored at the end, also by an error.
class CollectorPaused {
 public:
  explicit CollectorPaused(lua_State* L) : L_(L), was_running_(lua_gc(L, LUA_GCISRUNNING) != 0) {
    lua_gc(L, LUA_GCSTOP);
  }
  ~CollectorPaused() {
    if (was_running_) lua_gc(L_, LUA_GCRESTART);
  }
  CollectorPaused(const CollectorPaused&) = delete;
  CollectorPaused& operator=(const CollectorPaused&) = delete;

 private:
  lua_State* L_;
  bool was_running_;
};

// Options tables. check_options raises on keys not in `allowed` (catches typos); with
// `positional`, the integer keys 1..#t are allowed too (arguments passed on, as cu.graph's).
void check_options(lua_State* L, int idx, std::initializer_list<const char*> allowed,
                   bool positional = false);
// The same for a table that is not an argument of its own (a field of one, a kernel's launch
// configuration): a plain error, which the caller may attribute.
void check_fields(lua_State* L, int idx, std::initializer_list<const char*> allowed);
// "file.lua:12": where the Lua function at idx was defined (its chunk's name when unknown).
std::string defined_at(lua_State* L, int fn);
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

// Several devices (devices.cpp). check_one_device: the device of the first device array among
// the arguments `args` (-1 when none); raises an argument error for a later one on another
// device, and an option error (options table at `opts`) for out= or stream= of another device.
int check_one_device(lua_State* L, std::initializer_list<int> args, int opts = 0,
                     const Array* out = nullptr, const Stream* stream = nullptr);
// The same for arguments already checked: argument `index` is `array` (null: not an array).
struct ArrayArgument {
  int index;
  const Array* array;
};
int check_one_device(std::initializer_list<ArrayArgument> args, int opts = 0,
                     const Array* out = nullptr, const Stream* stream = nullptr);
// A device index argument (0-based): raises "device 5 does not exist (devices are numbered 0..1)".
int check_device_index(lua_State* L, int arg);

// Streams and events (stream.cpp, event.cpp).
void push_stream(lua_State* L, std::shared_ptr<Stream> s);
Stream& check_stream(lua_State* L, int idx);
Stream* test_stream(lua_State* L, int idx);
Event* test_event(lua_State* L, int idx);

// Graphs (graph.cpp): the graph at idx, or null when the value is not a cu.Graph (raises for a
// freed one).
Graph* test_graph(lua_State* L, int idx);
// cu.ledger's tables (measure.cpp).
void push_ledger(lua_State* L, const Ledger& l);

// Registration of each type: metatables and the functions they add to the module table at -1.
void register_array(lua_State* L);
// After every type's registration: the metatable of released arrays (free() sets it).
void register_released_array(lua_State* L);
void register_stream(lua_State* L);
void register_event(lua_State* L);
void register_graph(lua_State* L);
void register_fuse(lua_State* L);
void register_complex(lua_State* L);
// Math: elementwise (math.cpp), reductions (reduce.cpp), random numbers (random.cpp), matrix
// products (linalg.cpp). Each adds functions to the module table at -1 and may add array methods.
void register_math(lua_State* L);
void register_reduce(lua_State* L);
void register_sort(lua_State* L);  // sort.cpp: sorting, searching and sets
void register_random(lua_State* L);
void register_linalg(lua_State* L);
void register_fft(lua_State* L);     // cu.fft (fft.cpp)
void register_dtypes(lua_State* L);  // can_cast, result_type, finfo, iinfo, isdtype (dtypes.cpp)
void register_manip(lua_State* L);   // manip.cpp: the Array API's manipulation and indexing
// Run-time kernels: cu.compile and modules (kernel_module.cpp), kernels and launches (kernel.cpp),
// cu.elementwise and cu.reduction (kernel_template.cpp).
void register_kernel(lua_State* L);
void register_kernel_templates(lua_State* L);
// Measurement: cu.time, cu.clock, cu.ledger, cu.strict, cu.trace, cu.range (measure.cpp); cu.bench
// (bench.cpp); cu.sweep (sweep*.cpp) and cu.plot (sweep_results.cpp).
void register_measure(lua_State* L);
// cu.profile (profile.cpp); --profile's run: begin (false: it could not start, the reason
// printed) and end (prints the tables, writes the file; false when that failed).
void register_profile(lua_State* L);
// cu.display (display.cpp); in a kernel, a plot asked for without a file is drawn and shown:
// true when `plot_to` was used so (then nothing was written where the script said).
void register_display(lua_State* L);
bool show_plot_inline(lua_State* L, const std::function<void(const std::string& file)>& plot_to);
bool begin_profile_run(lua_State* L);
bool end_profile_run(lua_State* L);
void register_bench(lua_State* L);
void register_sweep(lua_State* L);
// cu.tune (tune.cpp): calls the embedded Lua module cu.tune.
void register_tune(lua_State* L);
// cu.json: encode, decode and null (json.cpp).
void register_json(lua_State* L);
// cu.nccl (nccl.cpp); push_nccl_comm pushes a cu.NcclComm owning `comm` (cu.nccl.comm_world).
void register_nccl(lua_State* L);
void push_nccl_comm(lua_State* L, std::shared_ptr<dist::Communicator> comm);
// cu.mpi (mpi.cpp; functions that raise on a build without MPI).
void register_mpi(lua_State* L);
// Adds methods (a:sum(), a:exp()) to cu.Array; call after register_array.
void add_array_methods(lua_State* L, const luaL_Reg* methods);

}  // namespace culua::detail::lua
