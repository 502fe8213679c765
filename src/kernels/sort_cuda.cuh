// The CUDA side of sorting, searching and sets: templates instantiated per group of element types
// in sort_cuda_*.cu (the entry point is in sort_cuda.cu).
//
// Sorting, searching and sets on the GPU (core/sort_call.hpp), through CUB: DeviceRadixSort for
// one row (and for a few long rows, one call each), DeviceSegmentedSort for many rows,
// DeviceMergeSort for complex numbers (lexicographic order with numpy's NaN rules needs a
// comparison), DeviceSelect for nonzero and unique, DeviceScan for unique's inverse. Temporary
// memory comes from the device's stream-ordered pool and is freed in stream order.
//
// numpy's order by radix sort: integers and bool are their own keys (CUB orders signed integers).
// A float key becomes an unsigned integer of its width whose order is numpy's (-0.0 and 0.0 the
// same key, every NaN the largest key, negative values' bits inverted, positive values' sign bit
// set). The elements move
// as the payload of the keys (SortPairs), so a -0.0 or a NaN keeps its bits and equal keys keep
// their input order (CUB's radix sorts are stable, its descending ones too). Integers and bool
// use SortKeys, or SortPairs with the positions for argsort. f32 and f64 values
// sorted without positions in one or a few long rows use SortKeys on the floats (sort_floats).
#pragma once

#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstring>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <type_traits>
#include <vector>

#include "core/sort_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/sort_order.cuh"

namespace culua::detail::kernels::cuda {

namespace sort_detail {

namespace so = sort_order;

#define CULUA_SORT_TRY(call)          \
  do {                                \
    const cudaError_t e_ = (call);    \
    if (e_ != cudaSuccess) return e_; \
  } while (0)

// Temporary device memory of one call, from the device's pool, freed in stream order when the
// call's work is queued.
class Temp {
 public:
  explicit Temp(const Launch& l) : l_(l) {}
  ~Temp() {
    for (void* p : ptrs_) cudaFreeAsync(p, stream());
  }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;

  template <class U>
  cudaError_t get(U** out, int64_t count) {
    return bytes(reinterpret_cast<void**>(out), static_cast<size_t>(count) * sizeof(U));
  }
  cudaError_t bytes(void** out, size_t n) {
    *out = nullptr;
    if (n == 0) n = 16;
    void* p = nullptr;
    const cudaError_t e =
        l_.pool ? cudaMallocFromPoolAsync(&p, n, static_cast<cudaMemPool_t>(l_.pool), stream())
                : cudaMallocAsync(&p, n, stream());
    if (e != cudaSuccess) return e;
    ptrs_.push_back(p);
    *out = p;
    return cudaSuccess;
  }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(l_.stream); }

 private:
  const Launch& l_;
  std::vector<void*> ptrs_;
};

// Runs a CUB algorithm: the size query, the temporary storage, the call.
template <class F>
cudaError_t with_storage(Temp& t, const F& f) {
  size_t bytes = 0;
  CULUA_SORT_TRY(f(nullptr, bytes));
  void* p = nullptr;
  CULUA_SORT_TRY(t.bytes(&p, bytes));
  return f(p, bytes);
}

inline int grid_for(int64_t n, const Launch& l) {
  const int64_t blocks = (n + 255) / 256;
  const int64_t cap = static_cast<int64_t>(l.sm_count > 0 ? l.sm_count : 1) * 32;
  return static_cast<int>(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

#define CULUA_GRID_LOOP(i, n)                                                            \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

template <size_t N>
struct unsigned_of;
template <>
struct unsigned_of<1> {
  using type = uint8_t;
};
template <>
struct unsigned_of<2> {
  using type = uint16_t;
};
template <>
struct unsigned_of<4> {
  using type = uint32_t;
};
template <>
struct unsigned_of<8> {
  using type = uint64_t;
};

// The bits of +inf (the largest magnitude that is not a NaN).
template <class T>
constexpr uint64_t inf_bits() {
  if constexpr (std::is_same_v<T, float>) {
    return 0x7F800000u;
  } else if constexpr (std::is_same_v<T, double>) {
    return 0x7FF0000000000000ull;
  } else if constexpr (std::is_same_v<T, half>) {
    return 0x7C00u;
  } else {
    return 0x7F80u;  // bfloat16
  }
}

// numpy's order of a float as an unsigned key (see the top of the file).
template <class T, class K>
__device__ K to_key(T x) {
  K b;
  memcpy(&b, &x, sizeof(K));
  constexpr K sign = K(K(1) << (sizeof(K) * 8 - 1));
  const K mag = K(b & K(~sign));
  if (mag > K(inf_bits<T>())) return K(~K(0));  // NaN: after +inf
  if (mag == 0) return sign;                    // -0.0 and 0.0
  return (b & sign) ? K(~b) : K(b | sign);
}

template <class T, class K>
__global__ void keys_kernel(const T* in, K* keys, int64_t n) {
  CULUA_GRID_LOOP(i, n) keys[i] = to_key<T, K>(in[i]);
}

// 1-based positions along rows of n. A 64-bit remainder is a long software sequence on the GPU,
// as costly as the stores at 2^26 positions: one row needs none, and rows that fit 32 bits use the
// hardware-friendly 32-bit one.
template <int = 0>
__global__ void positions_kernel(int64_t* out, int64_t total, int64_t n) {
  if (n == total) {
    CULUA_GRID_LOOP(i, total) out[i] = i + 1;
  } else if (total <= int64_t{UINT32_MAX}) {
    const auto n32 = static_cast<uint32_t>(n);
    CULUA_GRID_LOOP(i, total) out[i] = static_cast<int64_t>(static_cast<uint32_t>(i) % n32) + 1;
  } else {
    CULUA_GRID_LOOP(i, total) out[i] = i % n + 1;
  }
}

template <class T>
__global__ void gather_rows_kernel(const T* in, const int64_t* pos, T* out, int64_t total,
                                   int64_t n) {
  CULUA_GRID_LOOP(i, total) out[i] = in[(i / n) * n + pos[i] - 1];
}

struct RowStart {
  int64_t n;
  __host__ __device__ int64_t operator()(int64_t r) const { return r * n; }
};

// Rows sorted one CUB call each when they are few and long; else one segmented sort.
inline bool row_by_row(int64_t rows, int64_t n) {
  return rows == 1 || (rows <= 16 && n >= (int64_t{1} << 18));
}

// One CUB radix sort per row of n keys (and values, unless V is void), n an int or an int64_t.
template <class K, class V, class N>
cudaError_t sort_row_by_row(Temp& t, const K* keys_in, K* keys_out, const V* values_in,
                            V* values_out, int64_t rows, N n, bool desc) {
  const cudaStream_t st = t.stream();
  constexpr bool pairs = !std::is_void_v<V>;
  size_t bytes = 0;
  const auto call = [&](void* p, size_t& b, int64_t r) -> cudaError_t {
    const int64_t o = r * int64_t{n};
    if constexpr (pairs) {
      return desc ? cub::DeviceRadixSort::SortPairsDescending(p, b, keys_in + o, keys_out + o,
                                                              values_in + o, values_out + o, n, 0,
                                                              int(sizeof(K) * 8), st)
                  : cub::DeviceRadixSort::SortPairs(p, b, keys_in + o, keys_out + o, values_in + o,
                                                    values_out + o, n, 0, int(sizeof(K) * 8), st);
    } else {
      return desc ? cub::DeviceRadixSort::SortKeysDescending(p, b, keys_in + o, keys_out + o, n, 0,
                                                             int(sizeof(K) * 8), st)
                  : cub::DeviceRadixSort::SortKeys(p, b, keys_in + o, keys_out + o, n, 0,
                                                   int(sizeof(K) * 8), st);
    }
  };
  CULUA_SORT_TRY(call(nullptr, bytes, 0));
  void* p = nullptr;
  CULUA_SORT_TRY(t.bytes(&p, bytes));
  for (int64_t r = 0; r < rows; ++r) CULUA_SORT_TRY(call(p, bytes, r));
  return cudaSuccess;
}

// Sorts rows x n keys (and values, unless V is void) into keys_out (values_out).
template <class K, class V>
cudaError_t sort_rows(Temp& t, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                      int64_t rows, int64_t n, bool desc) {
  const cudaStream_t st = t.stream();
  constexpr bool pairs = !std::is_void_v<V>;
  if (row_by_row(rows, n)) {
    // CUB sizes its offsets by the type of the count: 64-bit ones cost 3.5% in SortPairs of 2^26
    // f32 keys with i64 values on the H200 (2.758 against 2.662 ms), 1.6% in SortKeys. Rows that
    // fit an int get an int.
    if (n <= INT32_MAX)
      return sort_row_by_row<K, V>(t, keys_in, keys_out, values_in, values_out, rows,
                                   static_cast<int32_t>(n), desc);
    return sort_row_by_row<K, V>(t, keys_in, keys_out, values_in, values_out, rows, n, desc);
  }
  const auto begin =
      thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), RowStart{n});
  const auto end = begin + 1;
  const int64_t total = rows * n;
  return with_storage(t, [&](void* p, size_t& b) -> cudaError_t {
    if constexpr (pairs) {
      return desc
                 ? cub::DeviceSegmentedSort::StableSortPairsDescending(
                       p, b, keys_in, keys_out, values_in, values_out, total, rows, begin, end, st)
                 : cub::DeviceSegmentedSort::StableSortPairs(
                       p, b, keys_in, keys_out, values_in, values_out, total, rows, begin, end, st);
    } else {
      return desc ? cub::DeviceSegmentedSort::StableSortKeysDescending(p, b, keys_in, keys_out,
                                                                       total, rows, begin, end, st)
                  : cub::DeviceSegmentedSort::StableSortKeys(p, b, keys_in, keys_out, total, rows,
                                                             begin, end, st);
    }
  });
}

// The 1-based positions that sort rows of keys (transformed or not) into out_index, and the
// elements in that order into out when wanted.
template <class T, class K>
cudaError_t sort_positions(Temp& t, const SortCall& c, const Launch& l, const K* keys) {
  const int64_t total = c.rows * c.n;
  const int grid = grid_for(total, l);
  K* keys_out = nullptr;
  int64_t* pos = nullptr;
  CULUA_SORT_TRY(t.get(&keys_out, total));
  CULUA_SORT_TRY(t.get(&pos, total));
  positions_kernel<><<<grid, 256, 0, t.stream()>>>(pos, total, c.n);
  CULUA_SORT_TRY(cudaGetLastError());
  CULUA_SORT_TRY(
      (sort_rows<K, int64_t>(t, keys, keys_out, pos, c.out_index, c.rows, c.n, c.descending)));
  if (c.out) {
    gather_rows_kernel<T><<<grid, 256, 0, t.stream()>>>(static_cast<const T*>(c.in), c.out_index,
                                                        static_cast<T*>(c.out), total, c.n);
    CULUA_SORT_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

// f32 and f64 values alone (no positions), in one or a few long rows: CUB sorts the floats
// themselves (its float order already has -0.0 == 0.0, stable, and keeps each element's bits), so
// no key pass and no payload. CUB orders NaNs by their bits, so those with the sign bit set come
// before -inf (after everything when descending): a rotation of the row moves them to the end
// (the front when descending), where numpy's order has them. It costs nothing when there are none
// (the kernels read the count and return). NaNs of different bit patterns may end up in another
// order among themselves than their input order; every NaN still sorts after every number.
template <class F>
__device__ bool negative_nan(F x) {
  return x != x && signbit(x);
}

// The number of NaNs with the sign bit set in a sorted row: a prefix (a suffix when descending).
// One block searches: each round its threads test evenly spaced elements of the interval that
// holds the end of the prefix and narrow it to one gap between them (three rounds of 1024 threads
// for 2^26 elements, where a binary search by one thread waited on 26 loads one after another).
template <class F>
__global__ void count_negative_nans_kernel(const F* row, int64_t n, bool desc, int64_t* m) {
  int64_t lo = 0, hi = n;  // the prefix ends in [lo, hi]
  while (lo < hi) {
    const int64_t step = (hi - lo + blockDim.x - 1) / blockDim.x;
    const int64_t i = lo + static_cast<int64_t>(threadIdx.x) * step;
    const bool before = i < hi && (desc ? !negative_nan(row[i]) : negative_nan(row[i]));
    // The probes are in order and the prefix is one: the first c probes are in it.
    const int c = __syncthreads_count(before);
    if (c == 0) {
      hi = lo;
    } else {
      const int64_t next = lo + (c - 1) * step + 1;
      hi = min(hi, lo + c * step);
      lo = next;
    }
  }
  if (threadIdx.x == 0) *m = desc ? n - lo : lo;
}

template <class F>
__global__ void save_row_kernel(const F* row, F* copy, int64_t n, const int64_t* m) {
  if (*m == 0) return;
  CULUA_GRID_LOOP(i, n) copy[i] = row[i];
}

// Ascending: the first m elements go to the end; descending: the last m go to the front.
template <class F>
__global__ void rotate_row_kernel(F* row, const F* copy, int64_t n, const int64_t* m, bool desc) {
  const int64_t k = *m;
  if (k == 0) return;
  CULUA_GRID_LOOP(i, n) row[i] = copy[desc ? (i + n - k) % n : (i + k) % n];
}

template <class F>
cudaError_t sort_floats(Temp& t, const SortCall& c, const Launch& l) {
  const F* in = static_cast<const F*>(c.in);
  F* out = static_cast<F*>(c.out);
  CULUA_SORT_TRY((sort_rows<F, void>(t, in, out, nullptr, nullptr, c.rows, c.n, c.descending)));
  int64_t* m = nullptr;
  F* copy = nullptr;
  CULUA_SORT_TRY(t.get(&m, c.rows));
  CULUA_SORT_TRY(t.get(&copy, c.n));
  const int grid = grid_for(c.n, l);
  for (int64_t r = 0; r < c.rows; ++r) {
    F* row = out + r * c.n;
    count_negative_nans_kernel<F><<<1, 1024, 0, t.stream()>>>(row, c.n, c.descending, m + r);
    save_row_kernel<F><<<grid, 256, 0, t.stream()>>>(row, copy, c.n, m + r);
    rotate_row_kernel<F><<<grid, 256, 0, t.stream()>>>(row, copy, c.n, m + r, c.descending);
    CULUA_SORT_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

template <class T>
cudaError_t radix_sort(const SortCall& c, const Launch& l) {
  Temp t(l);
  const T* in = static_cast<const T*>(c.in);
  if constexpr (std::is_integral_v<T>) {
    // The elements are their own keys (bool as bytes: CUB orders integers, signed ones too).
    using N = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
    const N* keys = reinterpret_cast<const N*>(in);
    if (!c.out_index) {
      return sort_rows<N, void>(t, keys, static_cast<N*>(c.out), nullptr, nullptr, c.rows, c.n,
                                c.descending);
    }
    return sort_positions<T, N>(t, c, l, keys);
  } else {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (!c.out_index && row_by_row(c.rows, c.n)) return sort_floats<T>(t, c, l);
    }
    using K = typename unsigned_of<sizeof(T)>::type;
    const int64_t total = c.rows * c.n;
    K* keys = nullptr;
    CULUA_SORT_TRY(t.get(&keys, total));
    keys_kernel<T, K><<<grid_for(total, l), 256, 0, t.stream()>>>(in, keys, total);
    CULUA_SORT_TRY(cudaGetLastError());
    if (c.out_index) return sort_positions<T, K>(t, c, l, keys);
    // The elements ride along as the keys' values (a -0.0 or a NaN keeps its bits).
    K* keys_out = nullptr;
    CULUA_SORT_TRY(t.get(&keys_out, total));
    return sort_rows<K, K>(t, keys, keys_out, reinterpret_cast<const K*>(in),
                           static_cast<K*>(c.out), c.rows, c.n, c.descending);
  }
}

// Complex numbers: a stable merge sort of the flat positions, row first, then numpy's order.
template <class T>
struct PositionLess {
  const T* k;
  int64_t n;
  bool desc;
  __device__ bool operator()(int64_t a, int64_t b) const {
    const int64_t ra = a / n, rb = b / n;
    if (ra != rb) return ra < rb;
    return desc ? so::less(k[b], k[a]) : so::less(k[a], k[b]);
  }
};

template <int = 0>
__global__ void iota_kernel(int64_t* out, int64_t total) {
  CULUA_GRID_LOOP(i, total) out[i] = i;
}

template <class T>
__global__ void from_positions_kernel(const T* in, const int64_t* pos, T* out, int64_t* out_index,
                                      int64_t total, int64_t n) {
  CULUA_GRID_LOOP(i, total) {
    const int64_t p = pos[i];
    if (out) out[i] = in[p];
    if (out_index) out_index[i] = p % n + 1;
  }
}

template <class T>
cudaError_t merge_sort(const SortCall& c, const Launch& l) {
  Temp t(l);
  const int64_t total = c.rows * c.n;
  const int grid = grid_for(total, l);
  const T* in = static_cast<const T*>(c.in);
  int64_t* pos = nullptr;
  CULUA_SORT_TRY(t.get(&pos, total));
  iota_kernel<><<<grid, 256, 0, t.stream()>>>(pos, total);
  CULUA_SORT_TRY(cudaGetLastError());
  const PositionLess<T> less{in, c.n, c.descending};
  CULUA_SORT_TRY(with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceMergeSort::StableSortKeys(p, b, pos, total, less, t.stream());
  }));
  from_positions_kernel<T>
      <<<grid, 256, 0, t.stream()>>>(in, pos, static_cast<T*>(c.out), c.out_index, total, c.n);
  return cudaGetLastError();
}

template <class T>
struct IsNonzero {
  const T* in;
  __device__ bool operator()(int64_t i) const { return so::nonzero(in[i]); }
};

struct Dims {
  int ndim;
  int64_t shape[8];
};

template <int = 0>
__global__ void unravel_kernel(const int64_t* flat, int64_t* out, int64_t count, Dims d) {
  CULUA_GRID_LOOP(i, count) {
    int64_t rest = flat[i];
    for (int k = d.ndim - 1; k >= 0; --k) {
      out[k * count + i] = rest % d.shape[k] + 1;
      rest /= d.shape[k];
    }
  }
}

template <class T>
cudaError_t nonzero(const SortCall& c, const Launch& l) {
  Temp t(l);
  int64_t* flat = nullptr;
  int64_t* selected = nullptr;
  // Room for every element: the count was computed beforehand, but the selection must not write
  // past its output whatever the data became since.
  CULUA_SORT_TRY(t.get(&flat, c.n));
  CULUA_SORT_TRY(t.get(&selected, 1));
  const IsNonzero<T> pred{static_cast<const T*>(c.in)};
  CULUA_SORT_TRY(with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceSelect::If(p, b, thrust::make_counting_iterator<int64_t>(0), flat, selected,
                                 c.n, pred, t.stream());
  }));
  Dims d{c.ndim, {}};
  for (int k = 0; k < c.ndim && k < 8; ++k) d.shape[k] = c.shape[k];
  unravel_kernel<><<<grid_for(c.count, l), 256, 0, t.stream()>>>(flat, c.out_index, c.count, d);
  return cudaGetLastError();
}

// Unique: a distinct value starts where a sorted key differs from the one before it.
template <class T>
struct IsStart {
  const T* k;
  __device__ bool operator()(int64_t i) const { return i == 0 || !so::equal(k[i], k[i - 1]); }
};
template <class T>
struct StartFlag {
  const T* k;
  __device__ int64_t operator()(int64_t i) const {
    return (i == 0 || !so::equal(k[i], k[i - 1])) ? 1 : 0;
  }
};

template <class T>
__global__ void unique_finish_kernel(const T* k, const int64_t* perm, const int64_t* starts,
                                     const int64_t* count, int64_t n, T* values, int64_t* counts,
                                     int64_t* first) {
  const int64_t m = *count;
  CULUA_GRID_LOOP(i, m) {
    const int64_t s = starts[i];
    const int64_t e = i + 1 < m ? starts[i + 1] : n;
    values[i] = k[s];
    if (counts) counts[i] = e - s;
    if (first) first[i] = perm[s];
  }
}

template <int = 0>
__global__ void scatter_kernel(const int64_t* perm, const int64_t* run, int64_t* inverse,
                               int64_t n) {
  CULUA_GRID_LOOP(i, n) inverse[perm[i] - 1] = run[i];
}

template <class T>
cudaError_t unique(const SortCall& c, const Launch& l) {
  Temp t(l);
  const T* k = static_cast<const T*>(c.in);
  const int grid = grid_for(c.n, l);
  int64_t* starts = nullptr;
  CULUA_SORT_TRY(t.get(&starts, c.n));
  CULUA_SORT_TRY(with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceSelect::If(p, b, thrust::make_counting_iterator<int64_t>(0), starts,
                                 c.out_count, c.n, IsStart<T>{k}, t.stream());
  }));
  unique_finish_kernel<T><<<grid, 256, 0, t.stream()>>>(
      k, c.perm, starts, c.out_count, c.n, static_cast<T*>(c.out), c.out_counts, c.out_index);
  CULUA_SORT_TRY(cudaGetLastError());
  if (c.out_inverse) {
    int64_t* run = nullptr;
    CULUA_SORT_TRY(t.get(&run, c.n));
    const auto flags = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0),
                                                       StartFlag<T>{k});
    CULUA_SORT_TRY(with_storage(t, [&](void* p, size_t& b) {
      return cub::DeviceScan::InclusiveSum(p, b, flags, run, c.n, t.stream());
    }));
    scatter_kernel<><<<grid, 256, 0, t.stream()>>>(c.perm, run, c.out_inverse, c.n);
    CULUA_SORT_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

template <class T>
__global__ void searchsorted_kernel(const T* x1, const int64_t* perm, int64_t n, const T* v,
                                    int64_t m, bool right, int64_t* out) {
  CULUA_GRID_LOOP(r, m) {
    const T x = v[r];
    int64_t a = 0, b = n;
    while (a < b) {
      const int64_t mid = a + (b - a) / 2;
      const T y = perm ? x1[perm[mid] - 1] : x1[mid];
      const bool before = right ? !so::less(x, y) : so::less(y, x);
      if (before) {
        a = mid + 1;
      } else {
        b = mid;
      }
    }
    out[r] = a + 1;
  }
}

}  // namespace sort_detail

template <class T>
int sort_typed(const SortCall& c, const Launch& l) {
  using namespace sort_detail;
  switch (c.op) {
    case SortOp::Sort:
      if (c.rows <= 0 || c.n <= 0) return cudaSuccess;
      if constexpr (is_complex_element<T>::value) {
        return merge_sort<T>(c, l);
      } else {
        return radix_sort<T>(c, l);
      }
    case SortOp::Nonzero:
      if (c.count <= 0 || c.n <= 0) return cudaSuccess;
      return nonzero<T>(c, l);
    case SortOp::Unique:
      if (c.n <= 0)
        return cudaMemsetAsync(c.out_count, 0, sizeof(int64_t),
                               static_cast<cudaStream_t>(l.stream));
      return unique<T>(c, l);
    case SortOp::Searchsorted:
      if (c.rows <= 0) return cudaSuccess;
      searchsorted_kernel<T><<<grid_for(c.rows, l), 256, 0, static_cast<cudaStream_t>(l.stream)>>>(
          static_cast<const T*>(c.in), c.perm, c.n, static_cast<const T*>(c.in2), c.rows, c.right,
          c.out_index);
      return cudaGetLastError();
  }
  return cudaErrorInvalidValue;
}

}  // namespace culua::detail::kernels::cuda
