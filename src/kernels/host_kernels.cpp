// The built-in kernels on the host (host backend workers, and host memory on either backend): the
// element functors run over ranges of indices split across the host pool (host_pool.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/functors.cuh"
#include "kernels/host_pool.hpp"
#include "kernels/host_rows.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace {

// Runs f(i) for i in [0, n) on the pool, ranges of at least `grain` indices.
struct Loop {
  int64_t grain;
  template <class F>
  void operator()(int64_t n, const F& f) const {
    parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) f(i);
    });
  }
};

// A copy (with conversion) between views of the same shape, coalesced together, not contiguous
// both: row by row, tile by tile when the source is transposed (host_rows.hpp).
template <class To, class From>
void strided_copy(const StridedView& d, const StridedView& s) {
  To* out = static_cast<To*>(d.data);
  const From* in = static_cast<const From*>(s.data);
  const StridedView v[2] = {d, s};
  const int64_t ds = d.strides[d.ndim - 1], ss = s.strides[d.ndim - 1];
  for_each_row<2>(v, sizeof(To) + sizeof(From), [&](const int64_t* off, int64_t j0, int64_t j1) {
    To* o = out + off[0];
    const From* x = in + off[1];
    for (int64_t j = j0; j < j1; ++j) o[j * ds] = convert<To>(x[j * ss]);
  });
}

bool has_overlapping_elements(const StridedView& v) {
  for (int k = 0; k < v.ndim; ++k) {
    if (v.strides[k] == 0 && v.shape[k] > 1) return true;
  }
  return false;
}

}  // namespace

void copy_bytes(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const auto di = reinterpret_cast<uintptr_t>(dst), si = reinterpret_cast<uintptr_t>(src);
  if (di < si + bytes && si < di + bytes) {  // overlapping: one memmove, in the order it needs
    std::memmove(dst, src, bytes);
    return;
  }
  // memcpy streams faster than the kernels' loops (measured: 1 MiB copies gain on two threads,
  // 512 KiB ones do not): ranges of twice the grain.
  parallel_for(
      static_cast<int64_t>(bytes), grain_for(1),
      [&](int64_t lo, int64_t hi) { std::memcpy(d + lo, s + lo, static_cast<size_t>(hi - lo)); },
      64);
}

void fill(const StridedView& dst, const void* value) {
  if (dst.size == 0) return;
  const int64_t item = static_cast<int64_t>(itemsize(dst.dtype));
  if (has_overlapping_elements(dst)) {
    run_fill(dst, value, Loop{dst.size});  // one thread: every element is written in order
    return;
  }
  run_fill(dst, value, Loop{grain_for(item)});
}

void copy_cast(const StridedView& dst, const StridedView& src) {
  if (dst.size == 0) return;
  if (dst.dtype == src.dtype && dst.is_contiguous() && src.is_contiguous()) {
    copy_bytes(dst.data, src.data, static_cast<size_t>(dst.size) * itemsize(dst.dtype));
    return;
  }
  if (has_overlapping_elements(dst)) {
    run_copy_cast(dst, src, Loop{dst.size});  // one thread: every element is written in order
    return;
  }
  StridedView v[2] = {dst, src};
  coalesce(v, 2);
  if (v[0].is_contiguous() && v[1].is_contiguous()) {
    run_copy_cast(dst, src,
                  Loop{grain_for(static_cast<int64_t>(itemsize(dst.dtype) + itemsize(src.dtype)))});
    return;
  }
  auto typed = [&](auto to_tag, auto from_tag) {
    strided_copy<typename decltype(to_tag)::type, typename decltype(from_tag)::type>(v[0], v[1]);
  };
  if (dst.dtype == src.dtype) {
    dispatch_bytes(itemsize(dst.dtype), [&](auto tag) { typed(tag, tag); });
    return;
  }
  dispatch(dst.dtype, [&](auto to_tag) {
    dispatch(src.dtype, [&](auto from_tag) { typed(to_tag, from_tag); });
  });
}

void sequence(const StridedView& dst, const SequenceSpec& spec) {
  if (dst.size == 0) return;
  run_sequence(dst, spec, Loop{grain_for(static_cast<int64_t>(itemsize(dst.dtype)) * 4)});
}

}  // namespace culua::detail::kernels::host
