// Matrix products of device arrays: matmul (numpy semantics, batched and broadcast) and dot, run
// by cuBLAS on CUDA and OpenBLAS on the host backend.
#pragma once

#include <optional>

#include "core/array.hpp"
#include "core/runtime.hpp"
#include "core/scalar.hpp"

namespace culua::detail {

struct MatmulOptions {
  const Array* out = nullptr;  // contiguous, exactly the result's shape and dtype
  Scalar alpha = Scalar::integer(1);
  std::optional<Scalar> beta;  // needs out; result = alpha op(a) op(b) + beta out
  bool ta = false;             // transpose the last two dimensions of a (of b)
  bool tb = false;
  bool tf32 = false;  // f32 only: allow TF32 tensor cores (10-bit mantissas)
  Stream* stream = nullptr;
};

// numpy's matmul: a [..., M, K] @ b [..., K, N] -> [..., M, N], batch dimensions broadcast; a 1-D
// operand is a row (a) or column (b) vector whose dimension is removed from the result. Dtypes
// f32, f64, f16, bf16 (accumulated in f32), c64, c128; both operands of one dtype. Operands whose
// last two dimensions are row- or column-major are used in place (transposed views cost nothing);
// others are first copied to contiguous temporaries. Returns out when given.
Array matmul(Runtime& rt, const Array& a, const Array& b, const MatmulOptions& options = {});

// The dot product of two 1-D arrays of one dtype and length (no conjugation), as a 0-d device
// array (no synchronization), or written to `out` (one element of that dtype). Integer dtypes sum
// in 64-bit modular arithmetic and wrap to the dtype, as numpy does.
Array dot(Runtime& rt, const Array& x, const Array& y, const Array* out = nullptr,
          Stream* stream = nullptr);

}  // namespace culua::detail
