// cuFFT for the CUDA backend: plans cached per (device, type, length, batch, strides) in a bounded
// cache (least recently used goes first), bound to the caller's stream for each call, their work
// areas taken from the device's stream-ordered pool (cufftSetAutoAllocation(0) and
// cufftSetWorkArea: allocated and freed on the stream around the call, so graph capture records
// them as memory nodes). A plan used under graph capture stays cached for the life of the backend:
// the graph's kernels read its twiddle factors.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "core/model/stream.hpp"

namespace culua::detail {
struct FftCall;
}  // namespace culua::detail

namespace culua::detail::cuda {

struct Health;

struct FftPlanStats {
  size_t plans = 0;   // cached now
  uint64_t hits = 0;  // calls that found their plan
  uint64_t misses = 0;
  uint64_t evictions = 0;
};

class Cufft {
 public:
  // The plans kept (more while a graph is captured: none is destroyed during a capture).
  static constexpr size_t kMaxPlans = 32;

  explicit Cufft(std::shared_ptr<Health> health);
  ~Cufft();  // destroys the plans, each on its device (never throws)
  Cufft(const Cufft&) = delete;
  Cufft& operator=(const Cufft&) = delete;

  // Queued on `s`; the caller has made the stream's device current. `pool`: the device's memory
  // pool, for the work area.
  void execute(const FftCall& c, Stream& s, cudaMemPool_t pool);
  FftPlanStats stats();

 private:
  struct Key {
    int device = 0;
    int type = 0;  // cufftType
    int64_t n = 0, batch = 0;
    int64_t istride = 1, idist = 0, ostride = 1, odist = 0;
    bool operator==(const Key&) const = default;
  };
  struct Plan {
    Key key;
    int handle = 0;  // cufftHandle
    size_t work = 0;
    bool pinned = false;  // used under capture: never evicted
  };
  Plan& plan(const Key& key, bool capturing);
  void destroy(Plan& p) noexcept;

  std::shared_ptr<Health> health_;
  std::mutex mutex_;
  std::list<Plan> plans_;  // most recently used first
  FftPlanStats stats_;
};

}  // namespace culua::detail::cuda
