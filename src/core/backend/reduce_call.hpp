// The description of one reduction kernel launch (sum, mean, max, min, prod, norm, argmax,
// argmin, var, std, any, all and the NaN-skipping nan* variants), shared by the core and both
// backends.
#pragma once

#include <cstdint>

#include "core/backend/op_table.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

// ReduceOp, its names and its type rules: the reduction rows of core/backend/op_table.hpp.

// The op that `op` is for inputs without NaN (integers, bools): nansum -> sum, ...; else `op`.
constexpr ReduceOp without_nan(ReduceOp op) {
  switch (op) {
    case ReduceOp::NanSum:
      return ReduceOp::Sum;
    case ReduceOp::NanMean:
      return ReduceOp::Mean;
    case ReduceOp::NanMax:
      return ReduceOp::Max;
    case ReduceOp::NanMin:
      return ReduceOp::Min;
    case ReduceOp::NanProd:
      return ReduceOp::Prod;
    case ReduceOp::NanVar:
      return ReduceOp::Var;
    case ReduceOp::NanStd:
      return ReduceOp::Std;
    default:
      return op;
  }
}

const char* op_name(ReduceOp op);  // "sum", "argmax", ...

// The dtype of the result of `op` over elements of type `in` (numpy's rules):
//   sum, prod: bool and integers -> i64 (wrapping); floats and complex types keep their type.
//   mean:      bool and integers -> f64; others keep their type.
//   max, min:  the input type.
//   norm:      bool and integers -> f64; f16/bf16 keep their type; f32 and c64 -> f32; f64 and
//              c128 -> f64.
//   argmax, argmin: i64 (1-based indices).
//   var, std:  bool and integers -> f64; complex -> its real type; floats keep their type.
//   any, all:  bool.
//   nan* ops:  those of the op without nan.
// Throws Error(Type) for complex inputs of max, min, argmax, argmin, nanmax and nanmin.
DType reduce_result_dtype(ReduceOp op, DType in);

// Full reductions (`full`): `in` is the whole input (any strided view, reduced in row-major order
// of its indices) and `out` is a 0-d view. Axis reductions: `in` has the dimensions of `out` (the
// output positions, in the same order) followed by one last dimension, the reduced axis.
// `out` has the dtype reduce_result_dtype(op, in.dtype) and must not overlap `in`.
struct ReduceCall {
  ReduceOp op = ReduceOp::Sum;
  bool full = true;
  StridedView in;
  StridedView out;
  double correction = 0;  // var, std: the divisor is max(n - correction, 0)

  const char* name() const { return op_name(op); }
};

}  // namespace culua::detail
