// Matrix products of device arrays: matmul (numpy semantics, batched and broadcast) and dot, run
// by cuBLAS on CUDA and OpenBLAS on the host backend.
#pragma once

#include <optional>

#include "core/model/array.hpp"
#include "core/model/scalar.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

struct MatmulOptions {
  // Contiguous, exactly the result's shape; a dtype the result can be cast to under numpy's
  // same_kind rule (another dtype receives the result converted).
  const Array* out = nullptr;
  Scalar alpha = Scalar::integer(1);  // integer results: an integer the result dtype holds
  std::optional<Scalar> beta;         // needs out; result = alpha op(a) op(b) + beta out
  bool ta = false;                    // transpose the last two dimensions of a (of b)
  bool tb = false;
  bool tf32 = false;  // f32 only: allow TF32 tensor cores (10-bit mantissas)
  Stream* stream = nullptr;
};

// numpy's matmul: a [..., M, K] @ b [..., K, N] -> [..., M, N], batch dimensions broadcast; a 1-D
// operand is a row (a) or column (b) vector whose dimension is removed from the result. Operands of
// two dtypes compute in the type the elementwise operations promote to (converted first). Every
// dtype: f32, f64, c64, c128 by BLAS, f16 and bf16 accumulated in f32; integers by culua's own
// kernels, wrapping in the result dtype as numpy does (alpha and beta must be integers the dtype
// holds); bool is the or of ands (no alpha or beta). Operands whose last two dimensions are row- or
// column-major are used in place (transposed views cost nothing); others are first copied to
// contiguous temporaries. Returns out when given.
Array matmul(Runtime& rt, const Array& a, const Array& b, const MatmulOptions& options = {});

// The dot product of two 1-D arrays of one dtype and length (no conjugation), as a 0-d device
// array (no synchronization), or written to `out` (one element of that dtype). Integer dtypes sum
// in 64-bit modular arithmetic and wrap to the dtype, as numpy does.
Array dot(Runtime& rt, const Array& x, const Array& y, const Array* out = nullptr,
          Stream* stream = nullptr);

}  // namespace culua::detail
