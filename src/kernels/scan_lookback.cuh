// culua's own single-pass scan (scan_lookback.cu) of the cumulative sums of contiguous f32, f64,
// i64/u64 and i32 (widened to i64 as it is read) rows: M rows of R items, read and written once
// (the copy's traffic). scan_cuda.cu sends it the sums it applies to and CUB the rest (products,
// complex types, misaligned data).
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"
#include "kernels/kernels.hpp"

namespace culua::detail::kernels::cuda {

// Whether scan_lookback sums n items of dtype in_dtype at `in` into `acc` at `out`: (in_dtype,
// acc) one of (F32, F32), (F64, F64), (I64 or U64, I64 or U64), (I32, I64); both addresses
// 16-byte aligned (the kernel reads and writes 16-byte vectors).
bool lookback_applies(DType in_dtype, DType acc, const void* in, const void* out, int64_t n);

// out[m, r] = in[m, 0] + ... + in[m, r] for M contiguous rows of R items (lookback_applies true):
// f32 and f64 add in their own type, integers wrap in 64 bits.
int scan_lookback(DType in_dtype, DType acc, const void* in, void* out, int64_t M, int64_t R,
                  const Launch& l);

// Items per tile (one block's share) when summing into `acc`, for tests of the sizes around it.
int64_t lookback_tile_items(DType acc);

}  // namespace culua::detail::kernels::cuda
