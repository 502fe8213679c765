// Scans on CUDA streams through CUB (included by scan_cuda_*.cu, one group of element types per
// file). The M scans of R elements are one sequence of M * R items in row-major order of (m, r):
// a transform iterator reads item i (in[in_idx(m) + r * rs], widened to the accumulator type) and
// a tabulate output iterator writes it (out[out_idx(m) + (r + initial) * os], converted to the
// result type), so any strided view is scanned in place, without copies.
//   M == 1: cub::DeviceScan::InclusiveScan.
//   M > 1:  cub::DeviceScan::InclusiveScanByKey with the key m = i / R (a counting iterator
//           transformed), so that each row starts afresh.
// CUB's temporary storage is allocated in stream order from the device's pool and freed after the
// scan. include_initial's leading identities are written by a small kernel.
// Contiguous input and output (a whole array scanned along its last axis) take a direct path:
// CUB reads the input pointer (through a one-field widening iterator where the accumulator type
// differs) and writes the output pointer, so that its loads and stores are the fast ones. The
// general iterators carry two Indexers (hundreds of bytes) and cost more than 30x in bandwidth.
#pragma once

#include <cuda_runtime.h>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <type_traits>

#include "core/scan_call.hpp"
#include "kernels/functors.cuh"
#include "kernels/kernels.hpp"
#include "kernels/scan.cuh"

namespace culua::detail::kernels::cuda {

namespace scan_detail {

// Item i of the scan sequence, widened.
template <class F>
struct LoadItem {
  F f;
  const typename F::In* in;
  Indexer in_idx;
  int64_t R;
  int64_t rs;
  bool rows;  // M > 1 (else in_idx is not needed)

  CULUA_HD typename F::Acc operator()(int64_t i) const {
    if (!rows) return f.load(in[i * rs]);
    const int64_t m = i / R;
    return f.load(in[in_idx(m) + (i - m * R) * rs]);
  }
};

// Writes item i of the result.
template <class F>
struct StoreItem {
  F f;
  typename F::Out* out;
  Indexer out_idx;
  int64_t R;
  int64_t os;
  int64_t initial;  // 1 with include_initial
  bool rows;

  CULUA_HD void operator()(int64_t i, typename F::Acc v) const {
    if (!rows) {
      out[(i + initial) * os] = f.finalize(v);
      return;
    }
    const int64_t m = i / R;
    out[out_idx(m) + (i - m * R + initial) * os] = f.finalize(v);
  }
};

struct RowOf {
  int64_t R;
  CULUA_HD int64_t operator()(int64_t i) const { return i / R; }
};

template <class F>
__global__ void write_initial(F f, typename F::Out* out, Indexer out_idx, int64_t M) {
  const int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m < M) out[out_idx(m)] = f.finalize(f.identity());
}

// Contiguous paths: the input widened to the accumulator type, the result narrowed from it.
template <class F>
struct Widen {
  F f;
  CULUA_HD typename F::Acc operator()(typename F::In x) const { return f.load(x); }
};
template <class F>
struct Narrow {
  F f;
  CULUA_HD typename F::Out operator()(typename F::Acc v) const { return f.finalize(v); }
};
// Item i of contiguous rows of R items, written after its row's leading identity.
template <class F>
struct StoreAfterInitial {
  F f;
  typename F::Out* out;
  int64_t R;
  CULUA_HD void operator()(int64_t i, typename F::Acc v) const {
    out[i + i / R + 1] = f.finalize(v);
  }
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
template <class F, class Items, class Sink>
int cub_scan(const F& fn, bool rows, int64_t R, Items items, Sink sink, int64_t n,
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

// The direct path of contiguous views (see the top of this file).
template <class F>
int run_contiguous(const F& f, const ScanCall& c, int64_t M, int64_t R, const Launch& l) {
  using In = typename F::In;
  using Acc = typename F::Acc;
  using Out = typename F::Out;
  const auto* in = static_cast<const In*>(c.in.data);
  auto* out = static_cast<Out*>(c.out.data);
  const bool rows = M > 1;
  const int64_t n = M * R;
  const auto with_items = [&](auto items) {
    if (c.include_initial && rows) {
      return cub_scan(f, rows, R, items,
                      thrust::make_tabulate_output_iterator(StoreAfterInitial<F>{f, out, R}), n, l);
    }
    Out* first = out + (c.include_initial ? 1 : 0);
    if constexpr (std::is_same_v<Acc, Out>) {
      return cub_scan(f, rows, R, items, first, n, l);
    } else {
      return cub_scan(f, rows, R, items,
                      thrust::make_transform_output_iterator(first, Narrow<F>{f}), n, l);
    }
  };
  if constexpr (std::is_same_v<In, Acc>) {
    return with_items(in);
  } else {
    return with_items(thrust::make_transform_iterator(in, Widen<F>{f}));
  }
}

template <class F>
int run(const F& f, const ScanCall& c, const Launch& l) {
  const auto stream = static_cast<cudaStream_t>(l.stream);
  const int last = c.in.ndim - 1;
  const int64_t R = c.in.shape[last];
  StridedView in_outer = c.in, out_outer = c.out;
  in_outer.ndim = out_outer.ndim = last;
  int64_t M = 1;
  for (int d = 0; d < last; ++d) M *= c.in.shape[d];
  if (M == 0) return cudaSuccess;
  auto* out = static_cast<typename F::Out*>(c.out.data);
  const Indexer out_idx(out_outer);
  if (c.include_initial) {
    const int threads = 256;
    const int64_t blocks = (M + threads - 1) / threads;
    if (blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
    write_initial<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(f, out, out_idx, M);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  const int64_t n = M * R;
  if (n == 0) return cudaSuccess;
  if (c.in.is_contiguous() && c.out.is_contiguous()) return run_contiguous(f, c, M, R, l);
  const bool rows = M > 1;
  const LoadItem<F> load{
      f,   static_cast<const typename F::In*>(c.in.data), Indexer(in_outer), R, c.in.strides[last],
      rows};
  const StoreItem<F> store{f,   out, out_idx, R, c.out.strides[last], c.include_initial ? 1 : 0,
                           rows};
  const auto items = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), load);
  const auto sink = thrust::make_tabulate_output_iterator(store);
  return cub_scan(f, rows, R, items, sink, n, l);
}

}  // namespace scan_detail

// The scans of inputs of type T (instantiated in scan_cuda_*.cu).
template <class T>
int scan_typed(const ScanCall& c, const Launch& l) {
  if (c.op == ScanOp::Prod) return scan_detail::run(scan::ScanFn<T, true>{}, c, l);
  return scan_detail::run(scan::ScanFn<T, false>{}, c, l);
}

}  // namespace culua::detail::kernels::cuda
