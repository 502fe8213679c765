// Interrupting the host's waits for the device. Ctrl-C in the REPL and culua::Runtime::interrupt()
// in an embedding application request an interrupt on a flag; every host wait for the device
// (stream and event synchronization, device synchronization, reads of device memory) made on a
// thread where that flag is in scope polls it and throws Error(ErrorKind::Interrupted). Queued
// work is not cancelled: buffers it uses stay alive until it completes (their release is
// stream-ordered), so an interrupted wait frees nothing that work still uses.
#pragma once

#include <atomic>
#include <cstdint>

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

// Throws Error(ErrorKind::Interrupted) when the flag in scope has been requested.
void check_interrupt();

// The polling side of an interruptible wait: call pause() between checks of the awaited
// condition. It throws Error(Interrupted) once the flag is requested; it yields while the wait is
// young (a short wait stays as fast as a native blocking call) and sleeps about 100 us between
// checks after a few milliseconds (a long wait costs no CPU and still sees an interrupt at once).
class WaitBackoff {
 public:
  explicit WaitBackoff(const InterruptFlag& flag) noexcept;
  void pause();

 private:
  const InterruptFlag& flag_;
  int64_t start_ns_;
  bool sleeping_ = false;
};

// Waits until done() returns true. With no flag in scope on this thread it calls block() (the
// backend's native blocking wait); with one, it polls done() through a WaitBackoff.
template <class Done, class Block>
void interruptible_wait(Done&& done, Block&& block) {
  const InterruptFlag* flag = current_interrupt_flag();
  if (!flag) {
    block();
    return;
  }
  WaitBackoff backoff(*flag);
  while (!done()) backoff.pause();
}

}  // namespace culua::detail
