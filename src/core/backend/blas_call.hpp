// The descriptions of matrix products for the backends (cuBLAS, OpenBLAS), already in BLAS terms:
// column-major matrices with leading dimensions and transpose flags. core/ops/linalg.cpp builds
// them from row-major arrays (C = A B is computed as C^T = B^T A^T, without copies).
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

// One column-major operand of a gemm: op(X) is X or X^T, X at data + a batch offset.
struct GemmOperand {
  void* data = nullptr;
  bool trans = false;
  int64_t ld = 1;
  int64_t batch_strides[kMaxDims] = {};  // in elements, one per batch dimension of the call
};

// C (m x n) = alpha op(A) op(B) + beta C for every batch index. The last batch dimension is one
// strided-batched call (a stride of 0 broadcasts an operand); the others are looped over.
struct MatmulCall {
  DType dtype = DType::F32;  // of A, B and C; f16/bf16 accumulate in f32, integers wrap
  bool tf32 = false;         // f32 only: allow TF32 tensor cores
  int64_t m = 0, n = 0, k = 0;
  GemmOperand a, b, c;  // c: never transposed
  int batch_ndim = 0;
  int64_t batch_shape[kMaxDims] = {};
  double alpha[2] = {1, 0};  // real and imaginary parts
  double beta[2] = {0, 0};
  // Integer dtypes: alpha and beta as residues modulo 2^64 (integers the dtype holds exactly;
  // C is read only when int_beta != 0). bool takes neither.
  uint64_t int_alpha = 1;
  uint64_t int_beta = 0;
};

// Calls f(offset_a, offset_b, offset_c, count, stride_a, stride_b, stride_c) (in elements) for each
// strided batch of the call, in order.
template <class F>
void for_each_gemm_batch(const MatmulCall& c, F&& f) {
  if (c.batch_ndim == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  const int inner = c.batch_ndim - 1;
  int64_t outer = 1;
  for (int d = 0; d < inner; ++d) outer *= c.batch_shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, oa = 0, ob = 0, oc = 0;
    for (int d = inner - 1; d >= 0; --d) {
      const int64_t i = rest % c.batch_shape[d];
      rest /= c.batch_shape[d];
      oa += i * c.a.batch_strides[d];
      ob += i * c.b.batch_strides[d];
      oc += i * c.c.batch_strides[d];
    }
    f(oa, ob, oc, c.batch_shape[inner], c.a.batch_strides[inner], c.b.batch_strides[inner],
      c.c.batch_strides[inner]);
  }
}

// result = sum_i x[i] y[i] (no conjugation), written to one element of device memory. f16/bf16
// accumulate in f32; integers in 64-bit modular arithmetic, wrapped to the dtype.
struct DotCall {
  DType dtype = DType::F32;
  int64_t n = 0;  // > 0
  const void* x = nullptr;
  int64_t incx = 1;  // > 0
  const void* y = nullptr;
  int64_t incy = 1;
  void* result = nullptr;
};

}  // namespace culua::detail
