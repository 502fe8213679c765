// The CUB algorithms of sorting and sets, compiled once for the key types that sort_cuda.cuh uses
// (its top says which): radix sorts of rows, ascending, one call per row or one segmented sort;
// the selection of flagged positions and the running count of flags.
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>

#include "kernels/sort_cuda.cuh"

// numpy's order of f32 and f64 keys (sort_cuda.cuh's NumpyFloat) as CUB's bit twiddle of the key
// type: TwiddleIn gives the key that is sorted, TwiddleOut a float with that key (the sorted keys
// are a scratch copy, read back only by the next radix pass). Specializing NumericTraits is how
// CUB takes the twiddle of a key type of its own (cub/util_type.cuh); the sort's tuning is that of
// any key of the same size.
CUB_NAMESPACE_BEGIN
template <class F>
struct NumericTraits<culua::detail::kernels::cuda::sort_detail::NumpyFloat<F>> {
  using UnsignedBits = decltype(culua::detail::kernels::cuda::sort_detail::NumpyFloat<F>::bits);
  static constexpr UnsignedBits HIGH_BIT = UnsignedBits(UnsignedBits(1) << (sizeof(F) * 8 - 1));
  // Raw keys: -inf (the smallest key) and a NaN (the largest, the key of every NaN).
  static constexpr UnsignedBits LOWEST_KEY =
      UnsignedBits(HIGH_BIT | culua::detail::kernels::cuda::sort_detail::inf_bits<F>());
  static constexpr UnsignedBits MAX_KEY = UnsignedBits(UnsignedBits(~UnsignedBits(0)) ^ HIGH_BIT);

  static _CCCL_HOST_DEVICE _CCCL_FORCEINLINE UnsignedBits TwiddleIn(UnsignedBits b) {
    return culua::detail::kernels::cuda::sort_detail::float_bits_key<F, UnsignedBits>(b);
  }
  static _CCCL_HOST_DEVICE _CCCL_FORCEINLINE UnsignedBits TwiddleOut(UnsignedBits k) {
    if (k == UnsignedBits(~UnsignedBits(0))) return MAX_KEY;  // a NaN
    return (k & HIGH_BIT) ? UnsignedBits(k ^ HIGH_BIT) : UnsignedBits(~k);
  }

 private:
  friend struct detail::is_primitive_impl;
  static constexpr bool is_primitive = false;
};
CUB_NAMESPACE_END

namespace culua::detail::kernels::cuda::sort_detail {

namespace {

struct RowStart {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t r) const { return r * n; }
};

// One CUB radix sort per row of n keys (and values, unless V is void), n an int or an int64_t.
template <class K, class V, class N>
cudaError_t sort_row_by_row(Temp& t, const K* keys_in, K* keys_out, const V* values_in,
                            V* values_out, int64_t rows, N n, int bits) {
  const cudaStream_t st = t.stream();
  size_t bytes = 0;
  const auto call = [&](void* p, size_t& b, int64_t r) -> cudaError_t {
    const int64_t o = r * int64_t{n};
    if constexpr (!std::is_void_v<V>) {
      return cub::DeviceRadixSort::SortPairs(p, b, keys_in + o, keys_out + o, values_in + o,
                                             values_out + o, n, 0, bits, st);
    } else {
      return cub::DeviceRadixSort::SortKeys(p, b, keys_in + o, keys_out + o, n, 0, bits, st);
    }
  };
  CULUA_SORT_TRY(call(nullptr, bytes, 0));
  void* p = nullptr;
  CULUA_SORT_TRY(t.bytes(&p, bytes));
  for (int64_t r = 0; r < rows; ++r) CULUA_SORT_TRY(call(p, bytes, r));
  return cudaSuccess;
}

}  // namespace

template <class K, class V>
cudaError_t sort_rows(Temp& t, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                      int64_t rows, int64_t n, int bits) {
  const cudaStream_t st = t.stream();
  if (row_by_row(rows, n)) {
    // CUB sizes its offsets by the type of the count: 64-bit ones cost 3.5% in SortPairs of 2^26
    // f32 keys with i64 values on the H200 (2.758 against 2.662 ms), 1.6% in SortKeys. Rows that
    // fit an int get an int.
    if (n <= INT32_MAX) {
      return sort_row_by_row<K, V>(t, keys_in, keys_out, values_in, values_out, rows,
                                   static_cast<int32_t>(n), bits);
    }
    if constexpr (kAnyLength<K, V>) {
      return sort_row_by_row<K, V>(t, keys_in, keys_out, values_in, values_out, rows, n, bits);
    }
    return cudaErrorInvalidValue;  // the callers sort such rows through keys with positions
  }
  if constexpr (kAnyRows<K, V>) {
    const auto begin =
        thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), RowStart{n});
    const auto end = begin + 1;
    const int64_t total = rows * n;
    return with_storage(t, [&](void* p, size_t& b) -> cudaError_t {
      if constexpr (!std::is_void_v<V>) {
        return cub::DeviceSegmentedSort::StableSortPairs(p, b, keys_in, keys_out, values_in,
                                                         values_out, total, rows, begin, end, st);
      } else {
        return cub::DeviceSegmentedSort::StableSortKeys(p, b, keys_in, keys_out, total, rows, begin,
                                                        end, st);
      }
    });
  }
  return cudaErrorInvalidValue;  // the callers sort many rows through keys
}

#define CULUA_SORT_ROWS(K, V) \
  template cudaError_t sort_rows<K, V>(Temp&, const K*, K*, const V*, V*, int64_t, int64_t, int)
// The hot cases without a key pass: row by row only.
CULUA_SORT_ROWS(int32_t, void);
CULUA_SORT_ROWS(int64_t, void);
CULUA_SORT_ROWS(int32_t, int64_t);
CULUA_SORT_ROWS(int64_t, int64_t);
CULUA_SORT_ROWS(float, void);
CULUA_SORT_ROWS(double, void);
CULUA_SORT_ROWS(NumpyFloat<float>, int64_t);
CULUA_SORT_ROWS(NumpyFloat<double>, int64_t);
// Keys: any rows; with positions any length.
CULUA_SORT_ROWS(uint32_t, void);
CULUA_SORT_ROWS(uint64_t, void);
CULUA_SORT_ROWS(uint32_t, uint32_t);
CULUA_SORT_ROWS(uint64_t, uint64_t);
CULUA_SORT_ROWS(uint32_t, int64_t);
CULUA_SORT_ROWS(uint64_t, int64_t);
#undef CULUA_SORT_ROWS

cudaError_t select_flagged(Temp& t, const uint8_t* flags, int64_t* out, int64_t* count, int64_t n) {
  return with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceSelect::Flagged(p, b, thrust::make_counting_iterator<int64_t>(0), flags, out,
                                      count, n, t.stream());
  });
}

namespace {
struct Widen64 {
  __host__ __device__ int64_t operator()(uint8_t f) const { return f; }
};
}  // namespace

cudaError_t flags_inclusive_sum(Temp& t, const uint8_t* flags, int64_t* out, int64_t n) {
  const auto items = thrust::make_transform_iterator(flags, Widen64{});
  return with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceScan::InclusiveSum(p, b, items, out, n, t.stream());
  });
}

}  // namespace culua::detail::kernels::cuda::sort_detail
