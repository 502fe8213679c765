// Shared helpers of the unit tests (not a test source itself: only tests/unit/*.cpp are built).
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/backends.hpp"
#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/observed_backend.hpp"
#include "core/runtime/runtime.hpp"
#include "host/host_backend.hpp"

namespace culua::detail::test {

inline RuntimeOptions host_options(uint64_t limit = 0) {
  RuntimeOptions o;
  o.backend = BackendKind::Host;
  o.device = 0;
  o.host_memory_limit = limit;
  return backends::engines(o);
}

inline host::HostBackend& host_backend(Runtime& rt) {
  return dynamic_cast<host::HostBackend&>(unwrap_backend(rt.backend()));
}

// What error_kind_of returns when no culua::detail::Error was thrown.
inline constexpr ErrorKind kNoError = static_cast<ErrorKind>(-1);

// Runs f and returns the kind of the culua::detail::Error it throws, kNoError when it throws none.
template <class F>
ErrorKind error_kind_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return kNoError;
}

// The message of the culua::detail::Error f throws, or "" when none.
template <class F>
std::string error_message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Elements of a contiguous array read straight from its memory: on the host backend device
// memory is host memory. Waits for all device work first.
template <class T>
std::vector<T> raw_elements(Runtime& rt, const Array& a) {
  rt.backend().synchronize_device(0);
  std::vector<T> out(static_cast<size_t>(a.size()));
  REQUIRE(a.is_contiguous());
  REQUIRE(sizeof(T) == itemsize(a.dtype()));
  if (!out.empty()) std::memcpy(out.data(), a.data(), out.size() * sizeof(T));
  return out;
}

template <class T>
void write_raw(Runtime& rt, const Array& a, const std::vector<T>& v) {
  rt.backend().synchronize_device(0);
  REQUIRE(a.is_contiguous());
  REQUIRE(static_cast<int64_t>(v.size()) == a.size());
  REQUIRE(sizeof(T) == itemsize(a.dtype()));
  if (!v.empty()) std::memcpy(a.data(), v.data(), v.size() * sizeof(T));
}

}  // namespace culua::detail::test

namespace Catch {
template <>
struct StringMaker<culua::detail::ErrorKind> {
  static std::string convert(culua::detail::ErrorKind k) {
    switch (k) {
      case culua::detail::ErrorKind::Value:
        return "Value";
      case culua::detail::ErrorKind::Type:
        return "Type";
      case culua::detail::ErrorKind::Index:
        return "Index";
      case culua::detail::ErrorKind::OutOfMemory:
        return "OutOfMemory";
      case culua::detail::ErrorKind::Released:
        return "Released";
      case culua::detail::ErrorKind::Unsupported:
        return "Unsupported";
      case culua::detail::ErrorKind::Device:
        return "Device";
      case culua::detail::ErrorKind::Fatal:
        return "Fatal";
      case culua::detail::ErrorKind::Strict:
        return "Strict";
      case culua::detail::ErrorKind::Interrupted:
        return "Interrupted";
      case culua::detail::ErrorKind::Capture:
        return "Capture";
      case culua::detail::ErrorKind::Limit:
        return "Limit";
    }
    return "<no error thrown>";
  }
};
}  // namespace Catch
