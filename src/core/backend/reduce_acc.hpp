// The size of a reduction's accumulator: the Acc of the functor that kernels/reduce_ops.cuh
// chooses for an op over elements of a dtype. The generated kernels of cu.fuse (src/fuse) keep
// one per block or row as their partial results and allocate them by it;
// kernels/op_table_check.cpp checks it against every functor at compile time.
#pragma once

#include <cstddef>

#include "core/backend/op_table.hpp"
#include "core/model/dtype.hpp"

namespace culua::detail {

constexpr size_t reduce_acc_bytes(ReduceOp op, DType in) {
  size_t item = 0;
  bool integral = false, small = false, complex = false;
  switch (in) {
    case DType::Bool:
    case DType::I8:
    case DType::U8:
      item = 1;
      integral = true;
      break;
    case DType::I16:
    case DType::U16:
      item = 2;
      integral = true;
      break;
    case DType::I32:
    case DType::U32:
      item = 4;
      integral = true;
      break;
    case DType::I64:
    case DType::U64:
      item = 8;
      integral = true;
      break;
    case DType::F16:
    case DType::BF16:
      item = 2;
      small = true;
      break;
    case DType::F32:
      item = 4;
      break;
    case DType::F64:
    case DType::C64:
      item = 8;
      complex = in == DType::C64;
      break;
    case DType::C128:
      item = 16;
      complex = true;
      break;
  }
  // The accumulator of sum and prod (integers wrap in 64 bits, small floats add in f32), of mean
  // (integers in f64), and the compared type of max and min (small types as 32-bit values).
  const size_t sum = integral ? 8 : small ? 4 : item;
  const size_t compare = small || item < 4 ? 4 : item;
  const auto round8 = [](size_t n) { return (n + 7) / 8 * 8; };
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
    case ReduceOp::Prod:
    case ReduceOp::NanSum:
    case ReduceOp::NanProd:
      return sum;
    case ReduceOp::NanMean:  // {sum, count}; c128 is 16-byte aligned
      return integral ? 8 : in == DType::C128 ? 32 : round8(sum) + 8;
    case ReduceOp::Norm:  // the sum of |x|^2 in the real type
      return integral ? 8 : small ? 4 : complex ? item / 2 : item;
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::NanMax:
    case ReduceOp::NanMin:
      return compare;
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:  // {value, index}
      return round8(compare) + 8;
    case ReduceOp::Var:
    case ReduceOp::Std:
    case ReduceOp::NanVar:
    case ReduceOp::NanStd: {
      // {mean, (mean_im,) m2, count} in f64 for f64, integers and complex values, else in f32.
      const size_t p = in == DType::F64 || integral || complex ? 8 : 4;
      return integral ? 24 : round8(p * (complex ? 3 : 2)) + 8;
    }
    case ReduceOp::Any:
    case ReduceOp::All:
      return 4;
  }
  return 0;
}

}  // namespace culua::detail
