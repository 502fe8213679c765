// cuFFT for the CUDA backend: plans cached per (device, type, length, batch, strides) in a bounded
// cache (least recently used goes first). Work areas are the caller's (cufftSetAutoAllocation(0)):
// outside a capture each stream has one, taken from the device's stream-ordered pool the first
// time a transform on that stream needs one (or more than it holds), shared by the plans used on
// that stream (its transforms run one after another) and kept; so two streams never share one.
// A plan is bound to a stream and a work area only when they change (cufftSetStream,
// cufftSetWorkArea), which a transform repeated on one stream never does. The cache keeps each
// such stream until nobody else does: its work area is then freed on it, in stream order (at the
// next transform, or when the cache goes). Under capture the work area is the capture's scratch
// memory, which the graph keeps as long as it can be launched. A plan used under capture stays
// cached for the life of the backend: the graph's kernels read its twiddle factors.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

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
  size_t work_areas = 0;            // the streams' work areas held now
  size_t work_bytes = 0;            // their bytes
  uint64_t work_allocations = 0;    // work areas allocated outside captures, growths included
  uint64_t work_frees = 0;          // of those, freed (grown, or their stream released)
  uint64_t work_area_bindings = 0;  // cufftSetWorkArea calls
  uint64_t stream_bindings = 0;     // cufftSetStream calls
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
  // A stream's work area. The stream is kept alive by the cache until the area is freed on it.
  struct WorkArea {
    std::shared_ptr<Stream> stream;
    void* ptr = nullptr;
    size_t bytes = 0;
  };
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
    // What the handle is bound to now (set only when a call needs another).
    bool stream_bound = false;
    void* bound_stream = nullptr;  // cudaStream_t
    bool work_bound = false;
    void* bound_work = nullptr;
  };
  Plan& plan(const Key& key, bool capturing);
  void destroy(Plan& p) noexcept;
  // The work area of `s` with at least `bytes`, allocated or grown on `s` outside a capture; null
  // when `s` is not held by a shared_ptr (the caller then allocates one for the call).
  void* work_area(Stream& s, size_t bytes, cudaMemPool_t pool);
  // Frees, on their streams, the work areas of the streams that only the cache still holds
  // (`current` excepted), and lets those streams go.
  void release_dropped_streams(const Stream* current) noexcept;
  void free_area(WorkArea& a) noexcept;

  std::shared_ptr<Health> health_;
  std::mutex mutex_;
  std::list<Plan> plans_;  // most recently used first
  std::vector<WorkArea> areas_;
  FftPlanStats stats_;
};

}  // namespace culua::detail::cuda
