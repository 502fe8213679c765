// Scans on CUDA streams through CUB (included by scan_cuda_*.cu, one group of accumulator types per
// file): M contiguous rows of R items of the accumulator type, scanned as one sequence of M * R
// items.
//   M == 1: cub::DeviceScan::InclusiveScan.
//   M > 1:  cub::DeviceScan::InclusiveScanByKey with the key m = i / R (a counting iterator
//           transformed), so that each row starts afresh.
// CUB's temporary storage is allocated in stream order from the device's pool and freed after the
// scan. The inputs of other types and layouts, and the results of other types and layouts, are
// staged by scan_cuda.cu.
#pragma once

#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <type_traits>

#include "kernels/functors.cuh"
#include "kernels/kernels.hpp"
#include "kernels/scan.cuh"
#include "kernels/scan_cuda_typed.hpp"

namespace culua::detail::kernels::cuda {

namespace scan_detail {

struct RowOf {
  int64_t R;
  CULUA_HD int64_t operator()(int64_t i) const { return i / R; }
};

// The operator CUB scans with. Its tuned policies (sm80, sm90) apply to ::cuda::std::plus of a
// primitive type only, a functor of our own gets the generic one: a sum of real numbers or
// integers goes through plus (the same arithmetic). On the H200, CUB's scan of 1 GiB of f32 with
// plus moved 3142 GB/s, where culua's functor gave 2560 GB/s.
template <class F>
auto scan_op(const F& f) {
  using Acc = typename F::Acc;
  if constexpr (!F::kProduct && std::is_arithmetic_v<Acc> && !std::is_same_v<Acc, bool>) {
    return ::cuda::std::plus<Acc>{};
  } else {
    return f;
  }
}

// CUB's scan of n items (by row keys when rows), temporary storage from the pool.
template <class F, class A>
int cub_scan(const F& fn, bool rows, int64_t R, const A* items, A* sink, int64_t n,
             const Launch& l) {
  const auto f = scan_op(fn);
  const auto stream = static_cast<cudaStream_t>(l.stream);
  const auto keys =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), RowOf{R});
  size_t bytes = 0;
  cudaError_t e = rows ? cub::DeviceScan::InclusiveScanByKey(nullptr, bytes, keys, items, sink, f,
                                                             n, ::cuda::std::equal_to<>{}, stream)
                       : cub::DeviceScan::InclusiveScan(nullptr, bytes, items, sink, f, n, stream);
  if (e != cudaSuccess) return e;
  void* temp = nullptr;
  e = l.pool ? cudaMallocFromPoolAsync(&temp, bytes, static_cast<cudaMemPool_t>(l.pool), stream)
             : cudaMallocAsync(&temp, bytes, stream);
  if (e != cudaSuccess) return e;
  e = rows ? cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, items, sink, f, n,
                                                 ::cuda::std::equal_to<>{}, stream)
           : cub::DeviceScan::InclusiveScan(temp, bytes, items, sink, f, n, stream);
  const cudaError_t freed = cudaFreeAsync(temp, stream);
  return e != cudaSuccess ? e : freed;
}

}  // namespace scan_detail

template <class A>
int scan_rows(bool prod, const A* in, A* out, int64_t M, int64_t R, const Launch& l) {
  const int64_t n = M * R;
  if (n == 0) return cudaSuccess;
  if (prod) return scan_detail::cub_scan(scan::ScanFn<A, true>{}, M > 1, R, in, out, n, l);
  return scan_detail::cub_scan(scan::ScanFn<A, false>{}, M > 1, R, in, out, n, l);
}

}  // namespace culua::detail::kernels::cuda
