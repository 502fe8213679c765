// Checking CUDA runtime calls. A failed call throws culua::detail::Error naming the call, the error
// and where; a sticky error (one that corrupts the context) also poisons the backend so that every
// later call fails fast with the original message.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace culua::detail::cuda {

struct Health {
  std::atomic<bool> poisoned{false};
  mutable std::mutex m;
  std::string message;
  // The last operation queued, to name the likely culprit of an asynchronous fault, and for
  // run-time kernels the script line that launched it. Written and read on the runtime's thread.
  std::atomic<const char*> last_op{"(none)"};
  char last_site[160] = {};
  uint64_t last_site_version = 0;

  void note_op(const char* op) {
    last_op.store(op, std::memory_order_relaxed);
    if (last_site_version != 0) {
      last_site[0] = '\0';
      last_site_version = 0;
    }
  }
  // A run-time kernel launch: `site` says what was launched where ("kernel 'saxpy' launched at
  // x.lua:12"); the text is copied (truncated to fit) only when its version changed.
  void note_launch(const char* op, const char* site, uint64_t version) {
    last_op.store(op, std::memory_order_relaxed);
    if (version != last_site_version) copy_site(site, version);
  }

  void check_usable() const;  // throws Error(Fatal) once poisoned
  std::string poison_message() const;
  // Throws for `e != cudaSuccess`; clears the error state first.
  void check(cudaError_t e, const char* call, const char* file, int line);
  // The same for a driver API result (`code` is a CUresult; its sticky codes equal the runtime's).
  void check_driver(int code, const char* call, const char* file, int line);

 private:
  void copy_site(const char* site, uint64_t version);
  [[noreturn]] void raise(int code, const char* name, const char* description, const char* call,
                          const char* file, int line);
};

bool is_sticky(cudaError_t e);

// While a graph is captured on this thread (core/runtime/capture.hpp), CUDA's thread-local capture
// mode refuses calls that could synchronize (allocations, stream and event creation, module loads)
// even on streams outside the capture. Allocations for the graph's arrays, and the objects a
// script creates inside the graph's function, are made in relaxed mode within this scope.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
  bool active_ = false;
};

}  // namespace culua::detail::cuda

#define CULUA_CUDA_CHECK(health, call) (health).check((call), #call, __FILE__, __LINE__)
#define CULUA_CU_CHECK(health, call) \
  (health).check_driver(static_cast<int>(call), #call, __FILE__, __LINE__)
