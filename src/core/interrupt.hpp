// Interrupting the host's waits for the device. Ctrl-C in the REPL and culua::Runtime::interrupt()
// in an embedding application request an interrupt on a flag; every host wait for the device
// (stream and event synchronization, device synchronization, reads of device memory) made on a
// thread where that flag is in scope polls it and throws Error(ErrorKind::Interrupted). Queued
// work is not cancelled: buffers it uses stay alive until it completes (their release is
// stream-ordered), so an interrupted wait frees nothing that work still uses.
#pragma once

#include <atomic>

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

}  // namespace culua::detail
