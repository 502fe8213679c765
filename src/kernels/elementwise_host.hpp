// The elementwise kernels on the host: the same functors as on CUDA, over ranges of elements split
// across the host pool. Instantiated per compute type in elementwise_host_*.cpp, so that the work
// spreads over several compiler processes (as the CUDA side's elementwise_cuda_*.cu).
#pragma once

#include "core/backend/elementwise_call.hpp"
#include "kernels/elementwise.cuh"
#include "kernels/host_pool.hpp"
#include "kernels/host_rows.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::host {

namespace elementwise_detail {
struct Loop {
  int64_t grain;  // elements a range of the pool covers at least
  template <class F>
  int operator()(int64_t n, const F& f) const {
    if constexpr (requires { F::kChunked; }) {
      // Ranges start at multiples of kChunk, so a chunk (as one CUDA thread does) is never split.
      parallel_for(
          n, grain,
          [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; i += kChunk) f.chunk(i, hi);
          },
          kChunk);
    } else {
      parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) f(i);
      });
    }
    return 0;
  }
  template <class F>
  int fast(int64_t n, const F& f) const {
    return (*this)(n, f);
  }
  // The operation is picked once per call: the loop is that of the operation's own functor.
  template <class F>
  int fast_switch(int64_t n, const F& f) const {
    f.with_op([&](const auto& g) { (*this)(n, g); });
    return 0;
  }
  static constexpr bool kVector = false;
};
// Unary and binary ops whose array inputs are all of the compute type S and whose output is of the
// operation's type, not all contiguous (broadcast and transposed operands): row by row
// (host_rows.hpp), the operation chosen once per call rather than per element. False: another
// kind of call, left to the general functors.
template <class S>
bool strided(const ElementwiseCall& c) {
  using C = compute_t<S>;
  if (c.kind == ElementwiseCall::Kind::Where) return false;
  const int nin = c.kind == ElementwiseCall::Kind::Unary ? 1 : 2;
  StridedView views[3];
  int map[2] = {-1, -1};
  int count = 1;
  views[0] = c.out;
  for (int k = 0; k < nin; ++k) {
    if (c.in[k].is_scalar()) continue;
    if (c.in[k].view.dtype != dtype_of<S>()) return false;
    map[k] = count;
    views[count++] = c.in[k].view;
  }
  coalesce(views, count);
  bool contiguous = true;
  for (int k = 0; k < count; ++k) contiguous = contiguous && views[k].is_contiguous();
  if (contiguous || views[0].ndim == 0) return false;  // the fast path
  for (int d = 0; d < views[0].ndim; ++d) {
    if (views[0].strides[d] == 0 && views[0].shape[d] > 1) return false;  // written in order
  }
  // Slot 0 the output, slot k + 1 input k (a scalar: stride 0, no data).
  StridedView slots[3];
  slots[0] = views[0];
  for (int k = 0; k < nin; ++k) {
    if (map[k] >= 0) {
      slots[k + 1] = views[map[k]];
    } else {
      slots[k + 1] = views[0];
      slots[k + 1].data = nullptr;
      for (int d = 0; d < kMaxDims; ++d) slots[k + 1].strides[d] = 0;
    }
  }
  const int inner = views[0].ndim - 1;
  const int64_t so = slots[0].strides[inner];
  bool done = false;
  if (c.kind == ElementwiseCall::Kind::Binary) {
    const C av = scalar_value<S>(c.in[0].scalar), bv = scalar_value<S>(c.in[1].scalar);
    const auto* pa = static_cast<const S*>(slots[1].data);
    const auto* pb = static_cast<const S*>(slots[2].data);
    const int64_t sa = slots[1].strides[inner], sb = slots[2].strides[inner];
    const bool unit = so == 1 && (!pa || sa == 1) && (!pb || sb == 1);
    visit_binary_host(static_cast<BinaryOp>(c.op), [&](auto o) {
      using Op = decltype(o);
      if constexpr (op_valid<Op, C>) {
        using O = out_storage_t<S, decltype(Op::apply(C{}, C{}))>;
        if (slots[0].dtype != dtype_of<O>()) return;
        O* out = static_cast<O*>(slots[0].data);
        for_each_row<3>(slots, 3 * sizeof(S), [&](const int64_t* off, int64_t j0, int64_t j1) {
          O* r = out + off[0];
          const S* x = pa ? pa + off[1] : nullptr;
          const S* y = pb ? pb + off[2] : nullptr;
          if (unit && x && y) {  // rows side by side in every view: vectorized
            for (int64_t j = j0; j < j1; ++j) {
              r[j] = convert<O>(Op::apply(to_compute(x[j]), to_compute(y[j])));
            }
            return;
          }
          for (int64_t j = j0; j < j1; ++j) {
            const C xv = x ? to_compute(x[j * sa]) : av;
            const C yv = y ? to_compute(y[j * sb]) : bv;
            r[j * so] = convert<O>(Op::apply(xv, yv));
          }
        });
        done = true;
      }
    });
    return done;
  }
  const auto* pa = static_cast<const S*>(slots[1].data);
  if (!pa) return false;
  const int64_t sa = slots[1].strides[inner];
  visit_unary_host(static_cast<UnaryOp>(c.op), [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_valid<Op, C>) {
      using O = out_storage_t<S, decltype(Op::apply(C{}))>;
      if (slots[0].dtype != dtype_of<O>()) return;
      O* out = static_cast<O*>(slots[0].data);
      for_each_row<2>(slots, 2 * sizeof(S), [&](const int64_t* off, int64_t j0, int64_t j1) {
        O* r = out + off[0];
        const S* x = pa + off[1];
        for (int64_t j = j0; j < j1; ++j) r[j * so] = convert<O>(Op::apply(to_compute(x[j * sa])));
      });
      done = true;
    }
  });
  return done;
}

}  // namespace elementwise_detail

template <class S>
void elementwise_typed(const ElementwiseCall& c) {
  if (elementwise_detail::strided<S>(c)) return;
  // Bytes per element: the output and up to three inputs of the compute type.
  run_elementwise_typed<S>(
      c, elementwise_detail::Loop{grain_for(static_cast<int64_t>(4 * sizeof(S)))});
}

}  // namespace culua::detail::kernels::host
