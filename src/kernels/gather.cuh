// The element functor of gathers, scatters and index checks (core/backend/gather_call.hpp), written
// once for both backends: gather_host.cpp runs it on the host pool, gather_cuda.cu on a CUDA
// stream.
#pragma once

#include <cstdint>

#include "core/backend/gather_call.hpp"
#include "kernels/functors.cuh"

namespace culua::detail::kernels {

// Elements move as raw words of their size (16 bytes: c128).
struct alignas(16) Word16 {
  uint64_t lo, hi;
};

template <class W>
struct GatherElement {
  GatherCall::Mode mode;
  int axis;
  int ndim;
  int64_t axis_len;
  int64_t axis_stride;
  int64_t shape[kMaxDims];
  int64_t data_strides[kMaxDims];
  int64_t other_strides[kMaxDims];
  int64_t index_strides[kMaxDims];
  W* data;
  W* other;
  const int64_t* index;
  int64_t* bad;

  explicit GatherElement(const GatherCall& c)
      : mode(c.mode),
        axis(c.axis),
        ndim(c.other.ndim),
        axis_len(c.data.shape[c.axis]),
        axis_stride(c.data.strides[c.axis]),
        data(static_cast<W*>(c.data.data)),
        other(static_cast<W*>(c.other.data)),
        index(static_cast<const int64_t*>(c.index.data)),
        bad(c.bad) {
    for (int d = 0; d < kMaxDims; ++d) {
      const bool in = d < ndim;
      shape[d] = in ? c.other.shape[d] : 1;
      data_strides[d] = in && d != axis ? c.data.strides[d] : 0;
      other_strides[d] = in ? c.other.strides[d] : 0;
      index_strides[d] = in ? c.index.strides[d] : 0;
    }
  }

  CULUA_HD void operator()(int64_t i) const {
    int64_t rest = i, od = 0, oo = 0, oi = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = rest / shape[d];
      const int64_t r = rest - q * shape[d];
      od += r * data_strides[d];
      oo += r * other_strides[d];
      oi += r * index_strides[d];
      rest = q;
    }
    const int64_t j = index[oi];
    int64_t k;
    if (j >= 1 && j <= axis_len) {
      k = j - 1;
    } else if (j < 0 && j >= -axis_len) {
      k = axis_len + j;
    } else {
      bad[1] = j;
      bad[0] = 1;
      return;
    }
    // data_strides holds 0 along the axis: the index decides the position there.
    od += k * axis_stride;
    if (mode == GatherCall::Mode::Gather) {
      other[oo] = data[od];
    } else if (mode == GatherCall::Mode::Scatter) {
      data[od] = other[oo];
    }
  }
};

// Runs f(GatherElement<W>) with W the word of the call's element size.
template <class F>
auto with_gather_element(const GatherCall& c, F&& f) {
  switch (itemsize(c.data.dtype)) {
    case 1:
      return f(GatherElement<uint8_t>(c));
    case 2:
      return f(GatherElement<uint16_t>(c));
    case 4:
      return f(GatherElement<uint32_t>(c));
    case 8:
      return f(GatherElement<uint64_t>(c));
    default:
      return f(GatherElement<Word16>(c));
  }
}

}  // namespace culua::detail::kernels
