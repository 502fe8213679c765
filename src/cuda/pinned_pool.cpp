#include "cuda/pinned_pool.hpp"

#include "core/error.hpp"

namespace culua::detail::cuda {

PinnedPool::~PinnedPool() {
  for (auto& [p, b] : blocks_) {
    if (b->ready) cudaEventDestroy(b->ready);
    cudaFreeHost(b->ptr);
  }
}

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
  const cudaError_t e = cudaEventQuery(b.ready);
  if (e == cudaSuccess) {
    b.pending = false;
    return true;
  }
  cudaGetLastError();
  return false;
}

void* PinnedPool::allocate(size_t bytes) {
  const size_t size = round_size(bytes);
  {
    std::lock_guard lock(m_);
    // Best fit among blocks no larger than twice the request whose last use has completed.
    for (auto it = free_.lower_bound(size); it != free_.end() && it->first <= 2 * size; ++it) {
      if (ready(*it->second)) {
        void* p = it->second->ptr;
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
  block->ptr = p;
  block->size = size;
  const cudaError_t ee = cudaEventCreateWithFlags(&block->ready, cudaEventDisableTiming);
  if (ee != cudaSuccess) {
    cudaFreeHost(p);
    CULUA_CUDA_CHECK(*health_, ee);
  }
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
    if (cudaEventRecord(b.ready, after) == cudaSuccess) {
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
    cudaEventDestroy(b.ready);
    cudaFreeHost(b.ptr);
    blocks_.erase(b.ptr);
    it = free_.erase(it);
  }
}

uint64_t PinnedPool::cached_bytes() const {
  std::lock_guard lock(m_);
  uint64_t n = 0;
  for (const auto& [size, b] : free_) n += size;
  return n;
}

}  // namespace culua::detail::cuda
