// culua's embedding API: run Lua scripts that use the `cu` module from a C++ application, share
// the application's device memory and CUDA stream with them, and call between C++ and Lua.
//
//   #include <culua/culua.hpp>
//   culua::Runtime rt;                                   // or culua::Runtime({.backend =
//   culua::Backend::Host}) rt.set("x", culua::Array::wrap(dev_ptr, {n}, culua::DType::F32));   //
//   no copy rt.use_stream(my_cuda_stream);                        // scripts queue work on this
//   stream rt.run_file("experiment.lua"); double v = rt.call<double>("score", 3);
//
// Depends on the C++ standard library only: no Lua or CUDA headers. Lua errors surface as
// culua::Error with the Lua traceback. Several Runtimes in one process are independent (each has
// its own Lua state, arrays, streams and memory pools). A Runtime is used from one thread at a
// time; interrupt() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#define CULUA_API __attribute__((visibility("default")))

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace culua {

enum class Backend { Auto, Host, Cuda };
// New dtypes are added at the end so that the existing values keep their numbers.
enum class DType { F32, F64, F16, BF16, I8, I16, I32, I64, U8, U32, Bool, C64, C128, U16, U64 };

CULUA_API std::string_view dtype_name(DType t);  // "f32", ...
CULUA_API size_t itemsize(DType t);              // bytes per element
CULUA_API std::string_view version();            // "0.1.0"

// The sandbox for scripts the application does not trust (docs/sandbox.md). When enabled, the
// scripts see an allow-list environment (no io, os only time/clock/date, no debug, no
// dofile/loadfile, load of text only, no string.dump, require of culua's preloaded modules only,
// no __gc metamethods of scripts, getmetatable false for shared metatables, collectgarbage
// without stop/restart/setpause/setstepmul) and every entry from C++ (run_file, run_string,
// eval, call, get, set, ...) gets a fresh budget of the limits below. Each limit raises a Lua
// error a script can catch once, then culua::Error with kind() "limit" (time, instructions, a
// file write) or "out_of_memory" (heap, array memory); the Runtime stays usable for the next
// call. 0 turns a limit off.
struct SandboxOptions {
  bool enabled = false;
  double time_limit = 10;                     // seconds of wall time per entry
  uint64_t instruction_limit = 0;             // Lua VM instructions per entry
  uint64_t heap_limit = uint64_t{256} << 20;  // bytes of the Lua heap (the whole state)
  uint64_t memory_limit = uint64_t{1} << 30;  // bytes of culua's arrays (device and host)
  std::vector<std::string> output_files;      // the only files culua may write for scripts
  uint64_t stream_limit = 64;  // streams a script holds at once (cu.stream; host backend: threads)
  // The watchdog. A few single calls of C functions run on with no hook to end them: Lua's
  // pattern matching over a long string, a chain of __call metamethods (Lua 5.4.4 loops in C);
  // docs/sandbox.md lists them. When set, a thread of culua's calls `on_stuck` (on that thread,
  // at most once per entry) when an entry still runs `watchdog_grace` seconds after its time
  // limit. culua cannot end that call safely from outside; the application decides: end the
  // process (the CLI prints a message and exits with status 1), or log it and let it run. It must
  // not throw (an exception on that thread ends the process). Unset: no watchdog. Needs a time
  // limit.
  std::function<void()> on_stuck;
  double watchdog_grace = 2;
};

struct Options {
  Backend backend = Backend::Auto;  // Auto: CUDA when a GPU is present, else the host backend
  // The CUDA device to start on. culua never changes the calling thread's current device (its
  // current CUDA context): each call makes the device it works on current and gives the thread's
  // own back, none included, before it returns.
  int device = 0;
  bool open_libs = true;   // the Lua standard libraries (io, os, string, ...)
  SandboxOptions sandbox;  // off by default
};

// A Lua error (or a failed call from C++ into Lua). what() is the message followed by the
// traceback; message() and traceback() give them apart. kind() is the kind of a culua error, as a
// script sees it in err.kind ("value", "type", "index", "out_of_memory", "released",
// "unsupported", "device", "fatal", "strict", "interrupted", "capture", "limit"); empty for other
// errors (an error() of a script with a plain message, a syntax error, a bad argument of the API).
class CULUA_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, const std::string& traceback = {},
                 const std::string& kind = {});
  const std::string& message() const noexcept { return message_; }
  const std::string& traceback() const noexcept { return traceback_; }
  const std::string& kind() const noexcept { return kind_; }

 private:
  std::string message_;
  std::string traceback_;
  std::string kind_;
};

// A culua array seen from C++: either memory of the application wrapped without a copy, or an
// array a script made (kept alive while this handle exists, also after its Runtime is gone).
class CULUA_API Array {
 public:
  Array() = default;

  // Wraps `data`, a contiguous row-major array of `shape` elements of `dtype`, without copying
  // it. culua never frees it: the application keeps it alive while scripts may use it. On the
  // CUDA backend `data` is device memory (cudaMalloc, cudaMallocAsync, managed) or host memory
  // (then a host array); on the host backend it is host memory. Throws Error for a null pointer
  // or an empty shape.
  static Array wrap(void* data, std::vector<int64_t> shape, DType dtype);

  explicit operator bool() const noexcept { return static_cast<bool>(impl_); }
  void* data() const;
  const std::vector<int64_t>& shape() const;
  DType dtype() const;
  int64_t size() const;  // elements
  size_t nbytes() const;
  bool is_wrapped() const;  // memory of the application (Array::wrap)
  bool on_device() const;   // device memory (the host backend's "device" is host memory)
  int device() const;

  // Copies between the array and host memory, after work already queued on the array (waits).
  // `bytes` must equal nbytes(). A wrapped array must have been set into a Runtime first.
  void copy_to_host(void* dst, size_t bytes) const;
  void copy_from_host(const void* src, size_t bytes);
  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> v(nbytes() / sizeof(T));
    copy_to_host(v.data(), v.size() * sizeof(T));
    return v;
  }

  struct Impl;
  explicit Array(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  const std::shared_ptr<Impl>& impl() const noexcept { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

// A Lua value crossing between Lua and C++.
class CULUA_API Value {
 public:
  enum class Type { Nil, Boolean, Integer, Number, String, Array, Other };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Value(I i) : v_(static_cast<int64_t>(i)) {}
  Value(double d) : v_(d) {}
  Value(float f) : v_(static_cast<double>(f)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(culua::Array a) : v_(std::move(a)) {}
  // A value C++ cannot hold (a table, a function, ...): only its Lua type name is kept.
  static Value other(std::string lua_type_name);

  Type type() const;
  bool is_nil() const { return type() == Type::Nil; }
  // Lua's name of the type: "nil", "boolean", "number", "string", "cu.Array", "table", ...
  std::string type_name() const;

  // Conversions; each throws Error naming the expected and the actual type.
  bool as_bool() const;
  int64_t as_integer() const;  // an integer, or a float with an integral value
  double as_number() const;    // an integer or a float
  const std::string& as_string() const;
  const culua::Array& as_array() const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, culua::Array> v_;
  std::string other_;
};

// Conversion of a Value into T: bool, integral types, floating types, std::string, Array, Value.
template <class T>
T from_value(const Value& v) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<U, Value>) {
    return v;
  } else if constexpr (std::is_same_v<U, bool>) {
    return v.as_bool();
  } else if constexpr (std::is_integral_v<U>) {
    return static_cast<U>(v.as_integer());
  } else if constexpr (std::is_floating_point_v<U>) {
    return static_cast<U>(v.as_number());
  } else if constexpr (std::is_same_v<U, std::string>) {
    return v.as_string();
  } else if constexpr (std::is_same_v<U, Array>) {
    return v.as_array();
  } else {
    static_assert(sizeof(U) == 0, "culua: no conversion from a Lua value to this type");
  }
}

namespace embed_detail {
template <class T>
struct callable_traits : callable_traits<decltype(&T::operator())> {};
template <class R, class... A>
struct callable_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<std::remove_cv_t<std::remove_reference_t<A>>...>;
};
template <class R, class... A>
struct callable_traits<R(A...)> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) noexcept> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const noexcept> : callable_traits<R (*)(A...)> {};
template <class R, class... A>
struct callable_traits<R (*)(A...) noexcept> : callable_traits<R (*)(A...)> {};

template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

// Throws Error("bad argument #i to 'name' (...)").
[[noreturn]] CULUA_API void bad_argument(std::string_view function, size_t index,
                                         const std::string& why);

template <class T>
T argument(std::string_view function, const std::vector<Value>& args, size_t i) {
  static const Value nil;
  const Value& v = i < args.size() ? args[i] : nil;
  try {
    return from_value<T>(v);
  } catch (const Error& e) {
    bad_argument(function, i + 1, e.message());
  }
}

template <class R>
std::vector<Value> results(R&& r) {
  using U = std::remove_cv_t<std::remove_reference_t<R>>;
  if constexpr (std::is_same_v<U, std::vector<Value>>) {
    return std::forward<R>(r);
  } else if constexpr (is_tuple<U>::value) {
    return std::apply([](auto&&... x) { return std::vector<Value>{Value(x)...}; },
                      std::forward<R>(r));
  } else {
    return {Value(std::forward<R>(r))};
  }
}
}  // namespace embed_detail

// A C++ function as Lua sees it: the arguments in, the results out.
using Function = std::function<std::vector<Value>(const std::vector<Value>&)>;

class CULUA_API Runtime {
 public:
  Runtime();
  explicit Runtime(const Options& options);
  ~Runtime();
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs a script file with `args` (the global `arg` and `...`, as the culua program does).
  void run_file(const std::string& path, const std::vector<std::string>& args = {});
  // Runs a chunk of Lua; `chunkname` appears in error messages.
  void run_string(std::string_view code, std::string_view chunkname = "=(run_string)");
  // Evaluates one expression ("a:sum()", "cu.version") and returns its first value.
  template <class T = Value>
  T eval(std::string_view expression) {
    return from_value<T>(eval_value(expression));
  }

  // Globals, or fields reached through tables with dotted names ("config.alpha"). set() creates
  // no tables: every table on a dotted path must exist. get() of a missing name gives nil (and
  // throws for T other than Value).
  void set(std::string_view name, const Value& value);
  template <class T = Value>
  T get(std::string_view name) const {
    const Value v = get_value(name);
    try {
      return from_value<T>(v);
    } catch (const Error& e) {
      throw Error("get(\"" + std::string(name) + "\"): " + e.message());
    }
  }
  bool has(std::string_view name) const { return !get_value(name).is_nil(); }

  // Calls the Lua function `name` (a global or a dotted path). T is void, a type from_value
  // converts to (the first result), std::vector<Value> (all results) or std::tuple<...>.
  template <class T = void, class... A>
  T call(std::string_view name, A&&... args) {
    std::vector<Value> in{Value(std::forward<A>(args))...};
    std::vector<Value> out = call_values(name, in);
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_void_v<U>) {
      return;
    } else if constexpr (std::is_same_v<U, std::vector<Value>>) {
      return out;
    } else if constexpr (embed_detail::is_tuple<U>::value) {
      return tuple_result<U>(name, out, std::make_index_sequence<std::tuple_size_v<U>>{});
    } else {
      return result<U>(name, out, 0);
    }
  }
  std::vector<Value> call_values(std::string_view name, const std::vector<Value>& args);

  // Registers a C++ function as the global (or dotted field) `name`. `f` takes and returns
  // values from_value/Value convert (a std::tuple or std::vector<Value> returns several; a
  // single parameter `const std::vector<Value>&` takes all arguments as they come). A
  // C++ exception thrown by `f` becomes a Lua error; an argument of the wrong type is reported
  // as Lua reports one ("bad argument #2 to 'scale' (number expected, got string)").
  template <class F>
  void set_function(std::string_view name, F f) {
    using traits = embed_detail::callable_traits<std::decay_t<F>>;
    using R = typename traits::result;
    using Args = typename traits::args;
    const std::string fname(name);
    if constexpr (std::is_same_v<Args, std::tuple<std::vector<Value>>>) {
      // Takes all arguments as they come.
      set_function_values(name, [f = std::move(f)](const std::vector<Value>& in) mutable {
        if constexpr (std::is_void_v<R>) {
          f(in);
          return std::vector<Value>{};
        } else {
          return embed_detail::results(f(in));
        }
      });
    } else {
      set_function_values(name, [f = std::move(f), fname](const std::vector<Value>& in) mutable {
        return invoke<R, Args>(f, fname, in, std::make_index_sequence<std::tuple_size_v<Args>>{});
      });
    }
  }
  void set_function_values(std::string_view name, Function f);

  // Scripts queue their work on `stream` (a cudaStream_t of this runtime's device) instead of
  // culua's own: cu.stream() returns it and operations without stream= use it. culua never
  // destroys it. nullptr goes back to culua's stream. CUDA backend only.
  void use_stream(CUstream_st* stream);
  // Waits for all work of this runtime's device.
  void synchronize();
  // Interrupts running Lua code, or a wait for the device, with the error "interrupted": safe
  // from any thread and from a signal handler. Queued device work is not cancelled.
  void interrupt() noexcept;
  // A full garbage collection (arrays no longer referenced give their memory back).
  void collect_garbage();

  std::string backend() const;  // "cuda" or "host" (creates the backend on first use)
  int device() const;

  struct Impl;

 private:
  Value eval_value(std::string_view expression);
  Value get_value(std::string_view name) const;

  template <class U>
  static U result(std::string_view name, const std::vector<Value>& out, size_t i) {
    static const Value nil;
    const Value& v = i < out.size() ? out[i] : nil;
    try {
      return from_value<U>(v);
    } catch (const Error& e) {
      throw Error("call(\"" + std::string(name) + "\"): result " + std::to_string(i + 1) + ": " +
                  e.message());
    }
  }
  template <class Tuple, size_t... I>
  static Tuple tuple_result(std::string_view name, const std::vector<Value>& out,
                            std::index_sequence<I...>) {
    return Tuple{result<std::tuple_element_t<I, Tuple>>(name, out, I)...};
  }
  template <class R, class Args, class F, size_t... I>
  static std::vector<Value> invoke(F& f, const std::string& name, const std::vector<Value>& in,
                                   std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      f(embed_detail::argument<std::tuple_element_t<I, Args>>(name, in, I)...);
      return {};
    } else {
      return embed_detail::results(
          f(embed_detail::argument<std::tuple_element_t<I, Args>>(name, in, I)...));
    }
  }

  std::unique_ptr<Impl> impl_;
};

}  // namespace culua
