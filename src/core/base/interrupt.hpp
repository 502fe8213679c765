// Interrupting the host's waits for the device. Ctrl-C in the REPL and culua::Runtime::interrupt()
// in an embedding application request an interrupt on a flag; every host wait for the device
// (stream and event synchronization, device synchronization, reads of device memory) made on a
// thread where that flag is in scope polls it and throws Error(ErrorKind::Interrupted). Queued
// CUDA work is not cancelled: buffers it uses stay alive until it completes (their release is
// stream-ordered), so an interrupted wait frees nothing that work still uses. (In a sandbox, the
// host backend cuts short the work of an entry an interrupt or a limit ended:
// Backend::cut_short_queued_work.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace culua::detail {

class InterruptFlag {
 public:
  void request() noexcept { requested_.store(true, std::memory_order_relaxed); }
  void clear() noexcept { requested_.store(false, std::memory_order_relaxed); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> requested_{false};
};

// Makes `flag` the one the calling thread's waits poll while the scope lives (scopes nest; null
// makes waits uninterruptible again).
class InterruptScope {
 public:
  explicit InterruptScope(InterruptFlag* flag) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  InterruptFlag* previous_;
};

// The flag in scope on the calling thread, or null.
InterruptFlag* current_interrupt_flag() noexcept;

// The sandbox's wall-time limit on the calling thread's waits: once the steady clock passes
// `deadline_ns` (nanoseconds of std::chrono::steady_clock), every wait (and check_interrupt)
// throws Error(ErrorKind::Limit, *message) instead of waiting on; a wait with no interrupt flag
// in scope then polls too. 0 removes the deadline. `message` must outlive the deadline.
void set_wait_deadline(int64_t deadline_ns, const std::string* message) noexcept;
bool wait_deadline_set() noexcept;
int64_t wait_deadline_ns() noexcept;  // the calling thread's (0: none)
// Throws Error(ErrorKind::Limit) when the calling thread's wait deadline has passed.
void check_wait_deadline();
int64_t steady_now_ns() noexcept;

// Throws Error(ErrorKind::Interrupted) when the flag in scope has been requested, and
// Error(ErrorKind::Limit) when the wait deadline has passed.
void check_interrupt();

// How long a wait that blocks with a timeout (a condition variable) blocks between checks of the
// flag.
inline constexpr std::chrono::microseconds kInterruptCheckInterval{200};

// The pacing of an interruptible wait. check() throws Error(Interrupted) once the flag is
// requested. pause() (for waits that can only query) checks, then yields while the wait is young
// (a short wait stays as fast as a native blocking call) and sleeps about 100 us after a few
// milliseconds (a long wait costs no CPU and still sees an interrupt at once).
// (A null flag: only the wait deadline is checked.)
class WaitBackoff {
 public:
  explicit WaitBackoff(const InterruptFlag* flag) noexcept;
  void check() const;
  void pause();

 private:
  const InterruptFlag* flag_;
  int64_t start_ns_;
  bool sleeping_ = false;
};

// Waits until the awaited work is done. With no flag in scope on this thread it calls block()
// (the backend's native blocking wait). With one, it calls wait_for(kInterruptCheckInterval),
// which returns true once the work is done: when `blocks`, wait_for blocks up to that long (a
// condition variable) and the flag is checked between calls; otherwise wait_for only queries and
// the calls are paced by WaitBackoff::pause.
template <class WaitFor, class Block>
void interruptible_wait(WaitFor&& wait_for, bool blocks, Block&& block) {
  const InterruptFlag* flag = current_interrupt_flag();
  if (!flag && !wait_deadline_set()) {
    block();
    return;
  }
  WaitBackoff backoff(flag);
  while (!wait_for(kInterruptCheckInterval)) {
    if (blocks) {
      backoff.check();
    } else {
      backoff.pause();
    }
  }
}

}  // namespace culua::detail
