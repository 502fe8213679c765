// The built-in kernels run on the calling thread (host backend workers, and host memory on either
// backend).
#include <cstdint>
#include <cstring>

#include "kernels/functors.cuh"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace {
struct Loop {
  template <class F>
  void operator()(int64_t n, const F& f) const {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
};
}  // namespace

void fill(const StridedView& dst, const void* value) {
  if (dst.size == 0) return;
  run_fill(dst, value, Loop{});
}

void copy_cast(const StridedView& dst, const StridedView& src) {
  if (dst.size == 0) return;
  if (dst.dtype == src.dtype && dst.is_contiguous() && src.is_contiguous()) {
    std::memmove(dst.data, src.data, static_cast<size_t>(dst.size) * itemsize(dst.dtype));
    return;
  }
  run_copy_cast(dst, src, Loop{});
}

void sequence(const StridedView& dst, const SequenceSpec& spec) {
  if (dst.size == 0) return;
  run_sequence(dst, spec, Loop{});
}

}  // namespace culua::detail::kernels::host
