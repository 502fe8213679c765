// The description of one reduction kernel launch (sum, mean, max, min, prod, norm, argmax,
// argmin), shared by the core and both backends.
#pragma once

#include <cstdint>

#include "core/dtype.hpp"
#include "core/layout.hpp"

namespace culua::detail {

enum class ReduceOp : uint8_t { Sum, Mean, Max, Min, Prod, Norm, Argmax, Argmin };
inline constexpr int kNumReduceOps = 8;

const char* op_name(ReduceOp op);  // "sum", "argmax", ...

// The dtype of the result of `op` over elements of type `in` (numpy's rules):
//   sum, prod: bool and integers -> i64 (wrapping); floats and complex types keep their type.
//   mean:      bool and integers -> f64; others keep their type.
//   max, min:  the input type.
//   norm:      bool and integers -> f64; f16/bf16 keep their type; f32 and c64 -> f32; f64 and
//              c128 -> f64.
//   argmax, argmin: i64 (1-based indices).
// Throws Error(Type) for complex inputs of max, min, argmax and argmin.
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

  const char* name() const { return op_name(op); }
};

}  // namespace culua::detail
