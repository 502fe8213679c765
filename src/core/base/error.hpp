// culua's exception type. The Lua bindings turn it into a Lua error; embedding code catches it.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace culua::detail {

enum class ErrorKind {
  Value,        // a bad value: size, dtype, shape, option
  Type,         // an argument of the wrong type
  Index,        // an index or range outside an array
  OutOfMemory,  // an allocation failed after every retry
  Released,     // use of a freed array, a released stream or event
  Unsupported,  // valid input this backend or build cannot do
  Device,       // a recoverable CUDA error; the runtime stays usable
  Fatal,        // a sticky CUDA error: the runtime is poisoned
  Strict,       // an implicit synchronization inside cu.strict
  Interrupted,  // Ctrl-C or Runtime::interrupt() during a wait for the device
  Capture,      // an operation that cannot be captured into a graph, or a failed capture
  Limit,        // a sandbox limit: wall time, instructions, a file the sandbox does not allow
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message)
      : std::runtime_error(std::move(message)), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

template <class... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> f, Args&&... args) {
  throw Error(kind, fmt::format(f, std::forward<Args>(args)...));
}

// The one message for every object used after its release (an array after free(), a stream, event,
// graph, module, kernel, kernel template, profile or communicator after release() or collection),
// as liolib's "attempt to use a closed file": "attempt to use a released <what>", kind Released.
// `what` names the object and, where it helps, its place: "stream", "array (argument 'a')".
[[noreturn]] void fail_released(std::string_view what);

// fail_released(what) unless `handle` (a pointer, a handle or anything testable) is set.
template <class Handle>
void check_alive(const Handle& handle, std::string_view what) {
  if (!handle) fail_released(what);
}

// "1.5 GiB" style, for messages.
std::string format_bytes(double bytes);

}  // namespace culua::detail
