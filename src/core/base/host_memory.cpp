#include "core/base/host_memory.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace culua::detail {

namespace {
constexpr size_t kAlignment = 256;
constexpr size_t kMapThreshold = size_t{2} << 20;
}  // namespace

void* allocate_host_memory(size_t bytes) {
  if (bytes >= kMapThreshold) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    madvise(p, bytes, MADV_HUGEPAGE);  // a hint: ignored where huge pages are off
    return p;
  }
  return std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
}

void free_host_memory(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes >= kMapThreshold) {
    munmap(p, bytes);
  } else {
    std::free(p);
  }
}

}  // namespace culua::detail
