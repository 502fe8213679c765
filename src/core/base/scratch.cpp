#include "core/base/scratch.hpp"

namespace culua::detail {

namespace {
thread_local const ScratchReserve* t_reserve = nullptr;
}

ScratchScope::ScratchScope(const ScratchReserve* reserve) noexcept : previous_(t_reserve) {
  t_reserve = reserve;
}

ScratchScope::~ScratchScope() {
  t_reserve = previous_;
}

ScratchToken reserve_scratch(size_t bytes, const char* what) {
  if (!t_reserve || !*t_reserve || bytes == 0) return nullptr;
  return (*t_reserve)(bytes, what);
}

}  // namespace culua::detail
