#include "host/host_blas.hpp"

#include <cblas.h>

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
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

// Matrix products run on OpenBLAS's own threads (Debian 12's pthread build of OpenBLAS 0.3.21),
// one product at a time, as numpy runs them; products too small for OpenBLAS's threads run on
// the calling thread, several at once (the items of a batch on the host pool), and so do the
// items of a batch of many small products, OpenBLAS's threads set to one meanwhile.
//
// Why one at a time: OpenBLAS's thread server hands a product's pieces to whichever of its
// threads are idle, and several callers at once share that server (not shown safe in 0.3.21),
// so threaded calls are serialized by a lock. A product OpenBLAS runs on the calling thread
// touches the thread server not at all and takes its buffers from a table under OpenBLAS's own
// lock (driver/others/memory.c, built with SMP), so those run concurrently: Debian's serial
// build, used before, lacks that lock (built without USE_LOCKING), and concurrent calls into it
// gave wrong bytes (6 of 50 runs, 2026-11-27). tests/unit/test_host_blas.cpp compares the bytes
// of 200 concurrent products with each product alone.
//
// Bits: a product's bits depend on how many threads OpenBLAS runs it on (its threaded driver
// splits K and tiles C by thread count), not on the host pool's size: OpenBLAS keeps its own
// count (blas_threads()).

// Floating-point operations a piece of parallel work should have at least (about 50 us).
constexpr int64_t kMinFlops = int64_t{1} << 20;
// At most this many floating-point operations in one OpenBLAS call (about 30 ms on 16 threads):
// a larger product runs in pieces of columns, between which a cut-short or abandoned task stops
// and the process may exit (2048^3 is half of it: one call).
constexpr double kMaxCallFlops = 34359738368.0;  // 2^35
// At most this many floating-point operations in an item of a batch whose items run at once on
// the pool (256^3: about 0.2 ms on one thread).
constexpr double kMaxItemFlops = 2.0 * 256 * 256 * 256;
// Elements of a dot product's piece: partial products of fixed pieces are added in order. At most
// 10000: OpenBLAS 0.3.21's ddot and zdot run longer vectors on its threads (kernel/x86_64/ddot.c),
// whose bits would then follow the thread count, and pieces run on the pool at once.
constexpr int64_t kDotPiece = 8 * 1024;

// OpenBLAS 0.3.21's gemm runs on the calling thread when m n k is at most 65536 * 4 (real) or
// 8192 * 4 (complex) (interface/gemm.c: SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD), on its
// threads above.
bool uses_blas_threads(int64_t m, int64_t n, int64_t k, bool complex) {
  const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return mnk > (complex ? 8192.0 : 65536.0) * 4;
}

// --- OpenBLAS's set-up ---
//
// Which kernels run. Debian 12's OpenBLAS 0.3.21 (DYNAMIC_ARCH) picks its kernels from the CPU's
// family and model, and falls back to its Prescott (SSE3) kernels on models it does not know,
// such as the virtualized Xeons of cloud machines: f32 gemm at 31-32 GFLOP/s a thread where its
// SkylakeX kernels reach 139-151 (2026-11-26, both the build machine and the H100 machine's host
// picked Prescott). So the core type follows the CPU's features (what the kernels need, checked
// with the OS's support for the registers): AVX-512 F/CD/BW/DQ/VL -> SkylakeX, else AVX2 and FMA
// -> Haswell, else OpenBLAS's own choice. A user's OPENBLAS_CORETYPE wins.
//
// Threads. OpenBLAS's own constructor would start a thread per core in every culua process (60 ms
// of start-up on a 16-core machine, even on the CUDA backend). So a constructor of priority 101,
// before OpenBLAS's (default priority: it then finds itself set up), runs the set-up with
// OPENBLAS_NUM_THREADS=1 (no thread started); the others start at the first product that uses
// them (on_blas_threads). Idle OpenBLAS threads spin (sched_yield) before they sleep, for 2^28
// TSC ticks by default (about 0.1 s), taking cores from the host pool's work that follows a
// product; OPENBLAS_THREAD_TIMEOUT=20 makes it 2^20 (about 0.4 ms), still longer than the gap
// between products of a loop (waking 15 sleeping threads costs tens of microseconds, a tenth of a
// 512^3 product). A user's OPENBLAS_THREAD_TIMEOUT wins.
//
// The variables are set for the set-up only, while the process has one thread, then restored, so
// the script and its children see the user's environment.
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

// An environment variable set to `value` (when not null, and when the user has not set it unless
// `replace`) while it lives; the user's value, or none, comes back after.
class SetUpVariable {
 public:
  SetUpVariable(const char* name, const char* value, bool replace) : name_(name) {
    const char* user = std::getenv(name);
    if (user != nullptr) user_ = user;
    had_ = user != nullptr;
    if (value != nullptr && (replace || !had_)) set_ = ::setenv(name, value, 1) == 0;
  }
  ~SetUpVariable() {
    if (!set_) return;
    if (had_) {
      ::setenv(name_, user_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  SetUpVariable(const SetUpVariable&) = delete;
  SetUpVariable& operator=(const SetUpVariable&) = delete;

 private:
  const char* name_;
  std::string user_;
  bool had_ = false;
  bool set_ = false;
};

__attribute__((constructor(101))) void set_up_openblas() {
  if (gotoblas_init == nullptr) return;
  const SetUpVariable core("OPENBLAS_CORETYPE", core_for_cpu(), false);
  const SetUpVariable threads("OPENBLAS_NUM_THREADS", "1", true);
  const SetUpVariable timeout("OPENBLAS_THREAD_TIMEOUT", "20", false);
  gotoblas_init();
}

// --- Calls and the exit ---
//
// OpenBLAS's destructor (gotoblas_quit, an ELF destructor of the library that holds it) stops its
// threads: it marks each and joins it. A thread still busy with a piece of a product then
// overwrites the mark when it finishes, and the exit hangs in the join (seen: os.exit while a
// product ran; a plain program crashed instead, 3 of 3). So every call into OpenBLAS is counted
// (BlasCall), and an exit handler (stop_blas_threads), registered when the threads start and so
// run before the libraries' destructors, waits for the calls in progress (a piece of a product at
// most, kMaxCallFlops), then stops the threads itself. Products after it (static objects'
// destructors, a worker still running) run on the calling thread.
extern "C" int blas_thread_shutdown_(void);
// Nonzero while OpenBLAS's threads run (driver/others/blas_server.c).
extern "C" int blas_server_avail;

std::atomic<int> g_calls{0};
std::atomic<bool> g_stopping{false};
// One product at a time on OpenBLAS's threads.
std::mutex g_threaded;
bool g_threads_started = false;  // under g_threaded
bool g_threads_stopped = false;  // under g_threaded: by stop_blas_threads, for good

class BlasCall {
 public:
  BlasCall() {
    // Sequentially consistent with stop_blas_threads: it sees this call, or this call sees it.
    while (g_calls.fetch_add(1), g_stopping.load()) {
      g_calls.fetch_sub(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~BlasCall() { g_calls.fetch_sub(1); }
  BlasCall(const BlasCall&) = delete;
  BlasCall& operator=(const BlasCall&) = delete;
};

void stop_blas_threads() {
  g_stopping.store(true);
  while (g_calls.load() > 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  {
    const std::lock_guard<std::mutex> lock(g_threaded);  // free: its holders are counted calls
    g_threads_stopped = true;                            // nothing sets OpenBLAS's threads again
    // Not when they are stopped already: by OpenBLAS's destructor (a library unloaded by dlclose
    // runs this handler after its destructors) or a fork; openblas_set_num_threads would restart
    // them.
    if (blas_server_avail != 0) {
      openblas_set_num_threads(1);  // from now on on the calling thread
      blas_thread_shutdown_();
    }
  }
  g_stopping.store(false);
}

// OpenBLAS's threads inherit the signal mask of the thread that starts them: none is theirs to
// take (Ctrl-C goes to the application's threads, as with the host pool's). They start at the
// first threaded call, and again after a fork (OpenBLAS's fork handler stops them).
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// Runs gemm() (one OpenBLAS call that may use its threads) alone on OpenBLAS's threads.
template <class Gemm>
void on_blas_threads(const Gemm& gemm) {
  kernels::host::check_stop();
  const BlasCall call;
  const std::lock_guard<std::mutex> lock(g_threaded);
  const SignalsBlocked blocked;
  if (!g_threads_started) {
    g_threads_started = true;
    if (blas_threads() > 1) {
      openblas_set_num_threads(blas_threads());
      std::atexit(stop_blas_threads);
    }
  }
  gemm();
}

// Runs f() — OpenBLAS calls on the pool, none of them nesting a BlasCall — with OpenBLAS's
// threads set to one meanwhile, so that every product runs on its calling thread whatever its
// size (the lock held: no product runs on OpenBLAS's threads meanwhile).
template <class F>
void with_one_blas_thread(const F& f) {
  kernels::host::check_stop();
  const BlasCall call;
  const std::lock_guard<std::mutex> lock(g_threaded);
  const SignalsBlocked blocked;
  // OpenBLAS's threads back when f() returns or throws.
  struct OneThread {
    bool many = g_threads_started && !g_threads_stopped && blas_threads() > 1;
    OneThread() {
      if (many) openblas_set_num_threads(1);
    }
    ~OneThread() {
      if (many) openblas_set_num_threads(blas_threads());
    }
    OneThread(const OneThread&) = delete;
    OneThread& operator=(const OneThread&) = delete;
  } const one;
  f();
}

// One item of a batch: element offsets of A, B and C.
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

// Element offset of the columns of op(B) from j0.
int64_t b_columns(const MatmulCall& c, int64_t j0) {
  return c.b.trans ? j0 : j0 * c.b.ld;
}

// Runs gemm(item, j0, cols) — the columns [j0, j0 + cols) of C of one item, one OpenBLAS call —
// over every item (what runs where depends on the shape alone):
// - products OpenBLAS runs on the calling thread: whole items, at once on the pool;
// - a batch of at least as many items as OpenBLAS has threads, each item at most kMaxItemFlops:
//   whole items at once on the pool, OpenBLAS's threads set to one meanwhile (a product of a few
//   million flops spends much of its time handing pieces to 16 threads and waiting for them);
// - else one call after another on OpenBLAS's threads, in pieces of columns of at most about
//   kMaxCallFlops.
template <class Gemm>
void run_products(const MatmulCall& c, bool complex, const Gemm& gemm) {
  const std::vector<Item> items = batch_items(c);
  const double flops = 2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) *
                       static_cast<double>(std::max<int64_t>(c.k, 1)) * (complex ? 4 : 1);
  const auto count = static_cast<int64_t>(items.size());
  const int64_t grain =
      std::max<int64_t>(1, kMinFlops / static_cast<int64_t>(std::max(1.0, flops)));
  if (!uses_blas_threads(c.m, c.n, c.k, complex)) {
    parallel_for(count, grain, [&](int64_t lo, int64_t hi) {
      const BlasCall call;
      for (int64_t i = lo; i < hi; ++i) gemm(items[static_cast<size_t>(i)], 0, c.n);
    });
    return;
  }
  if (count > 1 && count >= blas_threads() && flops <= kMaxItemFlops) {
    with_one_blas_thread([&] {
      parallel_for(count, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) gemm(items[static_cast<size_t>(i)], 0, c.n);
      });
    });
    return;
  }
  const auto pieces = static_cast<int64_t>(std::ceil(flops / kMaxCallFlops));
  int64_t width = c.n;
  if (pieces > 1) width = std::min(c.n, ((c.n + pieces - 1) / pieces + 63) / 64 * 64);
  for (const Item& item : items) {
    for (int64_t j0 = 0; j0 < c.n; j0 += width) {
      on_blas_threads([&] { gemm(item, j0, std::min(width, c.n - j0)); });
    }
  }
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
      out.resize(static_cast<size_t>(m * n));  // beta 0: OpenBLAS writes every element
    }
    // The packed operands as a one-item f32 product.
    MatmulCall packed = c;
    packed.dtype = DType::F32;
    packed.batch_ndim = 0;
    packed.a.ld = lda;
    packed.b.ld = ldb;
    run_products(packed, false, [&](const Item&, int64_t j0, int64_t cols) {
      cblas_sgemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(m), bi(cols), bi(k), alpha,
                  a.data(), bi(lda), b.data() + b_columns(packed, j0), bi(ldb), beta,
                  out.data() + j0 * ldo, bi(ldo));
    });
    parallel_for(n, std::max<int64_t>(1, grain_for(6) / std::max<int64_t>(1, m)),
                 [&](int64_t lo, int64_t hi) {
                   for (int64_t col = lo; col < hi; ++col) {
                     for (int64_t row = 0; row < m; ++row) {
                       dst[row + col * c.c.ld] =
                           convert<T>(out[static_cast<size_t>(row + col * ldo)]);
                     }
                   }
                 });
  }
}

// beta = 0 must not read C (it may hold NaN): OpenBLAS 0.3.21 stores zeros then, never scaling C
// (its gemm_beta kernels, gemm_beta.S, zgemm_beta.S and the SkylakeX ones, and its small-matrix
// kernels for beta 0), so C is not cleared here (a serial memset of C cost up to a tenth of a
// threaded product).
template <class T, class Gemm>
void real_gemm(const MatmulCall& c, Gemm gemm) {
  const T alpha = static_cast<T>(c.alpha[0]), beta = static_cast<T>(c.beta[0]);
  run_products(c, false, [&](const Item& item, int64_t j0, int64_t cols) {
    gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(c.m), bi(cols), bi(c.k), alpha,
         at<const T>(c.a.data, item.a), bi(c.a.ld),
         at<const T>(c.b.data, item.b + b_columns(c, j0)), bi(c.b.ld), beta,
         at<T>(c.c.data, item.c + j0 * c.c.ld), bi(c.c.ld));
  });
}

template <class R, class Gemm>
void complex_gemm(const MatmulCall& c, Gemm gemm) {
  const R alpha[2] = {static_cast<R>(c.alpha[0]), static_cast<R>(c.alpha[1])};
  const R beta[2] = {static_cast<R>(c.beta[0]), static_cast<R>(c.beta[1])};
  run_products(c, true, [&](const Item& item, int64_t j0, int64_t cols) {
    gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(c.m), bi(cols), bi(c.k), alpha,
         at<const complex<R>>(c.a.data, item.a), bi(c.a.ld),
         at<const complex<R>>(c.b.data, item.b + b_columns(c, j0)), bi(c.b.ld), beta,
         at<complex<R>>(c.c.data, item.c + j0 * c.c.ld), bi(c.c.ld));
  });
}

// Adds piece(lo, hi) over fixed pieces of [0, n) in order (add(x, y)), the pieces computed on the
// pool; one piece (the whole product) up to kDotPiece elements.
template <class Acc, class Piece, class Add>
Acc piecewise(int64_t n, int64_t bytes_per_index, const Piece& piece, const Add& add) {
  const int64_t pieces = (n + kDotPiece - 1) / kDotPiece;
  if (pieces <= 1) {
    const BlasCall call;
    return piece(0, n);
  }
  std::vector<Acc> part(static_cast<size_t>(pieces));
  parallel_for(pieces, std::max<int64_t>(1, grain_for(bytes_per_index) / kDotPiece),
               [&](int64_t lo, int64_t hi) {
                 const BlasCall call;
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

int blas_threads() {
  // As OpenBLAS would choose at its set-up (driver/others/memory.c, blas_get_cpu_number): the first
  // positive of OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS and OMP_NUM_THREADS, else one per processor
  // this process may run on; at most that many, and at most 64 (Debian's build, MAX_THREADS).
  static const int n = [] {
    int wanted = 0;
    for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
      const char* value = std::getenv(name);
      if (value != nullptr && std::atoi(value) > 0) {
        wanted = std::atoi(value);
        break;
      }
    }
    const int procs = std::min(std::max(1, openblas_get_num_procs()), 64);
    return wanted > 0 ? std::min(wanted, procs) : procs;
  }();
  return n;
}

std::string blas_library() {
  std::string config = openblas_get_config();  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."
  const size_t name_end = config.find(' ');
  const size_t version_end =
      name_end == std::string::npos ? name_end : config.find(' ', name_end + 1);
  const int threads = blas_threads();
  return config.substr(0, version_end) + ", " + openblas_get_corename() + " kernels, " +
         std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

void blas_dot(const DotCall& c) {
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
