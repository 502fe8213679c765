// The host kernels' thread pool: one per process, shared by every host stream and device (and by
// host-array math on either backend). A stream's worker runs its tasks one after another, as
// before; inside a task, parallel_for splits the work across the pool, the calling thread taking
// part, so that tasks of several streams share the pool without waiting on one another.
//
// Size: $CULUA_HOST_THREADS (1 to 1024; 1 runs everything on the calling thread, as before the
// pool), else the machine's hardware threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/base/error.hpp"

namespace culua::detail {
class InterruptFlag;
}

namespace culua::detail::kernels::host {

// What ends host work early (docs/sandbox.md, "Limits"): the kernels of a host backend task look
// between chunks of their work (parallel_for's ranges, at most kStopChunkGrains grains each) and
// stop when the work was abandoned (the process is leaving), cut short (an entry into Lua that
// queued it ended by a sandbox limit or an interrupt: `cut` moved past `epoch`), or, for work on
// the calling thread, when the thread's interrupt flag is requested or its wait deadline passed.
struct WorkStop {
  const std::atomic<bool>* abandoned = nullptr;
  const std::atomic<uint64_t>* cut = nullptr;
  uint64_t epoch = 0;
  const InterruptFlag* flag = nullptr;
  int64_t deadline_ns = 0;
  bool requested() const noexcept;
};

// Thrown where host work stops early: the task that ran it is cut short (its outputs are left as
// far as it got). Reaches Lua only from work on the calling thread, as an interruption.
class WorkStopped : public Error {
 public:
  WorkStopped() : Error(ErrorKind::Interrupted, "host work cut short") {}
};

// Makes `stop` what stops the host work the calling thread does while the scope lives (a host
// backend's worker, around each task).
class WorkStopScope {
 public:
  explicit WorkStopScope(const WorkStop* stop) noexcept;
  ~WorkStopScope();
  WorkStopScope(const WorkStopScope&) = delete;
  WorkStopScope& operator=(const WorkStopScope&) = delete;

 private:
  const WorkStop* previous_;
};

// The stop in scope on the calling thread (a worker's task, a range of a parallel_for), or null.
const WorkStop* current_work_stop() noexcept;

// Throws when the calling thread's work should stop: WorkStopped in a scope (or a range of a
// parallel_for), else the thread's interrupt or limit error (core/base/interrupt.hpp,
// check_interrupt).
void check_stop();

// Grains of work between two checks of check_stop in parallel_for (a few milliseconds).
inline constexpr int64_t kStopChunkGrains = 64;

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
// On the calling thread, in chunks of kStopChunkGrains grains with check_stop between them.
void run_serial(int64_t n, int64_t grain, int64_t align, RangeFn fn, void* context);
bool serial(int64_t n, int64_t grain);
}  // namespace pool_detail

// Runs body(lo, hi) over ranges that partition [0, n), each of at least `grain` indices (but the
// last) and starting at a multiple of `align`, on the pool's threads and the calling one; returns
// when all have run. The first exception a range throws is rethrown here (the ranges not yet
// started are skipped). How [0, n) is split depends on the pool's size: work whose result must
// not (reductions) splits itself into fixed pieces and runs a parallel_for over them. Called from
// inside a range, it runs on the calling thread. Long work (more than kStopChunkGrains grains) is
// done in ranges of at most that many grains, with check_stop between them.
template <class Body>
void parallel_for(int64_t n, int64_t grain, Body&& body, int64_t align = 1) {
  if (n <= 0) return;
  using B = std::remove_reference_t<Body>;
  const pool_detail::RangeFn fn = [](void* context, int64_t lo, int64_t hi) {
    (*static_cast<B*>(context))(lo, hi);
  };
  void* context = const_cast<void*>(static_cast<const void*>(&body));
  if (pool_detail::serial(n, grain)) {
    if (n / kStopChunkGrains < grain) {
      body(int64_t{0}, n);
      return;
    }
    pool_detail::run_serial(n, grain, align, fn, context);
    return;
  }
  pool_detail::run(n, grain, align, fn, context);
}

// memcpy on the pool (memmove, on the calling thread, when the ranges overlap).
void copy_bytes(void* dst, const void* src, size_t bytes);

}  // namespace culua::detail::kernels::host
