// Strided host loops row by row: views of one shape (coalesced together; view 0 the output) are
// walked along the output's innermost axis, a row at a time, the rows split across the host pool.
// When an input runs along another axis (a transposed operand), the walk goes tile by tile over
// that axis and the innermost one, so that every view moves a cache line at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "core/model/layout.hpp"
#include "kernels/host_pool.hpp"

namespace culua::detail::kernels::host {

// Rows of a tile: a tile of 32 x 32 elements of up to 16 bytes keeps every view's rows in L1.
inline constexpr int64_t kRowTile = 32;

// Calls row(offsets, j0, j1) for the elements j0 <= j < j1 of rows of the K views, where
// offsets[k] is the element offset of the row's first element (j = 0) in view k; element j of
// view k is at offsets[k] + j * v[k].strides[ndim - 1]. `bytes` is the memory traffic of one
// element of all views (for the pool's grain). Every element is visited once.
template <int K, class Row>
void for_each_row(const StridedView* v, int64_t bytes, const Row& row) {
  const int nd = v[0].ndim;
  if (nd == 0 || v[0].size == 0) {
    if (v[0].size != 0) {
      int64_t off[K] = {};
      row(off, int64_t{0}, int64_t{1});
    }
    return;
  }
  const int inner = nd - 1;
  // The first input that does not run along the innermost axis: its fastest axis, when that is
  // another one.
  int across = -1;
  for (int k = 1; k < K && across < 0; ++k) {
    int64_t best = std::llabs(v[k].strides[inner]);
    if (best <= 1) continue;
    for (int d = 0; d < inner; ++d) {
      const int64_t s = std::llabs(v[k].strides[d]);
      if (v[0].shape[d] > 1 && s != 0 && s < best) {
        best = s;
        across = d;
      }
    }
  }
  // The other axes, outermost first.
  int axes[kMaxDims];
  int count = 0;
  for (int d = 0; d < inner; ++d) {
    if (d != across) axes[count++] = d;
  }
  const auto offsets = [&](int64_t index, int64_t* off) {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int a = count - 1; a >= 0; --a) {
      const int d = axes[a];
      const int64_t q = index / v[0].shape[d];
      const int64_t r = index - q * v[0].shape[d];
      for (int k = 0; k < K; ++k) off[k] += r * v[k].strides[d];
      index = q;
    }
  };
  const int64_t n = v[0].shape[inner];
  const int64_t grain = grain_for(bytes);
  if (across < 0) {
    parallel_for(v[0].size / n, std::max<int64_t>(1, grain / n), [&](int64_t lo, int64_t hi) {
      int64_t off[K];
      for (int64_t r = lo; r < hi; ++r) {
        offsets(r, off);
        row(off, int64_t{0}, n);
      }
    });
    return;
  }
  const int64_t m = v[0].shape[across];
  const int64_t bands_per_outer = (m + kRowTile - 1) / kRowTile;
  const int64_t bands = v[0].size / (m * n) * bands_per_outer;
  parallel_for(bands, std::max<int64_t>(1, grain / (kRowTile * n)), [&](int64_t lo, int64_t hi) {
    int64_t base[K], off[K];
    for (int64_t b = lo; b < hi; ++b) {
      offsets(b / bands_per_outer, base);
      const int64_t i0 = b % bands_per_outer * kRowTile;
      const int64_t i1 = std::min(m, i0 + kRowTile);
      for (int64_t j0 = 0; j0 < n; j0 += kRowTile) {
        const int64_t j1 = std::min(n, j0 + kRowTile);
        for (int64_t i = i0; i < i1; ++i) {
          for (int k = 0; k < K; ++k) off[k] = base[k] + i * v[k].strides[across];
          row(off, j0, j1);
        }
      }
    }
  });
}

}  // namespace culua::detail::kernels::host
