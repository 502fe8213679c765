// Integer and bool matrix products on the host, with the element logic of integer_gemm.cuh.
// Column by column (the columns of every product of a batch split across the host pool): a column
// of C accumulates in residues while the columns of op(A) stream through (unit stride when A is
// not transposed); a zero element of op(B) adds nothing and is skipped.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/base/error.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/integer_gemm.cuh"
#include "kernels/integer_gemm.hpp"

namespace culua::detail::kernels::host {

namespace {

using namespace integer_gemm;

template <class T>
void gemm(const MatmulCall& c) {
  const int64_t m = c.m, n = c.n, k = c.k;
  const bool read_c = c.int_beta != 0;
  struct Item {
    int64_t a, b, c;
  };
  std::vector<Item> items;
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    for (int64_t i = 0; i < count; ++i) items.push_back({oa + i * sa, ob + i * sb, oc + i * sc});
  });
  if (n == 0) return;
  // A column costs about m * k multiply-adds.
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(1, m * k));
  parallel_for(static_cast<int64_t>(items.size()) * n, grain, [&](int64_t lo, int64_t hi) {
    std::vector<Acc<T>> acc(static_cast<size_t>(m));
    for (int64_t t = lo; t < hi; ++t) {
      const Item& item = items[static_cast<size_t>(t / n)];
      const int64_t j = t % n;
      const T* a = static_cast<const T*>(c.a.data) + item.a;
      const T* b = static_cast<const T*>(c.b.data) + item.b;
      T* out = static_cast<T*>(c.c.data) + item.c;
      acc.assign(static_cast<size_t>(m), 0);
      for (int64_t p = 0; p < k; ++p) {
        const Acc<T> bv = operand_at(b, c.b.trans, c.b.ld, p, j);
        if (bv == 0) continue;
        for (int64_t i = 0; i < m; ++i) {
          acc[static_cast<size_t>(i)] = multiply_add<T>(acc[static_cast<size_t>(i)],
                                                        operand_at(a, c.a.trans, c.a.ld, i, p), bv);
        }
      }
      T* col = out + j * c.c.ld;
      for (int64_t i = 0; i < m; ++i) {
        col[i] = finish(acc[static_cast<size_t>(i)], c.int_alpha, c.int_beta, read_c, col + i);
      }
    }
  });
}

}  // namespace

size_t integer_gemm_scratch_bytes(const MatmulCall& c) {
  // gemm(): three offsets per product of the batch, and a column of accumulators (8 bytes each)
  // per range running at once.
  int64_t batch = 1;
  for (int d = 0; d < c.batch_ndim; ++d) batch *= c.batch_shape[d];
  return static_cast<size_t>(batch * 24 + (pool_threads() + 1) * c.m * 8);
}

void integer_gemm(const MatmulCall& c) {
  switch (c.dtype) {
    case DType::I8:
      return gemm<int8_t>(c);
    case DType::I16:
      return gemm<int16_t>(c);
    case DType::I32:
      return gemm<int32_t>(c);
    case DType::I64:
      return gemm<int64_t>(c);
    case DType::U8:
      return gemm<uint8_t>(c);
    case DType::U16:
      return gemm<uint16_t>(c);
    case DType::U32:
      return gemm<uint32_t>(c);
    case DType::U64:
      return gemm<uint64_t>(c);
    case DType::Bool:
      return gemm<bool>(c);
    default:
      fail(ErrorKind::Unsupported, "no integer matrix product of {} arrays", name(c.dtype));
  }
}

}  // namespace culua::detail::kernels::host
