#include "host/host_blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/backend/blas_call.hpp"
#include "core/base/error.hpp"
#include "core/model/numeric.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/integer_gemm.hpp"

namespace culua::detail::host {

using kernels::host::grain_for;
using kernels::host::parallel_for;

namespace {

// Matrix products run block by block of C, each block a serial BLAS call on a thread of the host
// pool. The blocks' sizes depend on the shape only (not on the pool's size), so every element is
// computed by the same call whatever the pool's size: about 64 blocks (an 8 x 8 grid) of at least
// kMinBlock x kMinBlock, so that large products have few, large blocks (each call packs its
// blocks of A and B: the fewer the blocks, the less packing), and a 512^3 product still has 16
// (with 256 x 256 blocks it had 4, and 4 of a 16-thread machine's threads did all the work:
// 123 GFLOP/s at 4, 8 or 16 threads, H100 host, 2026-11-26).
constexpr int64_t kMinBlock = 128;
constexpr int64_t kGrid = 64;

// The block size along a dimension of `extent`, cut into about `parts`.
int64_t block_size(int64_t extent, int64_t parts) {
  const int64_t size = (extent + parts - 1) / parts;
  return std::max(kMinBlock, (size + 63) / 64 * 64);
}

// Floating-point operations a piece of parallel work should have at least (about 50 us).
constexpr int64_t kMinFlops = int64_t{1} << 20;
// Elements of a dot product's piece: partial products of fixed pieces are added in order.
constexpr int64_t kDotPiece = 32 * 1024;

// One product of a batch: element offsets of A, B and C.
struct Item {
  int64_t a, b, c;
};

std::vector<Item> batch_items(const MatmulCall& c) {
  std::vector<Item> items;
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    for (int64_t i = 0; i < count; ++i) items.push_back({oa + i * sa, ob + i * sb, oc + i * sc});
  });
  return items;
}

// Runs block(item, i0, j0, rows, cols) for every block of C of every item, on the pool.
template <class Block>
void for_each_block(const MatmulCall& c, const std::vector<Item>& items, const Block& block) {
  // An 8 x 8 grid, or more blocks along the longer side when the other is short.
  int64_t mb = block_size(c.m, 8), nb = block_size(c.n, 8);
  const auto count = [](int64_t extent, int64_t size) {
    return std::max<int64_t>(1, (extent + size - 1) / size);
  };
  if (c.m >= c.n) {
    mb = block_size(c.m, std::max<int64_t>(1, kGrid / count(c.n, nb)));
  } else {
    nb = block_size(c.n, std::max<int64_t>(1, kGrid / count(c.m, mb)));
  }
  const int64_t bm = count(c.m, mb), bn = count(c.n, nb);
  const int64_t flops = 2 * std::min(c.m, mb) * std::min(c.n, nb) * std::max<int64_t>(c.k, 1);
  const auto per_item = bm * bn;
  parallel_for(static_cast<int64_t>(items.size()) * per_item,
               std::max<int64_t>(1, kMinFlops / std::max<int64_t>(1, flops)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t t = lo; t < hi; ++t) {
                   const Item& item = items[static_cast<size_t>(t / per_item)];
                   const int64_t r = t % per_item;
                   const int64_t i0 = r % bm * mb, j0 = r / bm * nb;
                   block(item, i0, j0, std::min(mb, c.m - i0), std::min(nb, c.n - j0));
                 }
               });
}

// Element offsets of the block of op(A) starting at row i0 and of op(B) starting at column j0.
int64_t a_block(const MatmulCall& c, int64_t i0) {
  return c.a.trans ? i0 * c.a.ld : i0;
}
int64_t b_block(const MatmulCall& c, int64_t j0) {
  return c.b.trans ? j0 : j0 * c.b.ld;
}

// Which OpenBLAS kernels run. Debian 12's OpenBLAS 0.3.21 (DYNAMIC_ARCH) picks its kernels from
// the CPU's family and model, and falls back to its Prescott (SSE3) kernels on models it does not
// know, such as the virtualized Xeons of cloud machines: f32 gemm at 31-32 GFLOP/s a thread where
// its SkylakeX kernels reach 139-151 (2026-11-26, both the build machine and the H100 machine's
// host picked Prescott). So before OpenBLAS sets itself up, the core type follows the CPU's
// features (what the kernels need, checked with the OS's support for the registers): AVX-512
// F/CD/BW/DQ/VL -> SkylakeX, else AVX2 and FMA -> Haswell, else OpenBLAS's own choice. A user's
// OPENBLAS_CORETYPE wins. This runs in a constructor of priority 101, before OpenBLAS's own
// (default priority: it then finds itself set up), while the process has one thread: the variable
// is set for OpenBLAS's set-up only, then removed, so child processes do not inherit it.
extern "C" void gotoblas_init(void) __attribute__((weak));

const char* core_for_cpu() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

__attribute__((constructor(101))) void choose_openblas_core() {
  if (gotoblas_init == nullptr || std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const char* core = core_for_cpu();
  if (core == nullptr) return;
  if (::setenv("OPENBLAS_CORETYPE", core, 0) != 0) return;
  gotoblas_init();
  ::unsetenv("OPENBLAS_CORETYPE");
}

// At most blas_calls() matrix products inside OpenBLAS at once: $CULUA_HOST_BLAS_CALLS (1 to
// 64), else 1 (see blas_calls()). Each serial OpenBLAS gemm takes a buffer from a table under a
// lock; with 17 calls at once (16 pool threads and the stream's worker, an 8 x 8 grid of blocks,
// H100 host, 2026-11-26) Debian's OpenBLAS 0.3.21 printed "BLAS : Bad memory unallocation!" once;
// with at most 16 it never did (the helper's runs, the suite, and 200 products of 8 x 8 blocks with
// 16 threads, H100 host, 2026-11-26).
constexpr int kMaxBlasCalls = 64;

// (A mutex and a condition variable count the calls: std::counting_semaphore of GCC 12's
// libstdc++ lost a wakeup under load — a process of the tuning experiment waited forever in
// acquire() with no product running, 5 of 12 runs on 2 busy cores, 2026-11-29.)
class BlasSlot {
 public:
  BlasSlot() {
    Slots& s = slots();
    std::unique_lock<std::mutex> lock(s.m);
    s.cv.wait(lock, [&] { return s.free > 0; });
    --s.free;
  }
  ~BlasSlot() {
    Slots& s = slots();
    {
      std::lock_guard<std::mutex> lock(s.m);
      ++s.free;
    }
    s.cv.notify_one();
  }
  BlasSlot(const BlasSlot&) = delete;
  BlasSlot& operator=(const BlasSlot&) = delete;

 private:
  struct Slots {
    std::mutex m;
    std::condition_variable cv;
    int free = blas_calls();
  };
  static Slots& slots() {
    static Slots s;
    return s;
  }
};

// OpenBLAS sets itself up on its first call; that one runs alone, later ones run concurrently on
// the pool (Debian's serial OpenBLAS takes its buffers under a lock: built with USE_LOCKING).
void blas_ready() {
  static std::once_flag once;
  std::call_once(once, [] {
    float a = 1, b = 1, out = 0;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &out,
                1);
  });
}

CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

blasint bi(int64_t v) {
  return static_cast<blasint>(v);  // core/ops/linalg.cpp checked the range
}

template <class T>
T* at(void* base, int64_t offset) {
  return static_cast<T*>(base) + offset;
}

// A column-major rows x cols matrix of half/bfloat16 with leading dimension ld, as packed floats.
template <class T>
void widen(const T* src, int64_t rows, int64_t cols, int64_t ld, std::vector<float>& dst) {
  dst.resize(static_cast<size_t>(rows * cols));
  parallel_for(cols, std::max<int64_t>(1, grain_for(6) / std::max<int64_t>(1, rows)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t j = lo; j < hi; ++j) {
                   for (int64_t i = 0; i < rows; ++i) {
                     dst[static_cast<size_t>(i + j * rows)] = src[i + j * ld].to_float();
                   }
                 }
               });
}

// f16/bf16: through f32 temporaries, accumulated in f32 (as cuBLAS with CUBLAS_COMPUTE_32F), each
// result rounded once from f32.
template <class T>
void small_float_gemm(const MatmulCall& c) {
  const int64_t m = c.m, n = c.n, k = c.k;
  const int64_t ar = c.a.trans ? k : m, ac = c.a.trans ? m : k;
  const int64_t br = c.b.trans ? n : k, bc = c.b.trans ? k : n;
  const bool read_c = c.beta[0] != 0;
  const float alpha = static_cast<float>(c.alpha[0]), beta = static_cast<float>(c.beta[0]);
  const int64_t lda = std::max<int64_t>(1, ar), ldb = std::max<int64_t>(1, br);
  const int64_t ldo = std::max<int64_t>(1, m);
  std::vector<float> a, b, out;
  for (const Item& item : batch_items(c)) {
    widen(at<const T>(c.a.data, item.a), ar, ac, c.a.ld, a);
    widen(at<const T>(c.b.data, item.b), br, bc, c.b.ld, b);
    T* dst = at<T>(c.c.data, item.c);
    if (read_c) {
      widen(static_cast<const T*>(dst), m, n, c.c.ld, out);
    } else {
      out.assign(static_cast<size_t>(m * n), 0.0f);
    }
    // The packed operands as a one-item product: blocks of it on the pool.
    MatmulCall packed = c;
    packed.a.ld = lda;
    packed.b.ld = ldb;
    for_each_block(packed, {Item{0, 0, 0}},
                   [&](const Item&, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
                     {
                       const BlasSlot slot;
                       cblas_sgemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(rows), bi(cols),
                                   bi(k), alpha, a.data() + a_block(packed, i0), bi(lda),
                                   b.data() + b_block(packed, j0), bi(ldb), beta,
                                   out.data() + i0 + j0 * ldo, bi(ldo));
                     }
                     for (int64_t col = j0; col < j0 + cols; ++col) {
                       for (int64_t row = i0; row < i0 + rows; ++row) {
                         dst[row + col * c.c.ld] =
                             convert<T>(out[static_cast<size_t>(row + col * m)]);
                       }
                     }
                   });
  }
}

template <class T, class Gemm>
void real_gemm(const MatmulCall& c, Gemm gemm) {
  const T alpha = static_cast<T>(c.alpha[0]), beta = static_cast<T>(c.beta[0]);
  for_each_block(
      c, batch_items(c), [&](const Item& item, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
        T* dst = at<T>(c.c.data, item.c + i0 + j0 * c.c.ld);
        if (beta == 0) {
          // beta = 0 must not read C (it may hold NaN); BLAS implementations differ in that.
          for (int64_t col = 0; col < cols; ++col)
            std::memset(dst + col * c.c.ld, 0, sizeof(T) * rows);
        }
        const BlasSlot slot;
        gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(rows), bi(cols), bi(c.k), alpha,
             at<const T>(c.a.data, item.a + a_block(c, i0)), bi(c.a.ld),
             at<const T>(c.b.data, item.b + b_block(c, j0)), bi(c.b.ld), beta, dst, bi(c.c.ld));
      });
}

template <class R, class Gemm>
void complex_gemm(const MatmulCall& c, Gemm gemm) {
  const R alpha[2] = {static_cast<R>(c.alpha[0]), static_cast<R>(c.alpha[1])};
  const R beta[2] = {static_cast<R>(c.beta[0]), static_cast<R>(c.beta[1])};
  for_each_block(
      c, batch_items(c), [&](const Item& item, int64_t i0, int64_t j0, int64_t rows, int64_t cols) {
        complex<R>* dst = at<complex<R>>(c.c.data, item.c + i0 + j0 * c.c.ld);
        if (beta[0] == 0 && beta[1] == 0) {
          for (int64_t col = 0; col < cols; ++col) {
            std::memset(static_cast<void*>(dst + col * c.c.ld), 0, sizeof(complex<R>) * rows);
          }
        }
        const BlasSlot slot;
        gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(rows), bi(cols), bi(c.k), alpha,
             at<const complex<R>>(c.a.data, item.a + a_block(c, i0)), bi(c.a.ld),
             at<const complex<R>>(c.b.data, item.b + b_block(c, j0)), bi(c.b.ld), beta, dst,
             bi(c.c.ld));
      });
}

// Adds piece(lo, hi) over fixed pieces of [0, n) in order (add(x, y)), the pieces computed on the
// pool; one piece (the whole product) up to kDotPiece elements.
template <class Acc, class Piece, class Add>
Acc piecewise(int64_t n, int64_t bytes_per_index, const Piece& piece, const Add& add) {
  const int64_t pieces = (n + kDotPiece - 1) / kDotPiece;
  if (pieces <= 1) return piece(0, n);
  std::vector<Acc> part(static_cast<size_t>(pieces));
  parallel_for(pieces, std::max<int64_t>(1, grain_for(bytes_per_index) / kDotPiece),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t p = lo; p < hi; ++p) {
                   part[static_cast<size_t>(p)] =
                       piece(p * kDotPiece, std::min(n, (p + 1) * kDotPiece));
                 }
               });
  Acc sum = part[0];
  for (size_t p = 1; p < part.size(); ++p) sum = add(sum, part[p]);
  return sum;
}

template <class T, class Dot>
T real_dot(const DotCall& c, Dot dot) {
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  return piecewise<T>(
      c.n, 2 * sizeof(T),
      [&](int64_t lo, int64_t hi) {
        return dot(bi(hi - lo), x + lo * c.incx, bi(c.incx), y + lo * c.incy, bi(c.incy));
      },
      [](T a, T b) { return a + b; });
}

template <class R, class Dot>
void complex_dot(const DotCall& c, Dot dot) {
  using Pair = std::array<R, 2>;
  const auto* x = static_cast<const complex<R>*>(c.x);
  const auto* y = static_cast<const complex<R>*>(c.y);
  const Pair r = piecewise<Pair>(
      c.n, 4 * sizeof(R),
      [&](int64_t lo, int64_t hi) {
        Pair part{};
        dot(bi(hi - lo), x + lo * c.incx, bi(c.incx), y + lo * c.incy, bi(c.incy), part.data());
        return part;
      },
      [](const Pair& a, const Pair& b) {
        return Pair{a[0] + b[0], a[1] + b[1]};
      });
  std::memcpy(c.result, r.data(), sizeof r);
}

template <class T>
float small_float_dot(const DotCall& c) {
  const T* px = static_cast<const T*>(c.x);
  const T* py = static_cast<const T*>(c.y);
  return piecewise<float>(
      c.n, 2 * sizeof(T),
      [&](int64_t lo, int64_t hi) {
        std::vector<float> x(static_cast<size_t>(hi - lo)), y(static_cast<size_t>(hi - lo));
        for (int64_t i = lo; i < hi; ++i) {
          x[static_cast<size_t>(i - lo)] = px[i * c.incx].to_float();
          y[static_cast<size_t>(i - lo)] = py[i * c.incy].to_float();
        }
        return cblas_sdot(bi(hi - lo), x.data(), 1, y.data(), 1);
      },
      [](float a, float b) { return a + b; });
}

template <class T>
void integer_dot(const DotCall& c) {
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  // Modular: the low bits are exact whatever the order.
  const uint64_t sum = piecewise<uint64_t>(
      c.n, 2 * sizeof(T),
      [&](int64_t lo, int64_t hi) {
        uint64_t part = 0;
        for (int64_t i = lo; i < hi; ++i) {
          part += static_cast<uint64_t>(static_cast<int64_t>(x[i * c.incx])) *
                  static_cast<uint64_t>(static_cast<int64_t>(y[i * c.incy]));
        }
        return part;
      },
      [](uint64_t a, uint64_t b) { return a + b; });
  *static_cast<T*>(c.result) = static_cast<T>(sum);
}

}  // namespace

void blas_matmul(const MatmulCall& c) {
  if (is_integer(c.dtype) || c.dtype == DType::Bool) {
    kernels::host::integer_gemm(c);  // no BLAS
    return;
  }
  blas_ready();
  switch (c.dtype) {
    case DType::F32:
      real_gemm<float>(c, cblas_sgemm);
      return;
    case DType::F64:
      real_gemm<double>(c, cblas_dgemm);
      return;
    case DType::F16:
      small_float_gemm<half>(c);
      return;
    case DType::BF16:
      small_float_gemm<bfloat16>(c);
      return;
    case DType::C64:
      complex_gemm<float>(c, cblas_cgemm);
      return;
    case DType::C128:
      complex_gemm<double>(c, cblas_zgemm);
      return;
    default:
      fail(ErrorKind::Unsupported, "OpenBLAS has no {} matrix product", name(c.dtype));
  }
}

size_t blas_scratch_bytes(const MatmulCall& c) {
  if (is_integer(c.dtype) || c.dtype == DType::Bool) {
    return kernels::host::integer_gemm_scratch_bytes(c);
  }
  int64_t batch = 1;
  for (int d = 0; d < c.batch_ndim; ++d) batch *= c.batch_shape[d];
  int64_t bytes = 2 * batch * static_cast<int64_t>(sizeof(Item));  // a vector grown by doubling
  if (c.dtype == DType::F16 || c.dtype == DType::BF16) {
    bytes += (c.m * c.k + c.k * c.n + c.m * c.n) * 4;  // small_float_gemm's f32 copies
  }
  return static_cast<size_t>(bytes);
}

size_t blas_scratch_bytes(const DotCall& c) {
  const int64_t pieces = (c.n + kDotPiece - 1) / kDotPiece;
  int64_t bytes = pieces > 1 ? pieces * 16 : 0;  // piecewise's partial sums
  if (c.dtype == DType::F16 || c.dtype == DType::BF16) {
    // small_float_dot: a piece of each operand as f32, per range running at once.
    bytes += (kernels::host::pool_threads() + 1) * std::min(c.n, kDotPiece) * 8;
  }
  return static_cast<size_t>(bytes);
}

int blas_calls() {
  static const int n = [] {
    const char* env = std::getenv("CULUA_HOST_BLAS_CALLS");
    // Default 1: concurrent serial OpenBLAS 0.3.21 calls (Debian 12) gave different bytes for the
    // same f64 block products (tests/unit/test_host_pool.cpp's pool-size case failed 6 of 50 runs
    // with 16, 5 of 50 with 2, 0 of 50 with 1; 2026-11-27): correct results first.
    if (env == nullptr || *env == 0) return 1;
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end != 0 || v < 1 || v > kMaxBlasCalls) {
      fail(ErrorKind::Value,
           "CULUA_HOST_BLAS_CALLS: cannot use '{}' as the number of concurrent BLAS calls (an "
           "integer from 1 to {})",
           env, kMaxBlasCalls);
    }
    return static_cast<int>(v);
  }();
  return n;
}

std::string blas_library() {
  std::string config = openblas_get_config();  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."
  const size_t name_end = config.find(' ');
  const size_t version_end =
      name_end == std::string::npos ? name_end : config.find(' ', name_end + 1);
  return config.substr(0, version_end) + ", " + openblas_get_corename() + " kernels";
}

void blas_dot(const DotCall& c) {
  blas_ready();
  switch (c.dtype) {
    case DType::F32:
      *static_cast<float*>(c.result) = real_dot<float>(c, cblas_sdot);
      return;
    case DType::F64:
      *static_cast<double*>(c.result) = real_dot<double>(c, cblas_ddot);
      return;
    case DType::F16:
      *static_cast<half*>(c.result) = convert<half>(small_float_dot<half>(c));
      return;
    case DType::BF16:
      *static_cast<bfloat16*>(c.result) = convert<bfloat16>(small_float_dot<bfloat16>(c));
      return;
    case DType::C64:
      complex_dot<float>(c, cblas_cdotu_sub);
      return;
    case DType::C128:
      complex_dot<double>(c, cblas_zdotu_sub);
      return;
    case DType::I8:
      integer_dot<int8_t>(c);
      return;
    case DType::I16:
      integer_dot<int16_t>(c);
      return;
    case DType::I32:
      integer_dot<int32_t>(c);
      return;
    case DType::I64:
      integer_dot<int64_t>(c);
      return;
    case DType::U8:
      integer_dot<uint8_t>(c);
      return;
    case DType::U16:
      integer_dot<uint16_t>(c);
      return;
    case DType::U32:
      integer_dot<uint32_t>(c);
      return;
    case DType::U64:
      integer_dot<uint64_t>(c);
      return;
    default:
      fail(ErrorKind::Unsupported, "dot of {} arrays", name(c.dtype));
  }
}

}  // namespace culua::detail::host
