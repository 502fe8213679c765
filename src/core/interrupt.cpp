#include "core/interrupt.hpp"

namespace culua::detail {

namespace {
thread_local InterruptFlag* t_flag = nullptr;
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

}  // namespace culua::detail
