// Element functors shared by the host and CUDA backends. Each is a small struct whose
// operator()(i) handles element i of a row-major traversal; a launcher runs it for i in [0, n).
#pragma once

#include <cstdint>

#include "core/backend/backend.hpp"
#include "core/model/layout.hpp"
#include "core/model/numeric.hpp"

namespace culua::detail::kernels {

// Maps a row-major linear index to an element offset through shape and strides.
struct Indexer {
  int ndim;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];

  explicit Indexer(const StridedView& v) : ndim(v.ndim) {
    for (int d = 0; d < kMaxDims; ++d) {
      shape[d] = d < v.ndim ? v.shape[d] : 1;
      strides[d] = d < v.ndim ? v.strides[d] : 0;
    }
  }
  CULUA_HD int64_t operator()(int64_t i) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / shape[d];
      off += (i - q * shape[d]) * strides[d];
      i = q;
    }
    return off;
  }
};

// Storage types for byte-wise fills and copies of any dtype of that size.
struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};
template <int N>
struct bytes_type;
template <>
struct bytes_type<1> {
  using type = uint8_t;
};
template <>
struct bytes_type<2> {
  using type = uint16_t;
};
template <>
struct bytes_type<4> {
  using type = uint32_t;
};
template <>
struct bytes_type<8> {
  using type = uint64_t;
};
template <>
struct bytes_type<16> {
  using type = Bytes16;
};

template <class T>
struct FillContiguous {
  T* out;
  T value;
  CULUA_HD void operator()(int64_t i) const { out[i] = value; }
};

template <class T>
struct FillStrided {
  T* out;
  Indexer idx;
  T value;
  CULUA_HD void operator()(int64_t i) const { out[idx(i)] = value; }
};

template <class To, class From>
struct CastContiguous {
  To* out;
  const From* in;
  CULUA_HD void operator()(int64_t i) const { out[i] = convert<To>(in[i]); }
};

template <class To, class From>
struct CastStrided {
  To* out;
  const From* in;
  Indexer out_idx;
  Indexer in_idx;
  CULUA_HD void operator()(int64_t i) const { out[out_idx(i)] = convert<To>(in[in_idx(i)]); }
};

template <class T>
struct Sequence {
  T* out;
  Indexer idx;
  SequenceSpec spec;
  int64_t last;
  CULUA_HD void operator()(int64_t i) const {
    T v;
    if (spec.integral) {
      // Unsigned arithmetic wraps instead of overflowing; the result is in range (checked).
      const auto value = static_cast<uint64_t>(spec.istart) +
                         static_cast<uint64_t>(i) * static_cast<uint64_t>(spec.istep);
      v = convert<T>(static_cast<int64_t>(value));
    } else if (spec.pin_last && i == last) {
      v = convert<T>(spec.stop);
    } else {
      v = convert<T>(spec.start + static_cast<double>(i) * spec.step);
    }
    out[idx(i)] = v;
  }
};

// Calls f(dispatch-type) for a fill or same-type copy of elements of `size` bytes.
template <class F>
decltype(auto) dispatch_bytes(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(type_tag<uint8_t>{});
    case 2:
      return f(type_tag<uint16_t>{});
    case 4:
      return f(type_tag<uint32_t>{});
    case 8:
      return f(type_tag<uint64_t>{});
    default:
      return f(type_tag<Bytes16>{});
  }
}

// Runs a fill through `launch(n, functor)`, contiguous when possible.
template <class Launcher>
auto run_fill(const StridedView& dst, const void* value, Launcher&& launch) {
  StridedView d = dst;
  coalesce(&d, 1);
  return dispatch_bytes(itemsize(d.dtype), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    memcpy(&v, value, sizeof(T));
    if (d.is_contiguous()) return launch(d.size, FillContiguous<T>{static_cast<T*>(d.data), v});
    return launch(d.size, FillStrided<T>{static_cast<T*>(d.data), Indexer(d), v});
  });
}

template <class Launcher>
auto run_copy_cast(const StridedView& dst, const StridedView& src, Launcher&& launch) {
  StridedView v[2] = {dst, src};
  coalesce(v, 2);
  const bool contiguous = v[0].is_contiguous() && v[1].is_contiguous();
  auto typed = [&](auto to_tag, auto from_tag) {
    using To = typename decltype(to_tag)::type;
    using From = typename decltype(from_tag)::type;
    To* out = static_cast<To*>(v[0].data);
    const From* in = static_cast<const From*>(v[1].data);
    if (contiguous) return launch(v[0].size, CastContiguous<To, From>{out, in});
    return launch(v[0].size, CastStrided<To, From>{out, in, Indexer(v[0]), Indexer(v[1])});
  };
  if (dst.dtype == src.dtype) {
    return dispatch_bytes(itemsize(dst.dtype), [&](auto tag) { return typed(tag, tag); });
  }
  return dispatch(dst.dtype, [&](auto to_tag) {
    return dispatch(src.dtype, [&](auto from_tag) { return typed(to_tag, from_tag); });
  });
}

template <class Launcher>
auto run_sequence(const StridedView& dst, const SequenceSpec& spec, Launcher&& launch) {
  return dispatch(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch(dst.size,
                  Sequence<T>{static_cast<T*>(dst.data), Indexer(dst), spec, dst.size - 1});
  });
}

}  // namespace culua::detail::kernels
