// Reductions on the calling thread (host backend workers, and host arrays on either backend).
// The order is numpy's pairwise summation: ranges of up to kBlock elements are accumulated into
// eight interleaved partials, longer ranges are split in halves combined recursively, so rounding
// errors grow with log2(n) rather than n. Results are deterministic.
#include <cstdint>

#include "core/error.hpp"
#include "core/reduce_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce.cuh"

namespace culua::detail::kernels::host {

namespace {

using reduce::ReducePlan;

constexpr int64_t kBlock = 128;
// Output positions reduced together when the reduced axis is not the innermost one: their
// elements lie side by side in memory.
constexpr int kLanes = 16;

// Visits the elements [lo, hi) of a full reduction in row-major order: fn(index, element).
template <class T>
struct FullVisitor {
  const T* data;
  StridedView v;  // coalesced

  template <class Fn>
  void operator()(int64_t lo, int64_t hi, Fn&& fn) const {
    if (v.ndim <= 1) {
      const int64_t s = v.ndim == 1 ? v.strides[0] : 1;
      for (int64_t i = lo; i < hi; ++i) fn(i, data[i * s]);
      return;
    }
    // Odometer over the multi-index of `lo`.
    int64_t index[kMaxDims];
    int64_t rest = lo;
    int64_t off = 0;
    for (int d = v.ndim - 1; d >= 0; --d) {
      index[d] = rest % v.shape[d];
      rest /= v.shape[d];
      off += index[d] * v.strides[d];
    }
    const int last = v.ndim - 1;
    for (int64_t i = lo; i < hi; ++i) {
      fn(i, data[off]);
      off += v.strides[last];
      if (++index[last] < v.shape[last]) continue;
      for (int d = last; d > 0 && index[d] == v.shape[d]; --d) {
        off -= index[d] * v.strides[d];
        index[d] = 0;
        off += v.strides[d - 1];
        ++index[d - 1];
      }
    }
  }
};

// Visits the elements [lo, hi) of one output's reduced axis.
template <class T>
struct AxisVisitor {
  const T* base;
  int64_t rs;

  template <class Fn>
  void operator()(int64_t lo, int64_t hi, Fn&& fn) const {
    for (int64_t r = lo; r < hi; ++r) fn(r, base[r * rs]);
  }
};

template <class Op>
typename Op::Acc tree8(const Op& op, const typename Op::Acc* r) {
  return op.combine(op.combine(op.combine(r[0], r[1]), op.combine(r[2], r[3])),
                    op.combine(op.combine(r[4], r[5]), op.combine(r[6], r[7])));
}

template <class Op, class Visit>
typename Op::Acc pairwise(const Op& op, int64_t lo, int64_t hi, const Visit& visit) {
  using Acc = typename Op::Acc;
  const int64_t n = hi - lo;
  if (n <= kBlock) {
    Acc r[8];
    for (Acc& x : r) x = op.identity();
    int j = 0;
    visit(lo, hi, [&](int64_t i, const typename Op::In& x) {
      r[j] = op.combine(r[j], op.load(x, i));
      j = (j + 1) & 7;
    });
    return tree8(op, r);
  }
  int64_t half = n / 2;
  half -= half % 8;
  return op.combine(pairwise(op, lo, lo + half, visit), pairwise(op, lo + half, hi, visit));
}

// The pairwise order for `lanes` outputs at once (bases[w] + r * rs): one partial per output and
// block of rows, blocks combined by the same recursion.
template <class Op>
void pairwise_lanes(const Op& op, int64_t lo, int64_t hi, const typename Op::In* const* bases,
                    int lanes, int64_t rs, typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  const int64_t n = hi - lo;
  if (n <= kBlock) {
    for (int w = 0; w < lanes; ++w) out[w] = op.identity();
    for (int64_t r = lo; r < hi; ++r) {
      for (int w = 0; w < lanes; ++w) out[w] = op.combine(out[w], op.load(bases[w][r * rs], r));
    }
    return;
  }
  int64_t half = n / 2;
  half -= half % 8;
  Acc second[kLanes];
  pairwise_lanes(op, lo, lo + half, bases, lanes, rs, out);
  pairwise_lanes(op, lo + half, hi, bases, lanes, rs, second);
  for (int w = 0; w < lanes; ++w) out[w] = op.combine(out[w], second[w]);
}

template <class Op>
void run(const Op& op, const ReducePlan& p) {
  using T = typename Op::In;
  using Out = typename Op::Out;
  using Acc = typename Op::Acc;
  Out* out = static_cast<Out*>(p.out.data);
  if (p.full) {
    if (p.count == 0) {  // (the view may have a dimension of size 0 that the visitor divides by)
      *out = op.finalize(op.identity(), 0);
      return;
    }
    const FullVisitor<T> visit{static_cast<const T*>(p.in.data), p.in};
    *out = op.finalize(pairwise(op, 0, p.count, visit), p.count);
    return;
  }
  const Indexer in_idx(p.in_outer), out_idx(p.out);
  const T* in = static_cast<const T*>(p.in_outer.data);
  if (p.inner) {
    for (int64_t o = 0; o < p.M; ++o) {
      const AxisVisitor<T> visit{in + in_idx(o), p.rs};
      out[out_idx(o)] = op.finalize(pairwise(op, 0, p.R, visit), p.R);
    }
    return;
  }
  const T* bases[kLanes];
  Acc acc[kLanes];
  for (int64_t o0 = 0; o0 < p.M; o0 += kLanes) {
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, p.M - o0));
    for (int w = 0; w < lanes; ++w) bases[w] = in + in_idx(o0 + w);
    pairwise_lanes(op, 0, p.R, bases, lanes, p.rs, acc);
    for (int w = 0; w < lanes; ++w) out[out_idx(o0 + w)] = op.finalize(acc[w], p.R);
  }
}

}  // namespace

void reduce(const ReduceCall& c) {
  if (c.out.dtype != reduce_result_dtype(c.op, c.in.dtype)) {
    fail(ErrorKind::Value, "{} of {} gives {}, not {}", c.name(), name(c.in.dtype),
         name(reduce_result_dtype(c.op, c.in.dtype)), name(c.out.dtype));
  }
  const ReducePlan p = reduce::make_plan(c);
  if (!p.full && p.M == 0) return;
  reduce::dispatch_op(c.op, c.in.dtype, false, [&](const auto& op) {
    run(op, p);
    return true;
  });
}

}  // namespace culua::detail::kernels::host
