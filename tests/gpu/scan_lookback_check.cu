// culua's look-back scan (kernels/scan_lookback.cu) against a plain C++ reference: f32, f64, i64,
// u64 and i32 (summed into i64) at sizes around the tile (1, tile - 1, tile, tile + 1, 32 tiles
// where the tree of totals gains a level, 1024 tiles where it gains another) and 2^28 f32; rows of
// many lengths (1 .. beyond a tile); -0.0 and NaN; the same bits run to run; captured into a CUDA
// graph and replayed. Floats are compared exactly on whole numbers (every partial sum exact in
// any order) and within a bound on random reals. Then, with argument k (default 30; 0 skips
// them), event-timed figures at 2^k bytes of input: the look-back scan against CUB's (the
// previous path, culua's scan_rows) and against cudaMemcpyAsync device to device, as GB/s of
// bytes read and written (a copy's "2 x size"), and the time of both scans at small sizes. Exits 1
// on a mismatch, 69 without a GPU. Built with the CUDA tree (culua_scan_lookback_check, ctest
// gpu.scan_lookback_check), or with the CUDA toolkit alone, where the tile shape (data threads a
// block, bytes of results a thread) and the look-back's longest sleep can be changed:
//   nvcc -std=c++17 -arch=sm_90 -O3 --fmad=false --expt-relaxed-constexpr -DCULUA_HAVE_CUDA=1 -Isrc
//     [-DCULUA_SCAN_THREADS=512 -DCULUA_SCAN_BYTES=128 -DCULUA_SCAN_SLEEP_NS=128]
//     tests/gpu/scan_lookback_check.cu src/kernels/scan_lookback.cu src/kernels/scan_cuda_real.cu
//     -o scan_lookback_check
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/kernels.hpp"
#include "kernels/scan_cuda_typed.hpp"
#include "kernels/scan_lookback.cuh"

using namespace culua::detail;
namespace kc = culua::detail::kernels::cuda;

namespace {

int failures = 0;
std::mt19937_64 rng(20240611);

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

kc::Launch launch_on(cudaStream_t s) {
  kc::Launch x{};
  int sm = 0;
  CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
  cudaMemPool_t pool;
  CK(cudaDeviceGetDefaultMemPool(&pool, 0));
  x.stream = s;
  x.sm_count = sm;
  x.pool = pool;
  return x;
}

// The input type, its dtype and the result's.
template <class In>
struct Types;
template <>
struct Types<float> {
  using A = float;
  static constexpr DType in = DType::F32, acc = DType::F32;
  static constexpr const char* name = "f32";
};
template <>
struct Types<double> {
  using A = double;
  static constexpr DType in = DType::F64, acc = DType::F64;
  static constexpr const char* name = "f64";
};
template <>
struct Types<int64_t> {
  using A = int64_t;
  static constexpr DType in = DType::I64, acc = DType::I64;
  static constexpr const char* name = "i64";
};
template <>
struct Types<uint64_t> {
  using A = uint64_t;
  static constexpr DType in = DType::U64, acc = DType::U64;
  static constexpr const char* name = "u64";
};
template <>
struct Types<int32_t> {
  using A = int64_t;
  static constexpr DType in = DType::I32, acc = DType::I64;
  static constexpr const char* name = "i32->i64";
};

enum class Values { Whole, Reals, Bits };

template <class In>
std::vector<In> make(int64_t n, Values kind) {
  std::vector<In> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> real(-1, 1);
  for (auto& x : v) {
    const uint64_t r = rng();
    if constexpr (std::is_floating_point_v<In>) {
      x = kind == Values::Reals ? static_cast<In>(real(rng)) : static_cast<In>(int(r % 7) - 3);
    } else {
      x = kind == Values::Bits ? static_cast<In>(r) : static_cast<In>(int(r % 7) - 3);
    }
  }
  return v;
}

// Sums row by row in the result type (integers wrapping).
template <class In>
std::vector<typename Types<In>::A> reference(const std::vector<In>& in, int64_t M, int64_t R) {
  using A = typename Types<In>::A;
  std::vector<A> out(in.size());
  for (int64_t m = 0; m < M; ++m) {
    A acc{};
    for (int64_t r = 0; r < R; ++r) {
      const A x = static_cast<A>(in[static_cast<size_t>(m * R + r)]);
      if constexpr (std::is_integral_v<A>) {
        acc = r == 0 ? x : static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
      } else {
        acc = r == 0 ? x : acc + x;
      }
      out[static_cast<size_t>(m * R + r)] = acc;
    }
  }
  return out;
}

template <class T>
T* dev(const std::vector<T>& h) {
  T* p = nullptr;
  CK(cudaMalloc(&p, std::max<size_t>(h.size(), 1) * sizeof(T)));
  if (!h.empty()) CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

template <class T>
std::vector<T> host(const T* p, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class In>
std::vector<typename Types<In>::A> run(const std::vector<In>& in, int64_t M, int64_t R,
                                       cudaStream_t s = nullptr) {
  using A = typename Types<In>::A;
  const int64_t n = M * R;
  In* d_in = dev(in);
  A* d_out = dev(std::vector<A>(static_cast<size_t>(n)));
  CK(static_cast<cudaError_t>(
      kc::scan_lookback(Types<In>::in, Types<In>::acc, d_in, d_out, M, R, launch_on(s))));
  CK(cudaStreamSynchronize(s));
  auto out = host(d_out, static_cast<size_t>(n));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  return out;
}

// Reals summed in long double, row by row: nearly exact.
template <class In>
std::vector<long double> reference_wide(const std::vector<In>& in, int64_t M, int64_t R) {
  std::vector<long double> out(in.size());
  for (int64_t m = 0; m < M; ++m) {
    long double acc = 0;
    for (int64_t r = 0; r < R; ++r) {
      acc += static_cast<long double>(in[static_cast<size_t>(m * R + r)]);
      out[static_cast<size_t>(m * R + r)] = acc;
    }
  }
  return out;
}

// Whole numbers (every partial sum exact in any order) and integers exactly; reals in [-1, 1]
// within 4 eps r of the exact sum at position r of a row: rounding errors of a random walk add
// up to about eps r / 8 (one standard deviation), whatever the order.
template <class In>
void check(const char* what, int64_t M, int64_t R, Values kind) {
  using A = typename Types<In>::A;
  const auto in = make<In>(M * R, kind);
  const bool reals = std::is_floating_point_v<A> && kind == Values::Reals;
  const auto want = reference(in, M, R);
  const auto wide = reals ? reference_wide(in, M, R) : std::vector<long double>{};
  const auto got = run(in, M, R);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = std::memcmp(&got[i], &want[i], sizeof(A)) == 0;
    if constexpr (std::is_floating_point_v<A>) {
      if (reals) {
        const double eps = std::is_same_v<A, float> ? 6e-8 : 1.2e-16;
        const auto r = static_cast<double>(static_cast<int64_t>(i) % R + 1);
        ok = std::fabs(static_cast<double>(got[i] - wide[i])) <= 4 * eps * r;
      } else {
        ok = got[i] == want[i];
      }
    }
    if (!ok && bad++ < 3) {
      std::printf("  %s %s M=%lld R=%lld: item %zu: got %.17g, want %.17g\n", Types<In>::name, what,
                  static_cast<long long>(M), static_cast<long long>(R), i, double(got[i]),
                  double(want[i]));
    }
  }
  if (bad) {
    ++failures;
    std::printf("%s %s M=%lld R=%lld: %lld wrong\n", Types<In>::name, what,
                static_cast<long long>(M), static_cast<long long>(R), static_cast<long long>(bad));
  }
}

template <class In>
void check_type() {
  using A = typename Types<In>::A;
  const int64_t T = kc::lookback_tile_items(Types<In>::acc);
  const Values exact = std::is_floating_point_v<In> ? Values::Whole : Values::Bits;
  const int64_t sizes[] = {1,
                           2,
                           3,
                           4,
                           5,
                           7,
                           T - 1,
                           T,
                           T + 1,
                           2 * T - 1,
                           3 * T + 5,
                           31 * T + 1,
                           32 * T - 1,
                           32 * T,
                           32 * T + 1,
                           33 * T,
                           1024 * T,
                           1024 * T + 1,
                           1057 * T + T / 2 + 3};
  for (int64_t n : sizes) check<In>("one row", 1, n, exact);
  const Values mixed = std::is_floating_point_v<In> ? Values::Reals : Values::Bits;
  for (int64_t n : {T + 1, 40 * T + 7}) check<In>("one row, reals/bits", 1, n, mixed);
  const int64_t lengths[] = {1,  2,  3,   4,     5, 7,     8,         9,
                             31, 33, 129, T - 1, T, T + 1, 2 * T + 3, 33 * T + 1};
  for (int64_t R : lengths) {
    const int64_t M = std::max<int64_t>(2, (40 * T) / R + 1);
    check<In>("rows", M, R, exact);
  }
  check<In>("rows of reals/bits", 300, T / 2 + 7, mixed);
  // the same bits run to run
  {
    const auto in = make<In>(200 * T + 11, Values::Reals);
    const auto a = run(in, 1, static_cast<int64_t>(in.size()));
    const auto b = run(in, 1, static_cast<int64_t>(in.size()));
    if (std::memcmp(a.data(), b.data(), a.size() * sizeof(A)) != 0) {
      ++failures;
      std::printf("%s: two runs differ\n", Types<In>::name);
    }
  }
}

void check_specials() {
  const int64_t T = kc::lookback_tile_items(DType::F32);
  for (int64_t n : {int64_t{1}, int64_t{2}, 3 * T + 1}) {
    const auto got = run(std::vector<float>(static_cast<size_t>(n), -0.0f), 1, n);
    for (float v : got) {
      if (!(v == 0 && std::signbit(v))) {
        ++failures;
        std::printf("f32: cumsum of -0.0 (n=%lld) gives %g, not -0.0\n", static_cast<long long>(n),
                    double(v));
        break;
      }
    }
  }
  std::vector<double> x(static_cast<size_t>(5 * T), 1.0);
  x[static_cast<size_t>(2 * T + 3)] = NAN;
  const auto got = run(x, 1, 5 * T);
  for (int64_t i = 0; i < 5 * T; ++i) {
    const double v = got[static_cast<size_t>(i)];
    if (i < 2 * T + 3 ? v != double(i + 1) : !std::isnan(v)) {
      ++failures;
      std::printf("f64: NaN at %lld: item %lld is %g\n", static_cast<long long>(2 * T + 3),
                  static_cast<long long>(i), v);
      break;
    }
  }
}

// 2^28 f32 (1 GiB) of whole numbers, exact.
void check_large() {
  const int64_t n = int64_t{1} << 28;
  check<float>("2^28", 1, n, Values::Whole);
  check<float>("2^28 as 2^14 rows", int64_t{1} << 14, int64_t{1} << 14, Values::Whole);
}

// A scan captured on a stream into a graph (its status memory a graph allocation), replayed.
void check_graph() {
  const int64_t n = 100 * kc::lookback_tile_items(DType::F32) + 3;
  const auto in = make<float>(n, Values::Whole);
  const auto want = reference(in, 1, n);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* d_in = dev(in);
  float* d_out = dev(std::vector<float>(static_cast<size_t>(n)));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CK(static_cast<cudaError_t>(
      kc::scan_lookback(DType::F32, DType::F32, d_in, d_out, 1, n, launch_on(s))));
  CK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 3; ++rep) {
    CK(cudaMemsetAsync(d_out, 0, static_cast<size_t>(n) * 4, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    if (host(d_out, static_cast<size_t>(n)) != want) {
      ++failures;
      std::printf("graph replay %d: wrong\n", rep);
    }
  }
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  CK(cudaStreamDestroy(s));
}

// --- timing ---

template <class F>
double median_ms(const F& f, int reps = 20) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The look-back scan and CUB's of n items in M rows; GB/s of bytes read and written.
template <class In>
void time_type(int64_t n, int64_t M, double copy_gbs) {
  using A = typename Types<In>::A;
  using C = std::conditional_t<std::is_floating_point_v<A>, A, uint64_t>;  // CUB's scan type
  In* d_in = nullptr;
  A* d_out = nullptr;
  C* d_wide = nullptr;  // CUB scans the accumulator type: i32 timed from an i64 copy
  CK(cudaMalloc(&d_in, static_cast<size_t>(n) * sizeof(In)));
  CK(cudaMalloc(&d_out, static_cast<size_t>(n) * sizeof(A)));
  CK(cudaMemset(d_in, 0, static_cast<size_t>(n) * sizeof(In)));
  const C* cub_in = reinterpret_cast<const C*>(d_in);
  if (sizeof(In) != sizeof(C)) {
    CK(cudaMalloc(&d_wide, static_cast<size_t>(n) * sizeof(C)));
    CK(cudaMemset(d_wide, 0, static_cast<size_t>(n) * sizeof(C)));
    cub_in = d_wide;
  }
  const kc::Launch l = launch_on(nullptr);
  const int64_t R = n / M;
  const double ours = median_ms([&] {
    CK(static_cast<cudaError_t>(
        kc::scan_lookback(Types<In>::in, Types<In>::acc, d_in, d_out, M, R, l)));
  });
  const double cub = median_ms([&] {
    CK(static_cast<cudaError_t>(
        kc::scan_rows<C>(false, cub_in, reinterpret_cast<C*>(d_out), M, R, l)));
  });
  const double bytes = double(n) * double(sizeof(In) + sizeof(A));
  const double cub_bytes = double(n) * double(2 * sizeof(C));
  std::printf(
      "%-9s n=2^%.0f M=%-8lld lookback %8.4f ms %7.1f GB/s (%5.1f%% of copy)   CUB %8.4f ms %7.1f "
      "GB/s (%5.1f%%)\n",
      Types<In>::name, std::log2(double(n)), static_cast<long long>(M), ours, bytes / ours / 1e6,
      100 * bytes / ours / 1e6 / copy_gbs, cub, cub_bytes / cub / 1e6,
      100 * cub_bytes / cub / 1e6 / copy_gbs);
  CK(cudaFree(d_in));
  CK(cudaFree(d_out));
  if (d_wide) CK(cudaFree(d_wide));
}

double copy_gbs(size_t bytes) {
  void *a = nullptr, *b = nullptr;
  CK(cudaMalloc(&a, bytes));
  CK(cudaMalloc(&b, bytes));
  CK(cudaMemset(a, 1, bytes));
  const double ms =
      median_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, nullptr)); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  const double gbs = 2.0 * double(bytes) / ms / 1e6;
  std::printf("copy %zu bytes: %.4f ms, %.1f GB/s (2 x size / time)\n", bytes, ms, gbs);
  return gbs;
}

void time_small() {
  const kc::Launch l = launch_on(nullptr);
  std::printf("small sizes (f32, one row): items, look-back us, CUB us\n");
  for (int k = 4; k <= 24; k += 2) {
    const int64_t n = int64_t{1} << k;
    float *a = nullptr, *b = nullptr;
    CK(cudaMalloc(&a, static_cast<size_t>(n) * 4));
    CK(cudaMalloc(&b, static_cast<size_t>(n) * 4));
    CK(cudaMemset(a, 0, static_cast<size_t>(n) * 4));
    const double ours = median_ms([&] {
      CK(static_cast<cudaError_t>(kc::scan_lookback(DType::F32, DType::F32, a, b, 1, n, l)));
    });
    const double cub = median_ms(
        [&] { CK(static_cast<cudaError_t>(kc::scan_rows<float>(false, a, b, 1, n, l))); });
    std::printf("  2^%-2d %9.2f %9.2f\n", k, ours * 1e3, cub * 1e3);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 69;
  }
  check_type<float>();
  check_type<double>();
  check_type<int64_t>();
  check_type<uint64_t>();
  check_type<int32_t>();
  check_specials();
  check_large();
  check_graph();
  const int log2_bytes = argc > 1 ? std::atoi(argv[1]) : 30;
  if (log2_bytes > 0) {
    const size_t bytes = size_t{1} << log2_bytes;
    const double copy = copy_gbs(bytes);
    time_type<float>(static_cast<int64_t>(bytes / 4), 1, copy);
    time_type<double>(static_cast<int64_t>(bytes / 8), 1, copy);
    time_type<int64_t>(static_cast<int64_t>(bytes / 8), 1, copy);
    time_type<int32_t>(static_cast<int64_t>(bytes / 4), 1, copy);
    time_type<float>(static_cast<int64_t>(bytes / 4), int64_t{1} << 14, copy);
    time_type<float>(static_cast<int64_t>(bytes / 4), static_cast<int64_t>(bytes / 16), copy);
    time_small();
  }
  std::printf("%s (%d failures)\n", failures ? "FAILED" : "all agree", failures);
  return failures ? 1 : 0;
}
