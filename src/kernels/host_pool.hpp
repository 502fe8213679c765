// The host kernels' thread pool: one per process, shared by every host stream and device (and by
// host-array math on either backend). A stream's worker runs its tasks one after another, as
// before; inside a task, parallel_for splits the work across the pool, the calling thread taking
// part, so that tasks of several streams share the pool without waiting on one another.
//
// Size: $CULUA_HOST_THREADS (1 to 1024; 1 runs everything on the calling thread, as before the
// pool), else the machine's hardware threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace culua::detail::kernels::host {

// Threads a parallel_for runs on, the caller included (reads and checks $CULUA_HOST_THREADS on the
// first call; a bad value throws naming the variable).
int pool_threads();

// Overrides the pool's size (tests: results must not depend on it); 0 restores the configured one.
void set_pool_threads(int threads);

// Indices a range of parallel_for should cover at least so that handing it to another thread pays
// off, for work of about `bytes_per_index` bytes of memory traffic per index (256 KiB a range: on a
// 2-core machine, a 64 KiB f32 add just breaks even on two threads; see host_pool.cpp).
int64_t grain_for(int64_t bytes_per_index);

namespace pool_detail {
using RangeFn = void (*)(void* context, int64_t lo, int64_t hi);
// The pool's side of parallel_for (n > grain, threads > 1, not nested).
void run(int64_t n, int64_t grain, int64_t align, RangeFn fn, void* context);
bool serial(int64_t n, int64_t grain);
}  // namespace pool_detail

// Runs body(lo, hi) over ranges that partition [0, n), each of at least `grain` indices (but the
// last) and starting at a multiple of `align`, on the pool's threads and the calling one; returns
// when all have run. The first exception a range throws is rethrown here (the ranges not yet
// started are skipped). How [0, n) is split depends on the pool's size: work whose result must
// not (reductions) splits itself into fixed pieces and runs a parallel_for over them. Called from
// inside a range, it runs body(0, n) on the calling thread.
template <class Body>
void parallel_for(int64_t n, int64_t grain, Body&& body, int64_t align = 1) {
  if (n <= 0) return;
  if (pool_detail::serial(n, grain)) {
    body(int64_t{0}, n);
    return;
  }
  using B = std::remove_reference_t<Body>;
  pool_detail::run(
      n, grain, align,
      [](void* context, int64_t lo, int64_t hi) { (*static_cast<B*>(context))(lo, hi); },
      const_cast<void*>(static_cast<const void*>(&body)));
}

// memcpy on the pool (memmove, on the calling thread, when the ranges overlap).
void copy_bytes(void* dst, const void* src, size_t bytes);

}  // namespace culua::detail::kernels::host
