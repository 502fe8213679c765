// The built-in kernels on the host (host backend workers, and host memory on either backend): the
// element functors run over ranges of indices split across the host pool (host_pool.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/functors.cuh"
#include "kernels/host_pool.hpp"
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

// The offset of `index` (row-major over `axes` of the view, outermost first) in a and in b.
struct AxesIndexer {
  int count = 0;
  int64_t shape[kMaxDims] = {};
  int64_t a_strides[kMaxDims] = {};
  int64_t b_strides[kMaxDims] = {};
  void offsets(int64_t index, int64_t& a, int64_t& b) const {
    a = 0;
    b = 0;
    for (int k = count - 1; k >= 0; --k) {
      const int64_t q = index / shape[k];
      const int64_t r = index - q * shape[k];
      a += r * a_strides[k];
      b += r * b_strides[k];
      index = q;
    }
  }
};

// Elements of at most 16 bytes in a square tile: both a tile's rows of the source and of the
// destination stay in the L1 cache.
template <class T>
inline constexpr int64_t kTile = sizeof(T) >= 16 ? 16 : 32;

// A copy (with conversion) between views of the same shape, coalesced together, not contiguous
// both. Row by row along the destination's innermost axis; when the source runs along another
// axis (a transposed copy), tile by tile over that axis and the innermost one, so that both sides
// are read and written a cache line at a time.
template <class To, class From>
void strided_copy(const StridedView& d, const StridedView& s) {
  To* out = static_cast<To*>(d.data);
  const From* in = static_cast<const From*>(s.data);
  const int nd = d.ndim;
  const int inner = nd - 1;
  // The source's fastest axis, when it is not the innermost one.
  int across = -1;
  if (nd >= 2) {
    int64_t best = std::llabs(s.strides[inner]);
    for (int k = 0; k < inner; ++k) {
      if (d.shape[k] > 1 && std::llabs(s.strides[k]) < best) {
        best = std::llabs(s.strides[k]);
        across = k;
      }
    }
    if (best == 0) across = -1;  // a broadcast source: rows read one element
  }
  AxesIndexer outer;
  for (int k = 0; k < inner; ++k) {
    if (k == across) continue;
    outer.shape[outer.count] = d.shape[k];
    outer.a_strides[outer.count] = d.strides[k];
    outer.b_strides[outer.count] = s.strides[k];
    ++outer.count;
  }
  const int64_t n = d.shape[inner], ds = d.strides[inner], ss = s.strides[inner];
  if (across < 0) {
    const int64_t rows = d.size / n;
    parallel_for(rows, std::max<int64_t>(1, grain_for(sizeof(To) + sizeof(From)) / n),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t r = lo; r < hi; ++r) {
                     int64_t od, os;
                     outer.offsets(r, od, os);
                     To* o = out + od;
                     const From* x = in + os;
                     for (int64_t j = 0; j < n; ++j) o[j * ds] = convert<To>(x[j * ss]);
                   }
                 });
    return;
  }
  constexpr int64_t T = kTile<To> < kTile<From> ? kTile<To> : kTile<From>;
  const int64_t m = d.shape[across], da = d.strides[across], sa = s.strides[across];
  const int64_t bands_per_outer = (m + T - 1) / T;  // bands of T along `across`, all of `inner`
  const int64_t bands = d.size / (m * n) * bands_per_outer;
  parallel_for(bands, std::max<int64_t>(1, grain_for(sizeof(To) + sizeof(From)) / (T * n)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t b = lo; b < hi; ++b) {
                   int64_t od, os;
                   outer.offsets(b / bands_per_outer, od, os);
                   const int64_t i0 = b % bands_per_outer * T;
                   const int64_t i1 = std::min(m, i0 + T);
                   for (int64_t j0 = 0; j0 < n; j0 += T) {
                     const int64_t j1 = std::min(n, j0 + T);
                     for (int64_t i = i0; i < i1; ++i) {
                       To* o = out + od + i * da;
                       const From* x = in + os + i * sa;
                       for (int64_t j = j0; j < j1; ++j) o[j * ds] = convert<To>(x[j * ss]);
                     }
                   }
                 }
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
  if (d < s + bytes && s < d + bytes) {  // overlapping: one memmove, in the order it needs
    std::memmove(dst, src, bytes);
    return;
  }
  parallel_for(
      static_cast<int64_t>(bytes), grain_for(2),
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
