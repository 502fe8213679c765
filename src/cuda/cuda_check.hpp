// Checking CUDA runtime calls. A failed call throws culua::Error naming the call, the error and
// where; a sticky error (one that corrupts the context) also poisons the backend so that every
// later call fails fast with the original message.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

namespace culua::cuda {

struct Health {
  std::atomic<bool> poisoned{false};
  mutable std::mutex m;
  std::string message;
  // The last operation queued, to name the likely culprit of an asynchronous fault.
  std::atomic<const char*> last_op{"(none)"};

  void check_usable() const;  // throws Error(Fatal) once poisoned
  std::string poison_message() const;
  // Throws for `e != cudaSuccess`; clears the error state first.
  void check(cudaError_t e, const char* call, const char* file, int line);
};

bool is_sticky(cudaError_t e);

}  // namespace culua::cuda

#define CULUA_CUDA_CHECK(health, call) (health).check((call), #call, __FILE__, __LINE__)
