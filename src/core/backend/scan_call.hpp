// The description of one scan (cumulative sum or product along an axis), shared by the core and
// both backends (kernels/scan_host.cpp, kernels/scan_cuda.cu).
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

enum class ScanOp : uint8_t { Sum, Prod };

// The result dtype of a scan over elements of type `in`: sum's (bool and integers -> i64,
// wrapping; floats and complex types keep theirs).
DType scan_result_dtype(ScanOp op, DType in);

// `in` has the outer dimensions (one scan each, M of them) followed by the scanned axis (R
// elements); `out` has the same outer dimensions followed by the scanned axis of R elements, or
// R + 1 with include_initial (then out[..., 0] is the identity, 0 or 1, and out[..., r + 1] the
// scan of in[..., 0..r]). out has dtype scan_result_dtype(op, in.dtype) and does not overlap in.
// Integers accumulate in 64 bits (wrapping), f16/bf16 in f32, other types in their own.
struct ScanCall {
  ScanOp op = ScanOp::Sum;
  StridedView in;
  StridedView out;
  bool include_initial = false;

  const char* name() const { return op == ScanOp::Sum ? "cumulative_sum" : "cumulative_prod"; }
};

}  // namespace culua::detail
