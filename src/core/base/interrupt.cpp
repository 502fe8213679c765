#include "core/base/interrupt.hpp"

#include <chrono>
#include <thread>

#include "core/base/error.hpp"

namespace culua::detail {

namespace {

thread_local InterruptFlag* t_flag = nullptr;
thread_local int64_t t_deadline_ns = 0;
thread_local const std::string* t_deadline_message = nullptr;

int64_t now_ns() {
  return steady_now_ns();
}

// How long a wait spins (yielding) before it polls with sleeps, and the sleep between polls.
constexpr int64_t kSpinNs = 2'000'000;
constexpr auto kPollSleep = std::chrono::microseconds(100);

[[noreturn]] void throw_interrupted() {
  throw Error(ErrorKind::Interrupted, "interrupted (queued device work continues)");
}

}  // namespace

int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void set_wait_deadline(int64_t deadline_ns, const std::string* message) noexcept {
  t_deadline_ns = deadline_ns;
  t_deadline_message = message;
}

bool wait_deadline_set() noexcept {
  return t_deadline_ns != 0;
}

int64_t wait_deadline_ns() noexcept {
  return t_deadline_ns;
}

void check_wait_deadline() {
  if (t_deadline_ns != 0 && now_ns() >= t_deadline_ns) {
    throw Error(ErrorKind::Limit, t_deadline_message ? *t_deadline_message : "time limit exceeded");
  }
}

InterruptScope::InterruptScope(InterruptFlag* flag) noexcept : previous_(t_flag) {
  t_flag = flag;
}

InterruptScope::~InterruptScope() {
  t_flag = previous_;
}

InterruptFlag* current_interrupt_flag() noexcept {
  return t_flag;
}

void check_interrupt() {
  if (t_flag && t_flag->requested()) throw_interrupted();
  check_wait_deadline();
}

WaitBackoff::WaitBackoff(const InterruptFlag* flag) noexcept : flag_(flag), start_ns_(now_ns()) {}

void WaitBackoff::check() const {
  if (flag_ && flag_->requested()) throw_interrupted();
  check_wait_deadline();
}

void WaitBackoff::pause() {
  check();
  if (!sleeping_ && now_ns() - start_ns_ < kSpinNs) {
    std::this_thread::yield();
    return;
  }
  sleeping_ = true;
  std::this_thread::sleep_for(kPollSleep);
}

}  // namespace culua::detail
