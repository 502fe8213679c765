// Scans on the host: each output row (the scanned axis of one outer position) is scanned serially
// in index order, as numpy's add.accumulate; rows are spread over the host pool. A single long row
// (fewer rows than threads) is cut into one piece per thread: the pieces' totals are computed in
// parallel, scanned, and each piece is scanned again from its offset (the order of additions then
// differs from the serial one by where the pieces meet).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/backend/scan_call.hpp"
#include "core/base/error.hpp"
#include "kernels/functors.cuh"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/kernels.hpp"
#include "kernels/scan.cuh"

namespace culua::detail::kernels::host {

namespace {

constexpr int64_t kSplitRow = int64_t{1} << 16;  // rows at least this long may be split

template <class F>
void run(const F& f, const ScanCall& c) {
  using T = typename F::In;
  using Acc = typename F::Acc;
  using Out = typename F::Out;
  const int last = c.in.ndim - 1;
  const int64_t R = c.in.shape[last];
  const int64_t rs = c.in.strides[last];
  const int64_t os = c.out.strides[last];
  const int init = c.include_initial ? 1 : 0;
  StridedView in_outer = c.in, out_outer = c.out;
  in_outer.ndim = out_outer.ndim = last;
  int64_t M = 1;
  for (int d = 0; d < last; ++d) M *= c.in.shape[d];
  if (M == 0) return;
  const Indexer in_idx(in_outer), out_idx(out_outer);
  const T* in = static_cast<const T*>(c.in.data);
  Out* out = static_cast<Out*>(c.out.data);

  // Scans in[lo, hi) of one row from `acc`, writing out[r + init]; returns the total. As numpy's
  // accumulate, a row starts from its first element (not from the identity: -0.0 stays -0.0).
  const auto scan_range = [&](const T* row, Out* orow, int64_t lo, int64_t hi, Acc acc,
                              bool fresh) {
    for (int64_t r = lo; r < hi; ++r) {
      const Acc x = f.load(row[r * rs]);
      acc = fresh ? x : f(acc, x);
      fresh = false;
      orow[(r + init) * os] = f.finalize(acc);
    }
    return acc;
  };
  const int threads = pool_threads();
  if (M >= threads || R < kSplitRow) {
    const int64_t grain =
        std::max<int64_t>(1, grain_for(static_cast<int64_t>(sizeof(T))) / std::max<int64_t>(R, 1));
    parallel_for(M, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t m = lo; m < hi; ++m) {
        Out* orow = out + out_idx(m);
        if (init) orow[0] = f.finalize(f.identity());
        scan_range(in + in_idx(m), orow, 0, R, f.identity(), true);
      }
    });
    return;
  }
  const int64_t pieces = threads;
  const int64_t len = (R + pieces - 1) / pieces;
  std::vector<Acc> totals(static_cast<size_t>(pieces));
  for (int64_t m = 0; m < M; ++m) {
    const T* row = in + in_idx(m);
    Out* orow = out + out_idx(m);
    if (init) orow[0] = f.finalize(f.identity());
    parallel_for(pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        Acc acc = f.identity();
        for (int64_t r = p * len; r < std::min(R, (p + 1) * len); ++r)
          acc = f(acc, f.load(row[r * rs]));
        totals[static_cast<size_t>(p)] = acc;
      }
    });
    Acc offset = f.identity();
    for (int64_t p = 0; p < pieces; ++p) {
      const Acc t = totals[static_cast<size_t>(p)];
      totals[static_cast<size_t>(p)] = offset;  // exclusive
      offset = f(offset, t);
    }
    parallel_for(pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        scan_range(row, orow, p * len, std::min(R, (p + 1) * len), totals[static_cast<size_t>(p)],
                   p == 0);
      }
    });
  }
}

}  // namespace

size_t scan_scratch_bytes(const ScanCall& c) {
  // run(): one accumulator (16 bytes at most) per thread, for rows split among the threads.
  const int last = c.in.ndim - 1;
  if (last < 0) return 0;
  int64_t M = 1;
  for (int d = 0; d < last; ++d) M *= c.in.shape[d];
  const int threads = pool_threads();
  if (M == 0 || M >= threads || c.in.shape[last] < kSplitRow) return 0;
  return static_cast<size_t>(threads) * 16;
}

void scan(const ScanCall& c) {
  if (c.out.dtype != scan_result_dtype(c.op, c.in.dtype)) {
    fail(ErrorKind::Value, "{} of {} gives {}, not {}", c.name(), name(c.in.dtype),
         name(scan_result_dtype(c.op, c.in.dtype)), name(c.out.dtype));
  }
  dispatch(c.in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (c.op == ScanOp::Prod) {
      run(scan::ScanFn<T, true>{}, c);
    } else {
      run(scan::ScanFn<T, false>{}, c);
    }
    return 0;
  });
}

}  // namespace culua::detail::kernels::host
