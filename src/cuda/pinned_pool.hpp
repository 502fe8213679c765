// Reuse pool for pinned (page-locked) host memory: cudaHostAlloc costs milliseconds, so freed
// blocks are kept and handed out again once the work that used them has completed.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cuda/cuda_check.hpp"
#include "cuda/scoped.hpp"

namespace culua::detail::cuda {

class PinnedPool {
 public:
  explicit PinnedPool(std::shared_ptr<Health> health) : health_(std::move(health)) {}
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  // The caller has made `device` current (the block's event belongs to it). Throws
  // Error(OutOfMemory).
  void* allocate(size_t bytes, int device);
  // The block becomes reusable after the work queued on `after` so far (at once when null); the
  // caller has made `after`'s device current.
  void release(void* p, cudaStream_t after) noexcept;
  void trim() noexcept;  // frees cached blocks that no queued work uses
  uint64_t cached_bytes() const;

 private:
  struct Block {
    UniquePinned ptr;
    size_t size = 0;
    int device = 0;
    UniqueEvent ready;  // recorded on release; destroyed before the memory is freed
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
