// Integer and bool matrix products on CUDA: a shared-memory tiled kernel. A block computes a
// 64 x 64 tile of C with 256 threads (4 x 4 results each); tiles of 64 x 16 of op(A) and 16 x 64
// of op(B) are staged in shared memory as accumulator residues, each loaded so that neighbouring
// threads read neighbouring addresses whether the operand is transposed or not. Batches run along
// the grid's z dimension (the call's strides; 0 broadcasts an operand).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/integer_gemm.cuh"
#include "kernels/integer_gemm.hpp"

namespace culua::detail::kernels::cuda {

namespace {

using namespace integer_gemm;

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreads = 256;
constexpr int kSide = 16;                           // threads along each side of the tile
constexpr int kPer = kTileM / kSide;                // results per thread along each side: 4
constexpr int kLoads = kTileM * kTileK / kThreads;  // elements of each operand tile per thread

struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  int64_t count, sa, sb, sc;  // batches and their strides in elements
  uint64_t alpha, beta;
  bool ta, tb, read_c;
};

template <class T>
__global__ void __launch_bounds__(kThreads) integer_gemm_kernel(GemmArgs g) {
  using R = Acc<T>;
  // One column of padding keeps the transposed loads (16 rows written at once) free of bank
  // conflicts.
  __shared__ R as[kTileK][kTileM + 1];
  __shared__ R bs[kTileK][kTileN + 1];
  const int t = static_cast<int>(threadIdx.x);
  const int tx = t % kSide, ty = t / kSide;
  const int64_t tiles_n = (g.n + kTileN - 1) / kTileN;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTileM;
  for (int64_t batch = blockIdx.z; batch < g.count; batch += gridDim.z) {
    const T* a = static_cast<const T*>(g.a) + batch * g.sa;
    const T* b = static_cast<const T*>(g.b) + batch * g.sb;
    T* c = static_cast<T*>(g.c) + batch * g.sc;
    for (int64_t tile_n = blockIdx.y; tile_n < tiles_n; tile_n += gridDim.y) {
      const int64_t j0 = tile_n * kTileN;
      R acc[kPer][kPer];
#pragma unroll
      for (int r = 0; r < kPer; ++r) {
#pragma unroll
        for (int s = 0; s < kPer; ++s) acc[r][s] = 0;
      }
      for (int64_t p0 = 0; p0 < g.k; p0 += kTileK) {
#pragma unroll
        for (int l = 0; l < kLoads; ++l) {
          const int e = t + l * kThreads;
          // op(A) (i, p): A[i + p lda] (unit stride along i) or, transposed, A[p + i lda].
          const int ii = g.ta ? e / kTileK : e % kTileM;
          const int pp = g.ta ? e % kTileK : e / kTileM;
          const int64_t i = i0 + ii, p = p0 + pp;
          as[pp][ii] = i < g.m && p < g.k ? operand_at(a, g.ta, g.lda, i, p) : R{0};
          // op(B) (q, j): B[q + j ldb] (unit stride along q) or, transposed, B[j + q ldb].
          const int jj = g.tb ? e % kTileN : e / kTileK;
          const int qq = g.tb ? e / kTileN : e % kTileK;
          const int64_t q = p0 + qq, j = j0 + jj;
          bs[qq][jj] = q < g.k && j < g.n ? operand_at(b, g.tb, g.ldb, q, j) : R{0};
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < kTileK; ++p) {
          R av[kPer], bv[kPer];
#pragma unroll
          for (int r = 0; r < kPer; ++r) {
            av[r] = as[p][tx + r * kSide];
            bv[r] = bs[p][ty + r * kSide];
          }
#pragma unroll
          for (int r = 0; r < kPer; ++r) {
#pragma unroll
            for (int s = 0; s < kPer; ++s) acc[r][s] = multiply_add<T>(acc[r][s], av[r], bv[s]);
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int s = 0; s < kPer; ++s) {
        const int64_t j = j0 + ty + s * kSide;
        if (j >= g.n) continue;
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
          const int64_t i = i0 + tx + r * kSide;
          if (i >= g.m) continue;
          T* dst = c + i + j * g.ldc;
          *dst = finish<T>(acc[r][s], g.alpha, g.beta, g.read_c, dst);
        }
      }
    }
  }
}

template <class T>
int launch(const MatmulCall& c, cudaStream_t stream) {
  const int64_t tiles_m = (c.m + kTileM - 1) / kTileM;
  const int64_t tiles_n = (c.n + kTileN - 1) / kTileN;
  if (tiles_m > INT_MAX) return static_cast<int>(cudaErrorInvalidValue);
  int error = 0;
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    if (error != 0) return;
    GemmArgs g{};
    g.a = static_cast<const T*>(c.a.data) + oa;
    g.b = static_cast<const T*>(c.b.data) + ob;
    g.c = static_cast<T*>(c.c.data) + oc;
    g.m = c.m;
    g.n = c.n;
    g.k = c.k;
    g.lda = c.a.ld;
    g.ldb = c.b.ld;
    g.ldc = c.c.ld;
    g.count = count;
    g.sa = sa;
    g.sb = sb;
    g.sc = sc;
    g.alpha = c.int_alpha;
    g.beta = c.int_beta;
    g.ta = c.a.trans;
    g.tb = c.b.trans;
    g.read_c = c.int_beta != 0;
    const dim3 grid(static_cast<unsigned>(tiles_m),
                    static_cast<unsigned>(std::min<int64_t>(tiles_n, 65535)),
                    static_cast<unsigned>(std::min<int64_t>(count, 65535)));
    integer_gemm_kernel<T><<<grid, kThreads, 0, stream>>>(g);
    error = static_cast<int>(cudaGetLastError());
  });
  return error;
}

}  // namespace

int integer_gemm(const MatmulCall& c, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (c.dtype) {
    case DType::I8:
      return launch<int8_t>(c, s);
    case DType::I16:
      return launch<int16_t>(c, s);
    case DType::I32:
      return launch<int32_t>(c, s);
    case DType::I64:
      return launch<int64_t>(c, s);
    case DType::U8:
      return launch<uint8_t>(c, s);
    case DType::U16:
      return launch<uint16_t>(c, s);
    case DType::U32:
      return launch<uint32_t>(c, s);
    case DType::U64:
      return launch<uint64_t>(c, s);
    case DType::Bool:
      return launch<bool>(c, s);
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace culua::detail::kernels::cuda
