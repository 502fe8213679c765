// Reductions on the host (host backend workers, and host arrays on either backend). The order is
// numpy's pairwise summation: ranges of up to kBlock elements are accumulated into eight
// interleaved partials (the last n % 8 elements added after their tree), longer ranges are split
// in halves combined recursively, so rounding errors grow with log2(n) rather than n. The recursion
// is cut into subranges of at most kLeaf elements (a fixed size, not the pool's), reduced in
// parallel on the host pool and combined in the recursion's order: results are those of the serial
// recursion, whatever the pool's size.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/backend/reduce_call.hpp"
#include "core/base/error.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce.cuh"

namespace culua::detail::kernels::host {

namespace {

using reduce::ReducePlan;

constexpr int64_t kBlock = 128;
// The subranges of the recursion reduced as one piece of parallel work (a multiple of kBlock).
constexpr int64_t kLeaf = 16 * 1024;
// Output positions reduced together when the reduced axis is not the innermost one: their
// elements lie side by side in memory.
constexpr int kLanes = 32;
// Subtrees of the recursion of at most kSpan elements are reduced one after another, their
// leaves in parallel: the partials kept at a time stay a few thousand however long the reduction
// (a broadcast view of 2^59 elements needs no memory of its size).
constexpr int64_t kSpan = kLeaf * 4096;
// The most partials kept at once (times the accumulator's size: 2 MiB for the largest).
constexpr int64_t kMaxPartials = int64_t{1} << 16;

// Visits the elements [lo, hi) of a full reduction in row-major order: fn(index, element).
template <class T>
struct FullVisitor {
  const T* data;
  StridedView v;  // coalesced

  // The elements when they lie side by side (else null).
  const T* contiguous() const {
    return v.ndim == 0 || (v.ndim == 1 && v.strides[0] == 1) ? data : nullptr;
  }

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

  const T* contiguous() const { return rs == 1 ? base : nullptr; }

  template <class Fn>
  void operator()(int64_t lo, int64_t hi, Fn&& fn) const {
    for (int64_t r = lo; r < hi; ++r) fn(r, base[r * rs]);
  }
};

// Bool elements read as bytes, any nonzero byte true (as numpy reads them): an array whose
// elements were never computed (cu.empty, or the output of an operation recorded in a graph and
// not replayed yet) may hold any byte, and loading one other than 0 or 1 as a C++ bool is
// undefined (fuzz seed 5096: a graph-captured comparison's output reduced by mean).
template <class Op>
struct BoolAsBytes : Op {
  using In = uint8_t;
  typename Op::Acc load(uint8_t x, int64_t i) const { return Op::load(x != 0, i); }
};

template <class Op>
auto bool_as_bytes(const Op& op) {
  if constexpr (std::is_same_v<typename Op::In, bool>) {
    return BoolAsBytes<Op>{op};
  } else {
    return op;
  }
}

template <class Op>
typename Op::Acc tree8(const Op& op, const typename Op::Acc* r) {
  return op.combine(op.combine(op.combine(r[0], r[1]), op.combine(r[2], r[3])),
                    op.combine(op.combine(r[4], r[5]), op.combine(r[6], r[7])));
}

// B blocks of the recursion side by side: [lo + b * len, lo + (b + 1) * len) for b < B, len a
// multiple of 8 and at most kBlock. Each block's arithmetic is the one of the loop below (eight
// partials, then tree8), so the results are the same bits; interleaving them gives the CPU B
// independent chains of additions where one block alone waits on each addition's latency.
template <int B, class Op>
void blocks_side_by_side(const Op& op, const typename Op::In* p, int64_t lo, int64_t len,
                         typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  Acc r[B][8];
  for (auto& block : r) {
    for (Acc& x : block) x = op.identity();
  }
  for (int64_t i = 0; i < len; i += 8) {
    for (int b = 0; b < B; ++b) {
      const int64_t at = lo + b * len + i;
      for (int k = 0; k < 8; ++k) r[b][k] = op.combine(r[b][k], op.load(p[at + k], at + k));
    }
  }
  for (int b = 0; b < B; ++b) out[b] = tree8(op, r[b]);
}

template <class Op, class Visit>
typename Op::Acc pairwise(const Op& op, int64_t lo, int64_t hi, const Visit& visit) {
  using Acc = typename Op::Acc;
  const int64_t n = hi - lo;
  if (n > kBlock && n <= 4 * kBlock) {
    // The recursion's split of n into halves (multiples of 8) gives four equal blocks when n is a
    // multiple of 32 above 2 * kBlock, two when it is a multiple of 16 up to 2 * kBlock.
    if (const typename Op::In* p = visit.contiguous()) {
      if (n > 2 * kBlock && n % 32 == 0) {
        Acc b[4];
        blocks_side_by_side<4>(op, p, lo, n / 4, b);
        return op.combine(op.combine(b[0], b[1]), op.combine(b[2], b[3]));
      }
      if (n <= 2 * kBlock && n % 16 == 0) {
        Acc b[2];
        blocks_side_by_side<2>(op, p, lo, n / 2, b);
        return op.combine(b[0], b[1]);
      }
    }
  }
  if (n <= kBlock) {
    // numpy's pairwise_sum: the elements up to the last multiple of 8 into eight interleaved
    // partials, their tree, then the other n % 8 elements one after another (fewer than 8
    // elements: one after another). Full sums of up to 8192 real elements are numpy's bits (numpy
    // adds longer ones as 8192-element chunks of its buffer, one after another).
    Acc r[8];
    for (Acc& x : r) x = op.identity();
    const int64_t body = hi - n % 8;
    if (const typename Op::In* p = visit.contiguous()) {
      // Eight elements at a time: the compiler keeps the partials in a vector.
      int64_t i = lo;
      for (; i < body; i += 8) {
        for (int k = 0; k < 8; ++k) r[k] = op.combine(r[k], op.load(p[i + k], i + k));
      }
      Acc res = tree8(op, r);
      for (; i < hi; ++i) res = op.combine(res, op.load(p[i], i));
      return res;
    }
    int j = 0;
    Acc res = op.identity();
    visit(lo, hi, [&](int64_t i, const typename Op::In& x) {
      if (i < body) {
        r[j] = op.combine(r[j], op.load(x, i));
        j = (j + 1) & 7;
        return;
      }
      if (i == body) res = tree8(op, r);
      res = op.combine(res, op.load(x, i));
    });
    return body == hi ? tree8(op, r) : res;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return op.combine(pairwise(op, lo, lo + half, visit), pairwise(op, lo + half, hi, visit));
}

// The pairwise order for `lanes` outputs at once (bases[w] + r * rs): one partial per output and
// block of rows, blocks combined by the same recursion.
// side_by_side: kLanes outputs whose elements are adjacent (bases[w] = bases[0] + w), read as one
// run per row (the compiler keeps the partials in vectors).
template <class Op>
void pairwise_lanes(const Op& op, int64_t lo, int64_t hi, const typename Op::In* const* bases,
                    int lanes, int64_t rs, bool side_by_side, typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  const int64_t n = hi - lo;
  if (n <= kBlock) {
    for (int w = 0; w < lanes; ++w) out[w] = op.identity();
    if (side_by_side) {
      for (int64_t r = lo; r < hi; ++r) {
        const typename Op::In* row = bases[0] + r * rs;
        for (int w = 0; w < kLanes; ++w) out[w] = op.combine(out[w], op.load(row[w], r));
      }
      return;
    }
    for (int64_t r = lo; r < hi; ++r) {
      for (int w = 0; w < lanes; ++w) out[w] = op.combine(out[w], op.load(bases[w][r * rs], r));
    }
    return;
  }
  int64_t half = n / 2;
  half -= half % 8;
  Acc second[kLanes];
  pairwise_lanes(op, lo, lo + half, bases, lanes, rs, side_by_side, out);
  pairwise_lanes(op, lo + half, hi, bases, lanes, rs, side_by_side, second);
  for (int w = 0; w < lanes; ++w) out[w] = op.combine(out[w], second[w]);
}

// The subranges of at most kLeaf elements the pairwise recursion over [lo, hi) reaches, in order.
void leaves(int64_t lo, int64_t hi, std::vector<int64_t>& starts) {
  if (hi - lo <= kLeaf) {
    starts.push_back(lo);
    return;
  }
  int64_t half = (hi - lo) / 2;
  half -= half % 8;
  leaves(lo, lo + half, starts);
  leaves(lo + half, hi, starts);
}

// The recursion over [lo, hi) with the results of its leaves, leaf(0), leaf(1), ... in order.
template <class Op, class Leaf>
typename Op::Acc combine_leaves(const Op& op, int64_t lo, int64_t hi, const Leaf& leaf,
                                size_t& next) {
  if (hi - lo <= kLeaf) return leaf(next++);
  int64_t half = (hi - lo) / 2;
  half -= half % 8;
  const auto first = combine_leaves(op, lo, lo + half, leaf, next);
  return op.combine(first, combine_leaves(op, lo + half, hi, leaf, next));
}

// The recursion over [lo, hi) for `width` reductions side by side: leaf(a, b, acc) reduces the
// elements [a, b) of a leaf into acc[0, width); the result lands in out[0, width). Subtrees of
// at most kSpan / width elements are reduced with their leaves in parallel, combined in the
// recursion's order: the same bits as the serial recursion, with at most ~2 * kSpan / kLeaf
// partials at a time.
template <class Op, class Leaf>
void reduce_span(const Op& op, int64_t lo, int64_t hi, int width, int64_t grain, const Leaf& leaf,
                 typename Op::Acc* out) {
  using Acc = typename Op::Acc;
  if (hi - lo > std::max<int64_t>(kLeaf, kSpan / width)) {
    int64_t half = (hi - lo) / 2;
    half -= half % 8;
    std::vector<Acc> second(static_cast<size_t>(width));
    reduce_span(op, lo, lo + half, width, grain, leaf, out);
    check_stop();
    reduce_span(op, lo + half, hi, width, grain, leaf, second.data());
    for (int k = 0; k < width; ++k) out[k] = op.combine(out[k], second[static_cast<size_t>(k)]);
    return;
  }
  std::vector<int64_t> starts;
  leaves(lo, hi, starts);
  const auto nl = static_cast<int64_t>(starts.size());
  std::vector<Acc> part(static_cast<size_t>(nl * width), op.identity());
  parallel_for(nl, grain, [&](int64_t a, int64_t b) {
    for (int64_t l = a; l < b; ++l) {
      const int64_t end = l + 1 < nl ? starts[static_cast<size_t>(l + 1)] : hi;
      leaf(starts[static_cast<size_t>(l)], end, part.data() + l * width);
    }
  });
  for (int k = 0; k < width; ++k) {
    size_t next = 0;
    out[k] = combine_leaves(
        op, lo, hi, [&](size_t l) { return part[l * static_cast<size_t>(width) + k]; }, next);
  }
}

template <class Op>
void run(const Op& op, const ReducePlan& p) {
  using T = typename Op::In;
  using Out = typename Op::Out;
  using Acc = typename Op::Acc;
  Out* out = static_cast<Out*>(p.out.data);
  const int64_t length = p.full ? p.count : p.R;  // of each reduction
  // Pieces of parallel work: (reduction, leaf) pairs, at least a grain's worth of elements each.
  const int64_t piece = std::min(length, kLeaf);
  const int64_t grain = std::max<int64_t>(1, grain_for(sizeof(T)) / std::max<int64_t>(1, piece));
  if (p.full) {
    if (p.count == 0) {  // (the view may have a dimension of size 0 that the visitor divides by)
      *out = op.finalize(op.identity(), 0);
      return;
    }
    const FullVisitor<T> visit{static_cast<const T*>(p.in.data), p.in};
    Acc acc;
    reduce_span(
        op, 0, length, 1, grain,
        [&](int64_t a, int64_t b, Acc* r) { *r = pairwise(op, a, b, visit); }, &acc);
    *out = op.finalize(acc, p.count);
    return;
  }
  const Indexer in_idx(p.in_outer), out_idx(p.out);
  const T* in = static_cast<const T*>(p.in_outer.data);
  // The leaves of one reduction, when it is short enough to list them (else each output, or
  // group of outputs, is reduced by reduce_span on its own: it has leaves enough to share).
  std::vector<int64_t> starts;
  if (length <= kSpan) leaves(0, length, starts);
  const auto nl = static_cast<int64_t>(starts.size());
  const auto end = [&](int64_t l) {
    return l + 1 < nl ? starts[static_cast<size_t>(l + 1)] : length;
  };
  if (p.inner && nl == 1) {  // each output one leaf: no partials to keep
    parallel_for(p.M, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        const AxisVisitor<T> visit{in + in_idx(o), p.rs};
        out[out_idx(o)] = op.finalize(pairwise(op, 0, p.R, visit), p.R);
      }
    });
    return;
  }
  if (p.inner && (nl == 0 || 2 * nl > kMaxPartials)) {  // long reductions, one at a time
    for (int64_t o = 0; o < p.M; ++o) {
      const AxisVisitor<T> visit{in + in_idx(o), p.rs};
      Acc acc;
      reduce_span(
          op, 0, p.R, 1, grain,
          [&](int64_t a, int64_t b, Acc* r) { *r = pairwise(op, a, b, visit); }, &acc);
      out[out_idx(o)] = op.finalize(acc, p.R);
    }
    return;
  }
  if (p.inner) {  // partials: nl per output, for as many outputs at a time as kMaxPartials allows
    const int64_t block = std::max<int64_t>(1, kMaxPartials / nl);
    std::vector<Acc> part(static_cast<size_t>(std::min(p.M, block) * nl));
    for (int64_t o0 = 0; o0 < p.M; o0 += block) {
      const int64_t m = std::min(block, p.M - o0);
      parallel_for(m * nl, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t w = lo; w < hi; ++w) {
          const int64_t o = o0 + w / nl, l = w % nl;
          const AxisVisitor<T> visit{in + in_idx(o), p.rs};
          part[static_cast<size_t>(w)] =
              pairwise(op, starts[static_cast<size_t>(l)], end(l), visit);
        }
      });
      parallel_for(m, std::max<int64_t>(1, 4096 / nl), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
          size_t next = 0;
          const Acc* first = part.data() + i * nl;
          out[out_idx(o0 + i)] =
              op.finalize(combine_leaves(
                              op, 0, length, [&](size_t l) { return first[l]; }, next),
                          p.R);
        }
      });
    }
    return;
  }
  // kLanes outputs at a time, their elements side by side.
  const int64_t groups = (p.M + kLanes - 1) / kLanes;
  // Reduces the rows [a, b) of group g into acc[0, lanes).
  const auto lanes_rows = [&](int64_t g, int64_t a, int64_t b, Acc* acc) {
    const T* bases[kLanes];
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, p.M - g * kLanes));
    bool side_by_side = lanes == kLanes;
    for (int k = 0; k < lanes; ++k) {
      bases[k] = in + in_idx(g * kLanes + k);
      side_by_side = side_by_side && bases[k] == bases[0] + k;
    }
    pairwise_lanes(op, a, b, bases, lanes, p.rs, side_by_side, acc);
    return lanes;
  };
  if (nl == 1) {  // each group one leaf: no partials to keep
    parallel_for(groups, std::max<int64_t>(1, grain / kLanes), [&](int64_t lo, int64_t hi) {
      Acc acc[kLanes];
      for (int64_t g = lo; g < hi; ++g) {
        const int lanes = lanes_rows(g, 0, length, acc);
        for (int k = 0; k < lanes; ++k) out[out_idx(g * kLanes + k)] = op.finalize(acc[k], p.R);
      }
    });
    return;
  }
  if (nl == 0 || 2 * nl * kLanes > kMaxPartials) {  // long reductions, a group at a time
    Acc acc[kLanes];
    for (int64_t g = 0; g < groups; ++g) {
      const int lanes = static_cast<int>(std::min<int64_t>(kLanes, p.M - g * kLanes));
      reduce_span(
          op, 0, p.R, kLanes, std::max<int64_t>(1, grain / kLanes),
          [&](int64_t a, int64_t b, Acc* r) { lanes_rows(g, a, b, r); }, acc);
      for (int k = 0; k < lanes; ++k) out[out_idx(g * kLanes + k)] = op.finalize(acc[k], p.R);
    }
    return;
  }
  const int64_t block = std::max<int64_t>(1, kMaxPartials / (nl * kLanes));
  std::vector<Acc> part(static_cast<size_t>(std::min(groups, block) * nl * kLanes));
  for (int64_t g0 = 0; g0 < groups; g0 += block) {
    const int64_t m = std::min(block, groups - g0);
    parallel_for(m * nl, std::max<int64_t>(1, grain / kLanes), [&](int64_t lo, int64_t hi) {
      for (int64_t w = lo; w < hi; ++w) {
        const int64_t l = w % nl;
        lanes_rows(g0 + w / nl, starts[static_cast<size_t>(l)], end(l), part.data() + w * kLanes);
      }
    });
    parallel_for(m, std::max<int64_t>(1, 4096 / (nl * kLanes)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t g = g0 + i;
        const int lanes = static_cast<int>(std::min<int64_t>(kLanes, p.M - g * kLanes));
        const Acc* first = part.data() + i * nl * kLanes;
        for (int k = 0; k < lanes; ++k) {
          size_t next = 0;
          const Acc acc = combine_leaves(
              op, 0, length, [&](size_t l) { return first[l * kLanes + static_cast<size_t>(k)]; },
              next);
          out[out_idx(g * kLanes + k)] = op.finalize(acc, p.R);
        }
      }
    });
  }
}

// The most bytes run() keeps at once for the plan, with accumulators of `acc` bytes: the starts
// of the leaves, the partials (at most kMaxPartials, or one per leaf of a subtree of reduce_span),
// and reduce_span's row of `width` accumulators per level of its recursion (64 at most).
size_t scratch_of(const ReducePlan& p, int64_t acc) {
  const int64_t length = p.full ? p.count : p.R;
  if (length <= kLeaf) return 0;  // one leaf a reduction: no partials (a few words on the stack)
  // Halving stops at kLeaf and keeps multiples of 8: every leaf is longer than kLeaf / 2 - 8.
  const auto leaves_in = [](int64_t n) { return 2 * (n / kLeaf) + 2; };
  const auto span = [&](int64_t width) {
    const int64_t most = std::max<int64_t>(kLeaf, kSpan / width);
    return leaves_in(std::min(length, most)) * (8 + width * acc) + 64 * width * acc;
  };
  if (p.full) return static_cast<size_t>(span(1));
  const int64_t outputs = p.inner ? p.M : ((p.M + kLanes - 1) / kLanes) * kLanes;
  const int64_t nl = length <= kSpan ? leaves_in(length) : 0;
  const int64_t partials = nl == 0 ? 0 : std::min(kMaxPartials, outputs * nl) * acc;
  return static_cast<size_t>(nl * 8 + std::max(span(p.inner ? 1 : kLanes), partials));
}

}  // namespace

size_t reduce_scratch_bytes(const ReduceCall& c) {
  if (c.out.dtype != reduce_result_dtype(c.op, c.in.dtype)) return 0;  // reduce() refuses it
  const ReducePlan p = reduce::make_plan(c);
  if (!p.full && p.M == 0) return 0;
  int64_t acc = 0;
  reduce::dispatch_op(c.op, c.correction, c.in.dtype, false, [&](const auto& op) {
    acc = static_cast<int64_t>(sizeof(typename std::decay_t<decltype(bool_as_bytes(op))>::Acc));
    return true;
  });
  return scratch_of(p, acc);
}

void reduce(const ReduceCall& c) {
  if (c.out.dtype != reduce_result_dtype(c.op, c.in.dtype)) {
    fail(ErrorKind::Value, "{} of {} gives {}, not {}", c.name(), name(c.in.dtype),
         name(reduce_result_dtype(c.op, c.in.dtype)), name(c.out.dtype));
  }
  const ReducePlan p = reduce::make_plan(c);
  if (!p.full && p.M == 0) return;
  reduce::dispatch_op(c.op, c.correction, c.in.dtype, false, [&](const auto& op) {
    run(bool_as_bytes(op), p);
    return true;
  });
}

}  // namespace culua::detail::kernels::host
