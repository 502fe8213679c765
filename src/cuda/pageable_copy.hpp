// Synchronous copies between pageable host memory and the device, staged through page-locked
// memory by several threads. cudaMemcpy from pageable memory stages through the driver's buffer on
// one thread (about 6 GB/s to an H200, against 50 GB/s from pinned memory). Here each lane (the
// calling thread and up to seven workers) takes every W-th chunk of the copy, moves it between the
// pageable memory and one of its two pinned slots with a plain memcpy, and queues the DMA of that
// slot on its own stream, so that host copies run in parallel and overlap the transfers.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/scoped.hpp"

namespace culua::detail::cuda {

class PageableCopier {
 public:
  static constexpr size_t kChunk = size_t{4} << 20;       // bytes per slot: the largest chunk
  static constexpr size_t kMinChunk = size_t{256} << 10;  // chunks of smaller copies

  explicit PageableCopier(std::shared_ptr<Health> health);
  ~PageableCopier();  // joins the workers (the members free slots, events and streams)
  PageableCopier(const PageableCopier&) = delete;
  PageableCopier& operator=(const PageableCopier&) = delete;

  // Copies `bytes` from `src` to `dst`: one side pageable host memory, the other device memory of
  // `device` (to_device: dst is on the device). Starts after the work queued on `after` so far and
  // returns when the copy is complete. Throws culua::detail::Error for a failed CUDA call (a sticky
  // one poisons through `health`).
  void copy(void* dst, const void* src, size_t bytes, bool to_device, int device,
            cudaStream_t after);

  size_t lanes() const { return lanes_.size(); }

 private:
  struct DeviceLane {
    UniqueStream stream;
    UniqueEvent done[2];
  };
  // Every copy completed before copy() returned: nothing queued uses a slot when it is freed.
  struct Lane {
    UniquePinned slot[2];  // kChunk each
    std::vector<DeviceLane> devices;
  };
  struct Job {
    char* dst = nullptr;
    const char* src = nullptr;
    size_t bytes = 0;
    size_t chunk = 0;  // bytes per chunk (the last may be shorter)
    size_t chunks = 0;
    size_t used = 0;  // lanes taking part
    bool to_device = false;
    int device = 0;
    cudaEvent_t start = nullptr;
  };
  struct Failure {
    cudaError_t error = cudaSuccess;
    const char* call = nullptr;
  };

  void run_lane(size_t index, const Job& job, Failure& failure) noexcept;
  void worker(size_t index);
  DeviceLane* device_lane(Lane& lane, int device, Failure& failure) noexcept;

  std::shared_ptr<Health> health_;
  std::vector<Lane> lanes_;
  std::vector<UniqueEvent> start_;  // per device, recorded on the caller's stream

  std::mutex m_;
  std::condition_variable wake_, finished_;
  uint64_t generation_ = 0;
  size_t remaining_ = 0;
  bool stop_ = false;
  Job job_;
  std::vector<Failure> failures_;
  std::vector<std::thread> threads_;
};

}  // namespace culua::detail::cuda
