// CUDA streams and events behind the core interface.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "core/model/stream.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/scoped.hpp"

namespace culua::detail::cuda {

// The streams a backend made, so that a device synchronization can poll them (an interruptible
// cu.sync) before its final blocking cudaDeviceSynchronize. A stream dropped while work is still
// queued on it stays here (its queued work still completes) and is destroyed once seen idle.
class StreamRegistry {
 public:
  StreamRegistry() = default;
  ~StreamRegistry();
  StreamRegistry(const StreamRegistry&) = delete;
  StreamRegistry& operator=(const StreamRegistry&) = delete;

  void add(cudaStream_t s, int device);
  // The stream's handle is gone. An owned stream is destroyed now when idle, else after it is
  // seen idle; one not owned is forgotten.
  void retire(cudaStream_t s, int device, bool owned) noexcept;
  // True when no registered stream of `device` has queued work; destroys retired idle streams.
  // A sticky error seen by a query throws (and poisons `health`).
  bool device_idle(int device, Health& health);
  // How many registered streams (retired ones too) still have work queued or running.
  int busy_streams() noexcept;

 private:
  struct Entry {
    cudaStream_t stream;
    int device;
    bool retired;
  };
  std::mutex m_;
  std::vector<Entry> entries_;
};

// Stream and event operations make the object's device current for the call (cuda/scoped.hpp).
class CudaStream final : public Stream {
 public:
  // Takes ownership of `s` when `owned` (destroyed without blocking when the handle goes). With a
  // `registry`, the stream is registered there and handed back to it when the handle goes.
  CudaStream(cudaStream_t s, bool owned, int device, StreamPriority p, uint64_t id,
             std::shared_ptr<Health> health, std::shared_ptr<StreamRegistry> registry = nullptr);
  ~CudaStream() override;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  void* native_handle() const override { return stream_; }
  // The stream's reduction scratch (kernels/kernels.hpp kStreamScratchBytes, its counters zeroed
  // in stream order), allocated from `pool` on first use and freed in stream order with the
  // stream; null when it cannot be allocated (callers then allocate per launch).
  void* scratch(cudaMemPool_t pool);

  // Small device blocks (0-d results, tiny temporaries) freed on this stream and kept for its
  // next allocations of their size class, instead of a cudaFreeAsync and a cudaMallocAsync each
  // (about 1 us of host time for the pair): work queued on the stream later runs after every use
  // the free waited for, as with the pool's own reuse on one stream. At most kSmallKept blocks a
  // class; freed in stream order with the stream.
  static constexpr size_t kSmallGranule = 64;
  static constexpr size_t kSmallMax = 512;
  static constexpr size_t kSmallKept = 64;
  // The bytes to allocate for a small block of `bytes` (its class's size), so that a kept block
  // serves any request of its class.
  static size_t small_size(size_t bytes) {
    return (bytes + kSmallGranule - 1) / kSmallGranule * kSmallGranule;
  }
  void* take_small(size_t bytes);          // null when none is kept
  bool keep_small(void* p, size_t bytes);  // false: the caller frees it

 protected:
  bool do_query() override;
  void do_wait(Event& e) override;
  void do_synchronize() override;

 private:
  cudaStream_t stream_;
  bool owned_;
  std::mutex scratch_mutex_;
  void* scratch_ = nullptr;
  std::array<std::vector<void*>, kSmallMax / kSmallGranule> small_;  // under scratch_mutex_
  std::shared_ptr<Health> health_;
  std::shared_ptr<StreamRegistry> registry_;
};

class CudaEvent final : public Event {
 public:
  CudaEvent(int device, bool timing, std::shared_ptr<Health> health);
  cudaEvent_t get() const { return event_.get(); }

 protected:
  void do_record(Stream& s) override;
  void do_synchronize() override;
  bool do_query() override;
  double do_elapsed_ms(Event& later) override;

 private:
  std::shared_ptr<Health> health_;
  UniqueEvent event_;
};

}  // namespace culua::detail::cuda
