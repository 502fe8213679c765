// The CUDA side of sorting, searching and sets: per-type code instantiated per group of element
// types in sort_cuda_*.cu (the entry point is in sort_cuda.cu); the CUB algorithms themselves are
// compiled once, for a few key types, in sort_cuda_cub.cu.
//
// Sorting, searching and sets on the GPU (core/backend/sort_call.hpp), through CUB: DeviceRadixSort
// for one row (and for a few long rows, one call each), DeviceSegmentedSort for many rows,
// DeviceMergeSort for complex numbers (lexicographic order with numpy's NaN rules needs a
// comparison, sort_cuda_complex.cu), DeviceSelect for nonzero and unique, DeviceScan for unique's
// inverse. Temporary memory comes from the device's stream-ordered pool and is freed in stream
// order.
//
// numpy's order by radix sort, through keys: every element type becomes an unsigned key of 32 or
// 64 bits whose ascending order is the order wanted. Signed integers flip their sign bit, unsigned
// ones and bool are their own keys, a float key is an unsigned integer of its width whose order is
// numpy's (-0.0 and 0.0 the same key, every NaN the largest key, negative values' bits inverted,
// positive values' sign bit set); types narrower than 32 bits sit in the low bits of a 32-bit key
// (the radix passes cover only those bits). Descending order complements the key's bits: CUB's
// radix sorts are stable, so equal keys keep their input order both ways. Integer keys turn back
// into the elements after the sort; float elements move as the payload of their keys (a -0.0 or
// a NaN keeps its bits), or, with positions, are gathered through them.
//
// The hot cases skip the key pass (docs/design.md, "Precompiled kernels"): ascending sorts and
// argsorts of i32 and i64 in one or a few rows sort the elements themselves (CUB orders signed
// integers), ascending sorts of f32 and f64 without positions sort the floats (sort_floats), and
// ascending argsorts of f32 and f64 sort the floats read through numpy's key (NumpyFloat). So the
// CUB radix sorts compiled are: the key types u32, u64, i32, i64, f32, f64 alone, u32, u64, i32,
// i64 and the NumpyFloat of f32 and f64 with int64 positions, (u32, u64) with their own bits as
// payload, ascending only; rows of more than 2^31 elements through the u32/u64 keys with positions.
#pragma once

#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "core/backend/sort_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/sort_order.cuh"
#include "kernels/stream_temp.cuh"

namespace culua::detail::kernels::cuda {

namespace sort_detail {

namespace so = sort_order;

#define CULUA_SORT_TRY(call)          \
  do {                                \
    const cudaError_t e_ = (call);    \
    if (e_ != cudaSuccess) return e_; \
  } while (0)

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

// numpy's order of a float as an unsigned key of its width (see the top of the file), from the
// float's bits.
template <class T, class U>
__host__ __device__ inline U float_bits_key(U b) {
  constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
  const U mag = U(b & U(~sign));
  if (mag > U(inf_bits<T>())) return U(~U(0));  // NaN: after +inf
  if (mag == 0) return sign;                    // -0.0 and 0.0
  return (b & sign) ? U(~b) : U(b | sign);
}

template <class T, class U>
__device__ U float_key(T x) {
  U b;
  memcpy(&b, &x, sizeof(U));
  return float_bits_key<T, U>(b);
}

// An f32 or f64 as the key of CUB's radix sort in numpy's order: sort_cuda_cub.cu gives CUB
// float_bits_key as the key's bit twiddle, applied as the sort loads each key, so an argsort sorts
// the floats themselves (no key pass). The sorted keys come out with -0.0 as 0.0 and every NaN as
// one NaN: only the positions are used.
template <class F>
struct NumpyFloat {
  typename unsigned_of<sizeof(F)>::type bits;
};

// The key type of an element type: 32 bits, or 64 for 8-byte elements.
template <class T>
using key_of = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
// The key bits that the radix passes cover.
template <class T>
constexpr int key_bits() {
  return static_cast<int>(sizeof(T) * 8);
}

// The ascending key of an element, in the low key_bits<T>() bits of a key_of<T>.
template <class T>
__device__ key_of<T> key_of_element(T x) {
  using K = key_of<T>;
  using U = typename unsigned_of<sizeof(T)>::type;
  if constexpr (std::is_same_v<T, bool>) {
    return K(x ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    U b;
    memcpy(&b, &x, sizeof(U));
    if constexpr (std::is_signed_v<T>) b = U(b ^ U(U(1) << (sizeof(U) * 8 - 1)));
    return K(b);
  } else {
    return K(float_key<T, U>(x));
  }
}

// The complement of the key bits (descending order).
template <class T>
constexpr key_of<T> key_mask() {
  using K = key_of<T>;
  return sizeof(T) >= sizeof(K) ? K(~K(0)) : K((K(1) << key_bits<T>()) - 1);
}

template <class T>
__global__ void keys_kernel(const T* in, key_of<T>* keys, int64_t n, bool desc) {
  const key_of<T> flip = desc ? key_mask<T>() : key_of<T>(0);
  CULUA_GRID_LOOP(i, n) keys[i] = key_of_element<T>(in[i]) ^ flip;
}

// Integers and bool: the element of a key (key_of_element's inverse).
template <class T>
__global__ void from_keys_kernel(const key_of<T>* keys, T* out, int64_t n, bool desc) {
  using U = typename unsigned_of<sizeof(T)>::type;
  const key_of<T> flip = desc ? key_mask<T>() : key_of<T>(0);
  CULUA_GRID_LOOP(i, n) {
    const key_of<T> k = keys[i] ^ flip;
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = k != 0;
    } else {
      U b = U(k);
      if constexpr (std::is_signed_v<T>) b = U(b ^ U(U(1) << (sizeof(U) * 8 - 1)));
      memcpy(&out[i], &b, sizeof(U));
    }
  }
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

// Elements of U (the element type's bits) gathered along rows by 1-based positions.
template <class U>
__global__ void gather_rows_kernel(const U* in, const int64_t* pos, U* out, int64_t total,
                                   int64_t n) {
  CULUA_GRID_LOOP(i, total) out[i] = in[(i / n) * n + pos[i] - 1];
}

// Rows sorted one CUB call each when they are few and long; else one segmented sort.
inline bool row_by_row(int64_t rows, int64_t n) {
  return rows == 1 || (rows <= 16 && n >= (int64_t{1} << 18));
}

// Sorts rows x n keys (and values, unless V is void) into keys_out (values_out), ascending and
// stable, the radix passes over the low `bits` bits of the keys (sort_cuda_cub.cu, instantiated
// for the pairs that kAnyRows and kAnyLength allow; the others only for row_by_row rows of at most
// INT32_MAX elements, which is what the callers pass them).
template <class K, class V>
cudaError_t sort_rows(Temp& t, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
                      int64_t rows, int64_t n, int bits);

// Key types with a segmented sort (many short rows).
template <class K, class V>
constexpr bool kAnyRows = std::is_unsigned_v<K> && !std::is_same_v<K, bool>;
// Key types with rows longer than INT32_MAX elements (CUB's 64-bit offsets).
template <class K, class V>
constexpr bool kAnyLength = kAnyRows<K, V>&& std::is_same_v<V, int64_t>;

// The positions of the `count` elements whose flag is set, in order, and their number
// (sort_cuda_cub.cu).
cudaError_t select_flagged(Temp& t, const uint8_t* flags, int64_t* out, int64_t* count, int64_t n);
// out[i] = flags[0] + ... + flags[i] (sort_cuda_cub.cu).
cudaError_t flags_inclusive_sum(Temp& t, const uint8_t* flags, int64_t* out, int64_t n);

// The 1-based positions that sort rows of keys (the elements themselves or their keys) into
// c.out_index (a temporary when only the elements are wanted), and the elements in that order
// into c.out when wanted.
template <class T, class K>
cudaError_t sort_positions(Temp& t, const SortCall& c, const Launch& l, const K* keys, int bits) {
  const int64_t total = c.rows * c.n;
  const int grid = grid_for(total, l);
  K* keys_out = nullptr;
  int64_t* pos = nullptr;
  int64_t* index = c.out_index;
  CULUA_SORT_TRY(t.get(&keys_out, total));
  CULUA_SORT_TRY(t.get(&pos, total));
  if (!index) CULUA_SORT_TRY(t.get(&index, total));
  positions_kernel<><<<grid, 256, 0, t.stream()>>>(pos, total, c.n);
  CULUA_SORT_TRY(cudaGetLastError());
  CULUA_SORT_TRY((sort_rows<K, int64_t>(t, keys, keys_out, pos, index, c.rows, c.n, bits)));
  if (c.out) {
    using U = typename unsigned_of<sizeof(T)>::type;
    gather_rows_kernel<U><<<grid, 256, 0, t.stream()>>>(static_cast<const U*>(c.in), index,
                                                        static_cast<U*>(c.out), total, c.n);
    CULUA_SORT_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

// f32 and f64 values alone (no positions), ascending, in one or a few long rows: CUB sorts the
// floats themselves (its float order already has -0.0 == 0.0, stable, and keeps each element's
// bits), so no key pass and no payload. CUB orders NaNs by their bits, so those with the sign bit
// set come before -inf: a rotation of the row moves them to the end, where numpy's order has
// them. It costs nothing when there are none (the kernels read the count and return). NaNs of
// different bit patterns may end up in another order among themselves than their input order;
// every NaN still sorts after every number.
template <class F>
__device__ bool negative_nan(F x) {
  return x != x && signbit(x);
}

// The number of NaNs with the sign bit set in a sorted row: a prefix.
// One block searches: each round its threads test evenly spaced elements of the interval that
// holds the end of the prefix and narrow it to one gap between them (three rounds of 1024 threads
// for 2^26 elements, where a binary search by one thread waited on 26 loads one after another).
template <class F>
__global__ void count_negative_nans_kernel(const F* row, int64_t n, int64_t* m) {
  int64_t lo = 0, hi = n;  // the prefix ends in [lo, hi]
  while (lo < hi) {
    const int64_t step = (hi - lo + blockDim.x - 1) / blockDim.x;
    const int64_t i = lo + static_cast<int64_t>(threadIdx.x) * step;
    const bool before = i < hi && negative_nan(row[i]);
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
  if (threadIdx.x == 0) *m = lo;
}

template <class F>
__global__ void save_row_kernel(const F* row, F* copy, int64_t n, const int64_t* m) {
  if (*m == 0) return;
  CULUA_GRID_LOOP(i, n) copy[i] = row[i];
}

// The first m elements go to the end.
template <class F>
__global__ void rotate_row_kernel(F* row, const F* copy, int64_t n, const int64_t* m) {
  const int64_t k = *m;
  if (k == 0) return;
  CULUA_GRID_LOOP(i, n) row[i] = copy[(i + k) % n];
}

template <class F>
cudaError_t sort_floats(Temp& t, const SortCall& c, const Launch& l) {
  const F* in = static_cast<const F*>(c.in);
  F* out = static_cast<F*>(c.out);
  CULUA_SORT_TRY((sort_rows<F, void>(t, in, out, nullptr, nullptr, c.rows, c.n, key_bits<F>())));
  int64_t* m = nullptr;
  F* copy = nullptr;
  CULUA_SORT_TRY(t.get(&m, c.rows));
  CULUA_SORT_TRY(t.get(&copy, c.n));
  const int grid = grid_for(c.n, l);
  for (int64_t r = 0; r < c.rows; ++r) {
    F* row = out + r * c.n;
    count_negative_nans_kernel<F><<<1, 1024, 0, t.stream()>>>(row, c.n, m + r);
    save_row_kernel<F><<<grid, 256, 0, t.stream()>>>(row, copy, c.n, m + r);
    rotate_row_kernel<F><<<grid, 256, 0, t.stream()>>>(row, copy, c.n, m + r);
    CULUA_SORT_TRY(cudaGetLastError());
  }
  return cudaSuccess;
}

template <class T>
constexpr bool kDirectInts = std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;
template <class T>
constexpr bool kDirectFloats = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class T>
cudaError_t radix_sort(const SortCall& c, const Launch& l) {
  Temp t(l);
  const T* in = static_cast<const T*>(c.in);
  const int64_t total = c.rows * c.n;
  // The hot cases (the top of this file): no key pass.
  const bool direct = !c.descending && row_by_row(c.rows, c.n) && c.n <= INT32_MAX;
  if constexpr (kDirectInts<T>) {
    if (direct && !c.out_index) {
      return sort_rows<T, void>(t, in, static_cast<T*>(c.out), nullptr, nullptr, c.rows, c.n,
                                key_bits<T>());
    }
    if (direct) return sort_positions<T, T>(t, c, l, in, key_bits<T>());
  }
  if constexpr (kDirectFloats<T>) {
    if (direct && !c.out_index) return sort_floats<T>(t, c, l);
    if (direct) {
      return sort_positions<T, NumpyFloat<T>>(t, c, l, reinterpret_cast<const NumpyFloat<T>*>(in),
                                              key_bits<T>());
    }
  }
  using K = key_of<T>;
  K* keys = nullptr;
  CULUA_SORT_TRY(t.get(&keys, total));
  keys_kernel<T><<<grid_for(total, l), 256, 0, t.stream()>>>(in, keys, total, c.descending);
  CULUA_SORT_TRY(cudaGetLastError());
  // Positions, or rows longer than INT32_MAX elements (sorted through positions and gathered), or
  // floats narrower than their keys (gathered through positions).
  constexpr bool payload = kDirectFloats<T> || std::is_integral_v<T>;
  if (c.out_index || c.n > INT32_MAX || !payload) {
    return sort_positions<T, K>(t, c, l, keys, key_bits<T>());
  }
  K* keys_out = nullptr;
  CULUA_SORT_TRY(t.get(&keys_out, total));
  if constexpr (std::is_integral_v<T>) {
    // Integer keys turn back into the elements.
    CULUA_SORT_TRY(
        (sort_rows<K, void>(t, keys, keys_out, nullptr, nullptr, c.rows, c.n, key_bits<T>())));
    from_keys_kernel<T><<<grid_for(total, l), 256, 0, t.stream()>>>(
        keys_out, static_cast<T*>(c.out), total, c.descending);
    return cudaGetLastError();
  } else {
    // f32 and f64: the elements ride along as the keys' values (a -0.0 or a NaN keeps its bits).
    return sort_rows<K, K>(t, keys, keys_out, reinterpret_cast<const K*>(in),
                           static_cast<K*>(c.out), c.rows, c.n, key_bits<T>());
  }
}

// Complex numbers: a stable merge sort (sort_cuda_complex.cu).
template <class T>
cudaError_t merge_sort(const SortCall& c, const Launch& l);

// Nonzero and unique flag their elements with a kernel per element type, then select the flagged
// positions with one CUB selection for all types (sort_cuda_cub.cu).
template <class T>
__global__ void nonzero_flags_kernel(const T* in, uint8_t* flags, int64_t n) {
  CULUA_GRID_LOOP(i, n) flags[i] = so::nonzero(in[i]) ? 1 : 0;
}

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
  uint8_t* flags = nullptr;
  // Room for every element: the count was computed beforehand, but the selection must not write
  // past its output whatever the data became since.
  CULUA_SORT_TRY(t.get(&flat, c.n));
  CULUA_SORT_TRY(t.get(&selected, 1));
  CULUA_SORT_TRY(t.get(&flags, c.n));
  nonzero_flags_kernel<T>
      <<<grid_for(c.n, l), 256, 0, t.stream()>>>(static_cast<const T*>(c.in), flags, c.n);
  CULUA_SORT_TRY(cudaGetLastError());
  CULUA_SORT_TRY(select_flagged(t, flags, flat, selected, c.n));
  Dims d{c.ndim, {}};
  for (int k = 0; k < c.ndim && k < 8; ++k) d.shape[k] = c.shape[k];
  unravel_kernel<><<<grid_for(c.count, l), 256, 0, t.stream()>>>(flat, c.out_index, c.count, d);
  return cudaGetLastError();
}

// Unique: a distinct value starts where a sorted key differs from the one before it.
template <class T>
__global__ void start_flags_kernel(const T* k, uint8_t* flags, int64_t n) {
  CULUA_GRID_LOOP(i, n) flags[i] = (i == 0 || !so::equal(k[i], k[i - 1])) ? 1 : 0;
}

// The bits of an element of N bytes (copied, never compared).
struct Bits16 {
  uint64_t lo, hi;
};
template <size_t N>
using bits_of = std::conditional_t<N == 16, Bits16, typename unsigned_of<N == 16 ? 8 : N>::type>;

template <class B>
__global__ void unique_finish_kernel(const B* k, const int64_t* perm, const int64_t* starts,
                                     const int64_t* count, int64_t n, B* values, int64_t* counts,
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
  uint8_t* flags = nullptr;
  CULUA_SORT_TRY(t.get(&starts, c.n));
  CULUA_SORT_TRY(t.get(&flags, c.n));
  start_flags_kernel<T><<<grid, 256, 0, t.stream()>>>(k, flags, c.n);
  CULUA_SORT_TRY(cudaGetLastError());
  CULUA_SORT_TRY(select_flagged(t, flags, starts, c.out_count, c.n));
  using B = bits_of<sizeof(T)>;
  unique_finish_kernel<B>
      <<<grid, 256, 0, t.stream()>>>(reinterpret_cast<const B*>(k), c.perm, starts, c.out_count,
                                     c.n, static_cast<B*>(c.out), c.out_counts, c.out_index);
  CULUA_SORT_TRY(cudaGetLastError());
  if (c.out_inverse) {
    int64_t* run = nullptr;
    CULUA_SORT_TRY(t.get(&run, c.n));
    CULUA_SORT_TRY(flags_inclusive_sum(t, flags, run, c.n));
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
