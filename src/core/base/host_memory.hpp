// Plain (pageable) host memory for arrays. Large blocks are mapped directly and marked for
// transparent huge pages: a fresh block is touched first by a copy into it, and faulting it in
// 2 MiB at a time instead of 4 KiB is many times faster.
#pragma once

#include <cstddef>

namespace culua::detail {

void* allocate_host_memory(size_t bytes);  // nullptr when out of memory
void free_host_memory(void* p, size_t bytes) noexcept;

}  // namespace culua::detail
