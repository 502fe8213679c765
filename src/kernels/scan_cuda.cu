// The CUDA scans' entry point. CUB scans contiguous rows of the accumulator type only (uint64 for
// bool and integers, float for f16/bf16/f32, double, complex64, complex128: scan_cuda_*.cu), so
// that they are compiled five times rather than once per input type and layout. Everything else is
// staged here through the copy kernels:
//  - an input of another type (an integer widened to 64 bits, an f16 to f32) or not contiguous is
//    first cast or copied into a contiguous temporary of the accumulator type (rows last);
//  - a result of another type (f16, bf16: the accumulator rounded, as numpy does per element) or
//    layout (not contiguous, or after include_initial's leading identities) is scanned into a
//    temporary and then cast or copied into the output view;
//  - include_initial's leading identities are a fill of the first column.
// The common cases need no staging: the contiguous f32, f64, complex, i64 and u64 scans read the
// input and write the output directly (i64 and u64 share the uint64 scan: the same bits, wrapping).
// Sums of reals and integers go to culua's own single-pass scan (scan_lookback.cu) instead of
// CUB's; it also reads an i32 input directly (no staging cast). CUB keeps products, complex sums,
// one long row of the accumulator's type and misaligned data.
#include <cuda_runtime.h>

#include "core/backend/scan_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/scan.cuh"
#include "kernels/scan_cuda_typed.hpp"
#include "kernels/scan_lookback.cuh"
#include "kernels/stream_temp.cuh"

namespace culua::detail::kernels::cuda {

namespace {

// The dtype whose buffer the scan of `in` accumulates in, as the copy kernels name it: the
// integer results' own (I64 or U64, scanned as uint64), F32 for f16/bf16, else the input's.
DType acc_dtype(DType result) {
  if (result == DType::F16 || result == DType::BF16) return DType::F32;
  return result;
}

// A contiguous view of `shape` over `data`.
StridedView contiguous(void* data, DType dtype, const StridedView& shape) {
  StridedView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = shape.ndim;
  v.size = shape.size;
  int64_t s = 1;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    v.shape[d] = shape.shape[d];
    v.strides[d] = s;
    s *= shape.shape[d];
  }
  return v;
}

int scan_acc(DType acc, bool prod, const void* in, void* out, int64_t M, int64_t R,
             const Launch& l) {
  switch (acc) {
    case DType::I64:
    case DType::U64:
      return scan_rows(prod, static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), M, R,
                       l);
    case DType::F32:
      return scan_rows(prod, static_cast<const float*>(in), static_cast<float*>(out), M, R, l);
    case DType::F64:
      return scan_rows(prod, static_cast<const double*>(in), static_cast<double*>(out), M, R, l);
    case DType::C64:
      return scan_rows(prod, static_cast<const complex64*>(in), static_cast<complex64*>(out), M, R,
                       l);
    case DType::C128:
      return scan_rows(prod, static_cast<const complex128*>(in), static_cast<complex128*>(out), M,
                       R, l);
    default:
      return cudaErrorInvalidValue;
  }
}

// The identity (0, or 1 for a product) as an element of the result type.
int fill_identity(const StridedView& dst, bool prod, const Launch& l) {
  return dispatch(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return static_cast<int>(cudaErrorInvalidValue);  // no scan results in bool
    } else {
      using Fn = scan::ScanFn<T, true>;
      const Fn f{};
      const typename Fn::Out v = prod ? f.finalize(f.identity()) : f.finalize(typename Fn::Acc{});
      return fill(dst, &v, l);
    }
  });
}

}  // namespace

int scan(const ScanCall& c, const Launch& l) {
  if (c.out.dtype != scan_result_dtype(c.op, c.in.dtype)) return cudaErrorInvalidValue;
  const bool prod = c.op == ScanOp::Prod;
  const int last = c.in.ndim - 1;
  const int64_t R = c.in.shape[last];
  int64_t M = 1;
  for (int d = 0; d < last; ++d) M *= c.in.shape[d];
  StridedView out = c.out;  // the scanned items, after the leading identities
  if (c.include_initial) {
    StridedView first = c.out;
    first.shape[last] = 1;
    first.size = M;
    if (M > 0) {
      if (const int e = fill_identity(first, prod, l); e != cudaSuccess) return e;
    }
    out.data = static_cast<char*>(out.data) +
               out.strides[last] * static_cast<int64_t>(itemsize(out.dtype));
    out.shape[last] = R;
    out.size = M * R;
  }
  if (M * R == 0) return cudaSuccess;
  const DType acc = acc_dtype(c.out.dtype);
  const int64_t n = M * R;
  const size_t bytes = static_cast<size_t>(n) * itemsize(acc);
  Temp temp(l);
  const auto same_bits = [&](DType t) { return t == acc; };
  const bool direct = out.is_contiguous() && same_bits(out.dtype);
  void* dst = out.data;
  if (!direct) {
    if (const cudaError_t e = temp.bytes(&dst, bytes); e != cudaSuccess) return e;
  }
  // The accumulator's dtype is the result's (or F32 for f16/bf16 results): an input of that dtype
  // is scanned where it lies when contiguous, and so is an i32 input of a sum that the look-back
  // scan takes (it widens the items as it reads them).
  const auto lookback = [&](DType t, const void* p) {
    // One row of several tiles read in the accumulator's type: CUB's scan, which is faster there
    // (H200, 1 GiB of f32: 0.73-0.78 ms against the look-back's 0.84-0.91 for every tile shape
    // tried); the look-back wins on rows (CUB's scan by key) and on one tile (one launch).
    const bool one_long_row = M == 1 && n > lookback_tile_items(acc) && t == acc;
    return !prod && !one_long_row && lookback_applies(t, acc, p, dst, n);
  };
  DType in_dtype = c.in.dtype;
  const void* in = c.in.data;
  if (!(c.in.is_contiguous() && (same_bits(in_dtype) || lookback(in_dtype, in)))) {
    void* p = nullptr;
    if (const cudaError_t e = temp.bytes(&p, bytes); e != cudaSuccess) return e;
    if (const int e = copy_cast(contiguous(p, acc, c.in), c.in, l); e != cudaSuccess) return e;
    in = p;
    in_dtype = acc;
  }
  // Sums of reals and integers (f16/bf16 and the narrower integers staged above): the look-back
  // scan (one tile is one launch, CUB's scan two), except one long row; products, complex sums,
  // one long row and misaligned data (an offset view, include_initial's output): CUB.
  const int e = lookback(in_dtype, in) ? scan_lookback(in_dtype, acc, in, dst, M, R, l)
                                       : scan_acc(acc, prod, in, dst, M, R, l);
  if (e != cudaSuccess) return e;
  if (!direct) return copy_cast(out, contiguous(dst, acc, out), l);
  return cudaSuccess;
}

}  // namespace culua::detail::kernels::cuda
