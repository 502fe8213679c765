#include "cuda/pinned_pool.hpp"

#include "core/base/error.hpp"

namespace culua::detail::cuda {

size_t PinnedPool::round_size(size_t bytes) {
  // Powers of two up to 1 MiB, then whole MiB: small requests share blocks, large ones waste
  // little.
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes <= kMiB) {
    size_t s = 4096;
    while (s < bytes) s <<= 1;
    return s;
  }
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

bool PinnedPool::ready(Block& b) noexcept {
  if (!b.pending) return true;
  const DeviceScope scope(b.device, std::nothrow);
  if (!scope.ok()) return false;
  const cudaError_t e = cudaEventQuery(b.ready.get());
  if (e == cudaSuccess) {
    b.pending = false;
    return true;
  }
  cudaGetLastError();
  return false;
}

void* PinnedPool::allocate(size_t bytes, int device) {
  const size_t size = round_size(bytes);
  {
    std::lock_guard lock(m_);
    // Best fit among blocks no larger than twice the request whose last use has completed.
    for (auto it = free_.lower_bound(size); it != free_.end() && it->first <= 2 * size; ++it) {
      if (ready(*it->second)) {
        void* p = it->second->ptr.get();
        free_.erase(it);
        return p;
      }
    }
  }
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, size, cudaHostAllocPortable);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    fail(ErrorKind::OutOfMemory, "cudaHostAlloc of {} failed",
         format_bytes(static_cast<double>(size)));
  }
  CULUA_CUDA_CHECK(*health_, e);
  auto block = std::make_unique<Block>();
  block->ptr = UniquePinned(p, FreePinned{device});
  block->size = size;
  block->device = device;
  cudaEvent_t ready = nullptr;
  CULUA_CUDA_CHECK(*health_, cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  block->ready = UniqueEvent(ready, DestroyEvent{device});
  std::lock_guard lock(m_);
  blocks_.emplace(p, std::move(block));
  return p;
}

void PinnedPool::release(void* p, cudaStream_t after) noexcept {
  std::lock_guard lock(m_);
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return;
  Block& b = *it->second;
  b.pending = false;
  if (after) {
    if (cudaEventRecord(b.ready.get(), after) == cudaSuccess) {
      b.pending = true;
    } else {
      cudaGetLastError();
      return;  // cannot tell when the block is free again: keep it out of the pool
    }
  }
  free_.emplace(b.size, &b);
}

void PinnedPool::trim() noexcept {
  std::lock_guard lock(m_);
  for (auto it = free_.begin(); it != free_.end();) {
    Block& b = *it->second;
    if (!ready(b)) {
      ++it;
      continue;
    }
    void* p = b.ptr.get();
    it = free_.erase(it);
    blocks_.erase(p);  // destroys the event, then frees the memory
  }
}

uint64_t PinnedPool::cached_bytes() const {
  std::lock_guard lock(m_);
  uint64_t n = 0;
  for (const auto& [size, b] : free_) n += size;
  return n;
}

}  // namespace culua::detail::cuda
