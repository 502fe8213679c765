// The reductions' dispatch and the plan that the host and CUDA backends derive from a
// ReduceCall; the functors are in kernels/reduce_ops.cuh.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/backend/reduce_call.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"
#include "core/model/numeric.hpp"
#include "kernels/functors.cuh"
#include "kernels/reduce_ops.cuh"

namespace culua::detail::kernels::reduce {

// Calls f(functor) with the functor of `op` over elements of type T (reduce_functor), and returns
// what f returns. Ops that are not defined for the type (max of complex values) return
// `undefined`; the core rejects those calls before they reach a backend. constexpr:
// kernels/op_table_check.cpp checks every functor's result type against the op table at compile
// time.
template <class T, class Result, class F>
constexpr Result dispatch_op_typed(ReduceOp op, double correction, Result undefined, F&& f) {
  if constexpr (!kHasNan<T>) op = without_nan(op);
  switch (op) {
#define CULUA_REDUCE_CASE(e, ...)                                                \
  case ReduceOp::e: {                                                            \
    const auto fn = reduce_functor<ReduceOp::e, T>(correction);                  \
    if constexpr (std::is_same_v<std::decay_t<decltype(fn)>, UndefinedReduce>) { \
      return undefined;                                                          \
    } else {                                                                     \
      return f(fn);                                                              \
    }                                                                            \
  }
    CULUA_REDUCE_OPS(CULUA_REDUCE_CASE)
#undef CULUA_REDUCE_CASE
  }
  return undefined;
}

// The same over elements of the run-time dtype `in`.
template <class F, class Result>
Result dispatch_op(ReduceOp op, double correction, DType in, Result undefined, F&& f) {
  return dispatch(in, [&](auto tag) -> Result {
    using T = typename decltype(tag)::type;
    return dispatch_op_typed<T>(op, correction, undefined, f);
  });
}

// --- the plan --------------------------------------------------------------------------------

// What both backends compute from a ReduceCall. Full reductions reduce `in` (dimensions merged
// where possible) into one element at out.data. Axis reductions reduce, for each of the M output
// positions o, the R elements at in_outer offset(o) + r * rs into out offset(o).
struct ReducePlan {
  bool full = true;
  int64_t count = 0;  // elements reduced into each output
  StridedView in;     // full: the input
  // Axis reductions:
  int64_t M = 0;
  int64_t R = 0;
  int64_t rs = 0;
  StridedView in_outer;   // the output positions with the input's strides
  StridedView out;        // the output positions with the output's strides
  bool inner = false;     // the reduced stride is the smallest: threads of a warp walk along it
  double correction = 0;  // var, std
};

inline int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

// Orders the dimensions of the views by decreasing stride of the first one (stable), so that the
// memory order becomes the traversal order and coalesce() can merge them.
inline void sort_by_stride(StridedView* views, int count) {
  const int nd = views[0].ndim;
  for (int i = 1; i < nd; ++i) {
    for (int j = i; j > 0 && abs64(views[0].strides[j - 1]) < abs64(views[0].strides[j]); --j) {
      for (int v = 0; v < count; ++v) {
        std::swap(views[v].shape[j - 1], views[v].shape[j]);
        std::swap(views[v].strides[j - 1], views[v].strides[j]);
      }
    }
  }
}

inline bool order_free(ReduceOp op) {
  return op != ReduceOp::Argmax && op != ReduceOp::Argmin;
}

inline ReducePlan make_plan(const ReduceCall& c) {
  ReducePlan p;
  p.correction = c.correction;
  if (!c.full) {
    const int last = c.in.ndim - 1;
    p.R = c.in.shape[last];
    p.rs = c.in.strides[last];
    p.in_outer = c.in;
    p.in_outer.ndim = last;
    p.in_outer.shape[last] = 0;
    p.in_outer.strides[last] = 0;
    p.in_outer.size = c.out.size;
    p.out = c.out;
    p.M = c.out.size;
    if (p.M != 1) {
      p.full = false;
      p.count = p.R;
      StridedView v[2] = {p.in_outer, p.out};
      sort_by_stride(v, 2);
      coalesce(v, 2);
      p.in_outer = v[0];
      p.out = v[1];
      p.inner = p.in_outer.ndim == 0 ||
                abs64(p.rs) <= abs64(p.in_outer.strides[p.in_outer.ndim - 1]) || p.R == 1;
      return p;
    }
    // One output (every other dimension has size 1, so the view starts at its data): a full
    // reduction of the axis, whose indices are then the flat indices.
    StridedView line = c.in;
    line.ndim = 1;
    line.shape[0] = p.R;
    line.strides[0] = p.rs;
    line.size = p.R;
    p.in = line;
  } else {
    p.in = c.in;
  }
  p.full = true;
  p.out = c.out;
  if (order_free(c.op)) sort_by_stride(&p.in, 1);
  coalesce(&p.in, 1);
  p.count = p.in.size;
  return p;
}

}  // namespace culua::detail::kernels::reduce
