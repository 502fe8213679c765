// Reuse pool for pinned (page-locked) host memory: cudaHostAlloc costs milliseconds, so freed
// blocks are kept and handed out again once the work that used them has completed.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cuda/cuda_check.hpp"

namespace culua::detail::cuda {

class PinnedPool {
 public:
  explicit PinnedPool(std::shared_ptr<Health> health) : health_(std::move(health)) {}
  ~PinnedPool();
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  void* allocate(size_t bytes);  // throws Error(OutOfMemory)
  // The block becomes reusable after the work queued on `after` so far (at once when null).
  void release(void* p, cudaStream_t after) noexcept;
  void trim() noexcept;  // frees cached blocks that no queued work uses
  uint64_t cached_bytes() const;

 private:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;
    cudaEvent_t ready = nullptr;  // recorded on release
    bool pending = false;
  };
  static size_t round_size(size_t bytes);
  bool ready(Block& b) noexcept;

  std::shared_ptr<Health> health_;
  mutable std::mutex m_;
  std::multimap<size_t, Block*> free_;
  std::unordered_map<void*, std::unique_ptr<Block>> blocks_;
};

}  // namespace culua::detail::cuda
