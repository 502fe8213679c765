// The CUB kernels of sorting, searching and sets (kernels/sort_cuda*.cu) against a plain C++
// reference (std::stable_sort with numpy's order, kernels/sort_order.cuh), every element type:
// sort and argsort of one row, a few long rows (one CUB call each) and many rows (segmented),
// ascending and descending, sizes beyond one CUB tile, ties, NaN of both signs and several
// payloads, -0.0 and infinities; nonzero, unique (values, counts, first positions, inverse) and
// searchsorted (both sides, with a sorter). Then event-timed figures of 2^26 f32 and i32 keys
// (argument 1: log2 n, default 26; 0 skips them). Exits 1 on a mismatch, 69 without a GPU. Built
// with the CUDA tree (culua_sort_cub_check, ctest gpu.sort_cub_check), or with the CUDA toolkit
// alone:
//   nvcc -std=c++17 -arch=sm_90 -O2 --expt-relaxed-constexpr -Isrc tests/gpu/sort_cub_check.cu
//     src/kernels/sort_cuda*.cu -o sort_cub_check
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/backend/sort_call.hpp"
#include "kernels/kernels.hpp"
#include "kernels/sort_order.cuh"

using namespace culua::detail;
namespace so = culua::detail::kernels::sort_order;

namespace {

int failures = 0;

// Host copies hold bool as bytes (std::vector<bool> has no data()).
template <class T>
using E = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
std::mt19937_64 rng(12345);

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

kernels::cuda::Launch launch() {
  static kernels::cuda::Launch l = [] {
    kernels::cuda::Launch x{};
    int sm = 0;
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
    cudaMemPool_t pool;
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    x.stream = nullptr;
    x.sm_count = sm;
    x.pool = pool;
    return x;
  }();
  return l;
}

// Values with ties and the special cases of each type.
template <class T>
T pick() {
  std::uniform_int_distribution<int> d(0, 11);
  const int k = d(rng);
  if constexpr (std::is_same_v<T, bool>) {
    return k % 2 == 0;
  } else if constexpr (is_complex_element<T>::value) {
    using R = decltype(T{}.re);
    const R v[] = {R(-1), R(0), R(-0.0), R(2), R(NAN), R(-NAN), R(INFINITY), R(3.5)};
    return T{v[k % 8], v[(k * 7 + d(rng)) % 8]};
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    const double v[] = {-1, 0, -0.0, 2, NAN, -NAN, INFINITY, -INFINITY, 3.5, 1e3, -7, 0.25};
    T t = T::from_double(v[k]);
    if (k == 5) t.bits |= uint16_t(0x8000);  // a NaN with the sign bit set
    return t;
  } else if constexpr (std::is_floating_point_v<T>) {
    const T v[] = {T(-1),       T(0),         T(-0.0), T(2),   T(NAN), -T(NAN),
                   T(INFINITY), -T(INFINITY), T(3.5),  T(1e3), T(-7),  T(0.25)};
    T x = v[k];
    if (k == 4 || k == 5) {
      // NaNs of other payloads too (a quiet one, a signaling one): numpy's order has every NaN
      // equal, so they keep their input order, whatever CUB makes of their bits.
      using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
      const U inf = sizeof(T) == 4 ? U(0x7F800000u) : U(0x7FF0000000000000ull);
      U b;
      std::memcpy(&b, &x, sizeof b);
      const int p = d(rng) % 3;
      if (p == 1) b |= U(1);
      if (p == 2) b = U((b & sign) | inf | U(1));
      std::memcpy(&x, &b, sizeof b);
    }
    return x;
  } else {
    const int64_t v[] = {-7, -1, 0, 1, 2, 3, 100, 5, 2, 1, 0, -3};
    return static_cast<T>(std::is_signed_v<T> ? v[k] : (v[k] < 0 ? -v[k] : v[k]));
  }
}

template <class T>
bool same(const T& a, const T& b, bool any_nan_bits) {
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                std::is_same_v<T, bfloat16>) {
    if (any_nan_bits && so::value(a) != so::value(a)) return so::value(b) != so::value(b);
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class U>
U* dev(const std::vector<U>& h) {
  U* p = nullptr;
  CK(cudaMalloc(&p, std::max<size_t>(1, h.size()) * sizeof(U)));
  if (!h.empty()) CK(cudaMemcpy(p, h.data(), h.size() * sizeof(U), cudaMemcpyHostToDevice));
  return p;
}
template <class U>
std::vector<U> host(const U* p, size_t n) {
  std::vector<U> h(n);
  if (n) CK(cudaMemcpy(h.data(), p, n * sizeof(U), cudaMemcpyDeviceToHost));
  return h;
}

void fail(const char* what, const char* type, int64_t rows, int64_t n, bool desc, int64_t at) {
  if (++failures <= 20) {
    std::printf("FAIL %s %s rows=%lld n=%lld desc=%d at %lld\n", what, type, (long long)rows,
                (long long)n, desc, (long long)at);
  }
}

template <class T>
void check_sort(const char* type, int64_t rows, int64_t n, bool desc) {
  const int64_t total = rows * n;
  std::vector<E<T>> in(static_cast<size_t>(total));
  for (auto& x : in) x = pick<T>();
  // The reference: positions per row.
  std::vector<int64_t> pos(in.size());
  std::vector<E<T>> sorted(in.size());
  for (int64_t r = 0; r < rows; ++r) {
    int64_t* p = pos.data() + r * n;
    const E<T>* k = in.data() + r * n;
    std::iota(p, p + n, int64_t{0});
    std::stable_sort(p, p + n, [&](int64_t a, int64_t b) {
      return desc ? so::less(k[b], k[a]) : so::less(k[a], k[b]);
    });
    for (int64_t j = 0; j < n; ++j) {
      sorted[r * n + j] = k[p[j]];
      ++p[j];
    }
  }
  auto* d_in = dev(in);
  for (int mode = 0; mode < 3; ++mode) {  // values, positions, both
    auto* d_out = dev(std::vector<E<T>>(in.size()));
    int64_t* d_pos = dev(std::vector<int64_t>(in.size()));
    SortCall c;
    c.op = SortOp::Sort;
    c.dtype = dtype_of<T>();
    c.descending = desc;
    c.rows = rows;
    c.n = n;
    c.in = d_in;
    c.out = mode != 1 ? d_out : nullptr;
    c.out_index = mode != 0 ? d_pos : nullptr;
    CK(static_cast<cudaError_t>(kernels::cuda::sort(c, launch())));
    CK(cudaDeviceSynchronize());
    if (mode != 1) {
      const std::vector<E<T>> got = host(d_out, in.size());
      // f32/f64 values alone: NaNs of different bits may come in another order among themselves.
      const bool nan_bits = mode == 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (!same(got[i], sorted[i], nan_bits)) {
          fail("sort values", type, rows, n, desc, static_cast<int64_t>(i));
          break;
        }
      }
    }
    if (mode != 0) {
      const std::vector<int64_t> got = host(d_pos, in.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != pos[i]) {
          fail("argsort", type, rows, n, desc, static_cast<int64_t>(i));
          break;
        }
      }
    }
    CK(cudaFree(d_out));
    CK(cudaFree(d_pos));
  }
  CK(cudaFree(d_in));
}

template <class T>
void check_sets(const char* type, int64_t n) {
  std::vector<E<T>> in(static_cast<size_t>(n));
  for (auto& x : in) x = pick<T>();
  // nonzero of an (n/4) x 4 array
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < n; ++i) {
    if (so::nonzero(in[i])) flat.push_back(i);
  }
  const auto count = static_cast<int64_t>(flat.size());
  auto* d_in = dev(in);
  int64_t* d_coords = dev(std::vector<int64_t>(2 * flat.size() + 1));
  SortCall c;
  c.op = SortOp::Nonzero;
  c.dtype = dtype_of<T>();
  c.n = n;
  c.ndim = 2;
  c.shape[0] = n / 4;
  c.shape[1] = 4;
  c.in = d_in;
  c.out_index = d_coords;
  c.count = count;
  CK(static_cast<cudaError_t>(kernels::cuda::sort(c, launch())));
  const std::vector<int64_t> coords = host(d_coords, 2 * flat.size());
  for (int64_t i = 0; i < count; ++i) {
    if (coords[i] != flat[i] / 4 + 1 || coords[count + i] != flat[i] % 4 + 1) {
      fail("nonzero", type, 1, n, false, i);
      break;
    }
  }
  // unique of the sorted keys
  std::vector<int64_t> perm(in.size());
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return so::less(in[a], in[b]); });
  std::vector<E<T>> keys(in.size());
  for (size_t i = 0; i < in.size(); ++i) keys[i] = in[perm[i]];
  for (auto& p : perm) ++p;
  std::vector<E<T>> values;
  std::vector<int64_t> counts, first, inverse(in.size());
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !so::equal(keys[i], keys[i - 1])) {
      values.push_back(keys[i]);
      first.push_back(perm[i]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[perm[i] - 1] = static_cast<int64_t>(values.size());
  }
  auto* d_keys = dev(keys);
  int64_t* d_perm = dev(perm);
  auto* d_values = dev(std::vector<E<T>>(in.size()));
  int64_t* d_counts = dev(std::vector<int64_t>(in.size()));
  int64_t* d_first = dev(std::vector<int64_t>(in.size()));
  int64_t* d_inverse = dev(std::vector<int64_t>(in.size()));
  int64_t* d_count = dev(std::vector<int64_t>(1));
  c = SortCall{};
  c.op = SortOp::Unique;
  c.dtype = dtype_of<T>();
  c.n = n;
  c.in = d_keys;
  c.perm = d_perm;
  c.out = d_values;
  c.out_counts = d_counts;
  c.out_index = d_first;
  c.out_inverse = d_inverse;
  c.out_count = d_count;
  CK(static_cast<cudaError_t>(kernels::cuda::sort(c, launch())));
  const int64_t k = host(d_count, 1)[0];
  if (k != static_cast<int64_t>(values.size())) {
    fail("unique count", type, 1, n, false, k);
  } else {
    const auto gv = host(d_values, values.size());
    const auto gc = host(d_counts, values.size());
    const auto gf = host(d_first, values.size());
    const auto gi = host(d_inverse, in.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (!same(gv[i], values[i], false) || gc[i] != counts[i] || gf[i] != first[i]) {
        fail("unique", type, 1, n, false, static_cast<int64_t>(i));
        break;
      }
    }
    if (gi != inverse) fail("unique inverse", type, 1, n, false, 0);
  }
  // searchsorted of new values in the sorted keys, directly and through the sorter
  std::vector<E<T>> probes(1000);
  for (auto& x : probes) x = pick<T>();
  auto* d_probes = dev(probes);
  int64_t* d_found = dev(std::vector<int64_t>(probes.size()));
  for (int right = 0; right < 2; ++right) {
    for (int sorter = 0; sorter < 2; ++sorter) {
      c = SortCall{};
      c.op = SortOp::Searchsorted;
      c.dtype = dtype_of<T>();
      c.right = right;
      c.n = n;
      c.rows = static_cast<int64_t>(probes.size());
      c.in = sorter ? d_in : d_keys;
      c.perm = sorter ? d_perm : nullptr;
      c.in2 = d_probes;
      c.out_index = d_found;
      CK(static_cast<cudaError_t>(kernels::cuda::sort(c, launch())));
      const auto got = host(d_found, probes.size());
      for (size_t i = 0; i < probes.size(); ++i) {
        const E<T> v = probes[i];
        const auto it = right ? std::upper_bound(keys.begin(), keys.end(), v, so::less<E<T>>)
                              : std::lower_bound(keys.begin(), keys.end(), v, so::less<E<T>>);
        if (got[i] != (it - keys.begin()) + 1) {
          fail(right ? "searchsorted right" : "searchsorted left", type, 1, n, sorter,
               static_cast<int64_t>(i));
          break;
        }
      }
    }
  }
  for (void* p : {(void*)d_in, (void*)d_coords, (void*)d_keys, (void*)d_perm, (void*)d_values,
                  (void*)d_counts, (void*)d_first, (void*)d_inverse, (void*)d_count,
                  (void*)d_probes, (void*)d_found}) {
    CK(cudaFree(p));
  }
}

template <class T>
void check_type(const char* type) {
  const int64_t shapes[][2] = {{1, 1},      {1, 2},     {1, 1000}, {1, 300000},
                               {3, 300000}, {1000, 37}, {7, 5000}, {20, 1}};
  for (const auto& s : shapes) {
    for (bool desc : {false, true}) check_sort<T>(type, s[0], s[1], desc);
  }
  for (int64_t n : {4, 1000, 200000}) check_sets<T>(type, n);
  std::printf("%-10s checked\n", type);
}

template <class T>
double time_ms(int64_t n, bool positions) {
  std::vector<E<T>> h(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& x : h) {
    if constexpr (std::is_same_v<T, float>) {
      x = static_cast<float>(u(rng));
    } else {
      x = static_cast<T>(rng());
    }
  }
  T* d_in = dev(h);
  auto* d_out = dev(std::vector<E<T>>(h.size()));
  int64_t* d_pos = nullptr;
  CK(cudaMalloc(&d_pos, h.size() * 8));
  SortCall c;
  c.op = SortOp::Sort;
  c.dtype = dtype_of<T>();
  c.n = n;
  c.in = d_in;
  c.out = positions ? nullptr : d_out;
  c.out_index = positions ? d_pos : nullptr;
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < 23; ++i) {
    CK(cudaEventRecord(a));
    CK(static_cast<cudaError_t>(kernels::cuda::sort(c, launch())));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (i >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaFree(d_pos));
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 69;
  }
  check_type<float>("f32");
  check_type<double>("f64");
  check_type<half>("f16");
  check_type<bfloat16>("bf16");
  check_type<int8_t>("i8");
  check_type<int16_t>("i16");
  check_type<int32_t>("i32");
  check_type<int64_t>("i64");
  check_type<uint8_t>("u8");
  check_type<uint16_t>("u16");
  check_type<uint32_t>("u32");
  check_type<uint64_t>("u64");
  check_type<bool>("bool");
  check_type<complex64>("c64");
  check_type<complex128>("c128");
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 26;
  if (log2n > 0) {
    const int64_t n = int64_t{1} << log2n;
    std::printf("sort_f32_ms %.4f ms\n", time_ms<float>(n, false));
    std::printf("argsort_f32_ms %.4f ms\n", time_ms<float>(n, true));
    std::printf("sort_i32_ms %.4f ms\n", time_ms<int32_t>(n, false));
    std::printf("argsort_i32_ms %.4f ms\n", time_ms<int32_t>(n, true));
  }
  std::printf("%s (%d failures)\n", failures ? "FAILED" : "all agree", failures);
  return failures ? 1 : 0;
}
