#include "kernels/host_pool.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"

namespace culua::detail::kernels::host {

namespace {

constexpr int kMaxThreads = 1024;
// Bytes of memory traffic a range must have for another thread to take it: handing a range to
// another thread costs some microseconds, the time to stream about 128 KiB (measured on a shared
// 2-core VM: an f32 add of 64 KiB arrays, 8192-element ranges, takes as long on two threads as on
// one; from 256 KiB arrays two threads are up to twice as fast). Twice that, to stay on the
// winning side on a busy machine.
constexpr int64_t kGrainBytes = 256 * 1024;
// Ranges per thread of a parallel_for: more than one, so that a thread slowed by other work on
// the machine leaves its share to the others.
constexpr int64_t kRangesPerThread = 4;
// How long a helper out of work looks for more before parking.
constexpr std::chrono::microseconds kSpin{50};

thread_local bool in_range = false;  // this thread runs a range of a parallel_for
// What stops the work of this thread (a worker's task, or the parallel_for whose range it runs).
thread_local const WorkStop* t_stop = nullptr;

// Sets t_stop for a scope.
class StopInScope {
 public:
  explicit StopInScope(const WorkStop* stop) noexcept : previous_(t_stop) { t_stop = stop; }
  ~StopInScope() { t_stop = previous_; }
  StopInScope(const StopInScope&) = delete;
  StopInScope& operator=(const StopInScope&) = delete;

 private:
  const WorkStop* previous_;
};

// What stops a parallel_for started on this thread: the thread's own (a worker's task), else the
// thread's interrupt flag and wait deadline, taken along to the helper threads.
WorkStop stop_of_caller() {
  if (t_stop) return *t_stop;
  WorkStop s;
  s.flag = current_interrupt_flag();
  s.deadline_ns = wait_deadline_ns();
  return s;
}

// A parallel_for that stopped: on a thread with no stop of its own (the script's), the error that
// stopped it (interrupted, or the sandbox's time limit), else WorkStopped for the worker.
[[noreturn]] void rethrow_stopped(const std::exception_ptr& e, bool callers_own) {
  if (callers_own) check_interrupt();
  std::rethrow_exception(e);
}

int configured_threads() {
  const char* env = std::getenv("CULUA_HOST_THREADS");
  if (!env || !*env) {
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(std::min<unsigned>(hw, kMaxThreads));
  }
  const std::string_view s = env;
  int n = 0;
  bool ok = s.size() <= 4;
  for (const char c : s) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + (c - '0');
  }
  if (!ok || n < 1 || n > kMaxThreads) {
    fail(ErrorKind::Value,
         "CULUA_HOST_THREADS: cannot use '{}' as the number of host threads (an integer from 1 "
         "to {})",
         s, kMaxThreads);
  }
  return n;
}

int environment_threads() {
  static const int n = configured_threads();  // a throw leaves it unset: the next call throws too
  return n;
}

// One parallel_for: ranges of `size` indices claimed in order by whoever runs work().
struct Job {
  pool_detail::RangeFn fn;
  void* context;
  WorkStop stop;
  int64_t n, size, count;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> finished{0};
  std::atomic<bool> failed{false};
  std::mutex m;
  std::condition_variable all_done;
  std::exception_ptr error;  // the first a range threw (under m)

  Job(pool_detail::RangeFn f, void* c, const WorkStop& s, int64_t total, int64_t range_size)
      : fn(f),
        context(c),
        stop(s),
        n(total),
        size(range_size),
        count((total + range_size - 1) / range_size) {}

  bool exhausted() const { return next.load(std::memory_order_relaxed) >= count; }

  // Runs ranges until none is left to claim.
  void work() {
    for (;;) {
      const int64_t r = next.fetch_add(1, std::memory_order_relaxed);
      if (r >= count) return;
      if (!failed.load(std::memory_order_relaxed)) {
        const int64_t lo = r * size;
        in_range = true;
        const StopInScope scope(&stop);
        try {
          if (stop.requested()) throw WorkStopped();
          fn(context, lo, std::min(n, lo + size));
        } catch (...) {
          // Carried to the caller of parallel_for and rethrown there as it was, not handled here.
          std::lock_guard lock(m);
          if (!error) error = std::current_exception();
          failed.store(true);
        }
        in_range = false;
      }
      if (finished.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
        std::lock_guard lock(m);
        all_done.notify_all();
      }
    }
  }

  void wait() {
    std::unique_lock lock(m);
    all_done.wait(lock, [&] { return finished.load(std::memory_order_acquire) == count; });
  }
};

// Helper threads (the callers of parallel_for are the others), parked on a condition variable
// while no job has ranges left. Started on first use, never stopped: the pool lives as long as
// the process (a stream's worker may still be inside a parallel_for while the process exits).
class Pool {
 public:
  static Pool& instance() {
    static Pool* const pool = new Pool();  // never destroyed (see above)
    return *pool;
  }

  int threads() const {
    const int o = override_.load(std::memory_order_relaxed);
    return o > 0 ? o : environment_threads();
  }

  void set_override(int threads) {
    std::lock_guard lock(m_);
    override_.store(threads);
    work_ready_.notify_all();
  }

  void run(const std::shared_ptr<Job>& job, int threads) {
    const int helpers = start_helpers(threads - 1);
    {
      std::lock_guard lock(m_);
      jobs_.push_back(job);
      queued_.store(jobs_.size(), std::memory_order_relaxed);
    }
    const int64_t wake = std::min<int64_t>(helpers, job->count - 1);
    for (int64_t i = 0; i < wake; ++i) work_ready_.notify_one();
    job->work();
    job->wait();
    {
      std::lock_guard lock(m_);
      const auto it = std::find(jobs_.begin(), jobs_.end(), job);
      if (it != jobs_.end()) jobs_.erase(it);
      queued_.store(jobs_.size(), std::memory_order_relaxed);
    }
    if (job->error) std::rethrow_exception(job->error);
  }

 private:
  Pool() = default;

  // Starts helpers up to `wanted`; returns how many there are (fewer when the system refuses a
  // thread: the work then runs on those there are).
  int start_helpers(int wanted) {
    std::lock_guard lock(start_m_);
    while (started_.load(std::memory_order_relaxed) < wanted) {
      const int index = started_.load(std::memory_order_relaxed);
      sigset_t all, previous;
      sigfillset(&all);
      // Signals (Ctrl-C) go to the application's threads, whose handlers act on them at once.
      pthread_sigmask(SIG_SETMASK, &all, &previous);
      try {
        std::thread(&Pool::helper, this, index).detach();
      } catch (const std::system_error&) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        break;
      }
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      started_.store(index + 1, std::memory_order_relaxed);
    }
    return std::min(wanted, started_.load(std::memory_order_relaxed));
  }

  void helper(int index) {
    // Helpers beyond the pool's current size (set_pool_threads lowered it) stay parked.
    const auto ready = [&] { return !jobs_.empty() && index < threads() - 1; };
    std::unique_lock lock(m_);
    for (;;) {
      if (!ready()) {
        // A stream's next operation usually follows within microseconds: look for it a while
        // before parking (waking a parked thread costs more than a small operation).
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + kSpin;
        while (queued_.load(std::memory_order_relaxed) == 0 &&
               std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
        }
        lock.lock();
        work_ready_.wait(lock, ready);
      }
      const std::shared_ptr<Job> job = jobs_.front();
      if (job->exhausted()) {
        jobs_.pop_front();  // its caller is finishing it
        queued_.store(jobs_.size(), std::memory_order_relaxed);
        continue;
      }
      lock.unlock();
      job->work();
      lock.lock();
    }
  }

  std::mutex m_;
  std::condition_variable work_ready_;
  std::deque<std::shared_ptr<Job>> jobs_;  // jobs that may have ranges left, oldest first
  std::atomic<size_t> queued_{0};          // jobs_.size(), read without the lock
  std::mutex start_m_;
  std::atomic<int> started_{0};
  std::atomic<int> override_{0};
};

}  // namespace

int pool_threads() {
  return Pool::instance().threads();
}

void set_pool_threads(int threads) {
  Pool::instance().set_override(std::clamp(threads, 0, kMaxThreads));
}

int64_t grain_for(int64_t bytes_per_index) {
  return std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(1, bytes_per_index));
}

bool WorkStop::requested() const noexcept {
  return (abandoned && abandoned->load(std::memory_order_relaxed)) ||
         (cut && cut->load(std::memory_order_relaxed) != epoch) || (flag && flag->requested()) ||
         (deadline_ns != 0 && steady_now_ns() >= deadline_ns);
}

WorkStopScope::WorkStopScope(const WorkStop* stop) noexcept : previous_(t_stop) {
  t_stop = stop;
}

WorkStopScope::~WorkStopScope() {
  t_stop = previous_;
}

const WorkStop* current_work_stop() noexcept {
  return t_stop;
}

void check_stop() {
  if (!t_stop) {
    check_interrupt();
  } else if (t_stop->requested()) {
    throw WorkStopped();
  }
}

namespace pool_detail {

bool serial(int64_t n, int64_t grain) {
  return n <= grain || in_range || pool_threads() <= 1;
}

namespace {

// The longest range a check_stop may be apart from the next (a multiple of align).
int64_t chunk_of(int64_t grain, int64_t align) {
  const int64_t g = std::max<int64_t>(1, grain);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / kStopChunkGrains;
  const int64_t chunk = g > kMax ? kMax * kStopChunkGrains : g * kStopChunkGrains;
  return std::max(align, chunk / align * align);
}

}  // namespace

void run_serial(int64_t n, int64_t grain, int64_t align, RangeFn fn, void* context) {
  const int64_t chunk = chunk_of(grain, std::max<int64_t>(1, align));
  for (int64_t lo = 0; lo < n; lo += chunk) {
    if (lo > 0) check_stop();
    fn(context, lo, lo + std::min(chunk, n - lo));
  }
}

void run(int64_t n, int64_t grain, int64_t align, RangeFn fn, void* context) {
  Pool& pool = Pool::instance();
  const int threads = pool.threads();
  align = std::max<int64_t>(1, align);
  int64_t size =
      std::max<int64_t>(grain, (n + threads * kRangesPerThread - 1) / (threads * kRangesPerThread));
  size = (size + align - 1) / align * align;
  size = std::min(size, chunk_of(grain, align));  // stops are seen between ranges
  if (size >= n) {
    fn(context, 0, n);
    return;
  }
  const bool callers_own = t_stop == nullptr;
  try {
    pool.run(std::make_shared<Job>(fn, context, stop_of_caller(), n, size), threads);
  } catch (const WorkStopped&) {
    rethrow_stopped(std::current_exception(), callers_own);
  }
}

}  // namespace pool_detail

}  // namespace culua::detail::kernels::host
