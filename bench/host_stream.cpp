// culua-host-baseline: the machine's own memory bandwidth for the host group of the performance
// suite (scripts/bench/suite.lua, docs/performance.md): STREAM-like native loops (copy, add,
// sum, a tiled transposed copy) on float32 arrays, run by a pool of threads over the machine's
// cores: as many as culua's host pool (the hardware threads, or $CULUA_HOST_THREADS).
//
//   culua-host-baseline [--ops LIST] [--reps R] [--sizes LIST] [--threads N]
//
// Standard output: one JSON record per line (an info record first), as every producer of the
// suite. Status 2 for bad arguments.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr double kBatchTargetMs = 2.0;
constexpr long kBatchMax = 2000;
constexpr int kBatchProbe = 3;
constexpr size_t kTile = 32;   // transposed copy: tiles of kTile x kTile floats
constexpr size_t kAlign = 16;  // chunk boundaries in floats (one 64-byte line)

const char* const kOps[] = {"copy", "add", "sum", "transpose"};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// A fixed set of threads that run one job at a time; the calling thread is worker 0. Workers
// spin briefly for the next job (a job of a few microseconds must not pay a futex wake-up),
// then sleep on the atomic.
class Pool {
 public:
  explicit Pool(unsigned n) : n_(n) {
    for (unsigned i = 1; i < n_; ++i) threads_.emplace_back([this, i] { worker(i); });
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    stop_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (auto& t : threads_) t.join();
  }

  unsigned size() const { return n_; }

  // fn(worker, workers) on every worker; returns when all are done.
  void run(const std::function<void(unsigned, unsigned)>& fn) {
    job_ = &fn;
    pending_.store(n_ - 1);
    generation_.fetch_add(1);
    generation_.notify_all();
    fn(0, n_);
    for (int spin = 0;; ++spin) {
      const unsigned left = pending_.load();
      if (left == 0) break;
      if (spin < kSpins) {
        cpu_relax();
      } else {
        pending_.wait(left);
      }
    }
  }

 private:
  static constexpr int kSpins = 2000;

  void worker(unsigned id) {
    uint64_t seen = 0;
    for (;;) {
      for (int spin = 0;; ++spin) {
        const uint64_t g = generation_.load();
        if (g != seen) {
          seen = g;
          break;
        }
        if (spin < kSpins) {
          cpu_relax();
        } else {
          generation_.wait(g);
        }
      }
      if (stop_.load()) return;
      (*job_)(id, n_);
      if (pending_.fetch_sub(1) == 1) pending_.notify_one();
    }
  }

  const unsigned n_;
  std::vector<std::thread> threads_;
  const std::function<void(unsigned, unsigned)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  std::atomic<bool> stop_{false};
};

// [begin, end) of worker w of n over count elements, boundaries on 64-byte lines.
std::pair<size_t, size_t> chunk(size_t count, unsigned w, unsigned n) {
  const size_t begin = (count * w / n) & ~(kAlign - 1);
  const size_t end = w + 1 == n ? count : (count * (w + 1) / n) & ~(kAlign - 1);
  return {begin, std::max(begin, end)};
}

struct Buffer {
  explicit Buffer(size_t n)
      : count(n),
        data(static_cast<float*>(
            ::operator new[](std::max<size_t>(n, 1) * sizeof(float), std::align_val_t(4096)))) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { ::operator delete[](data, std::align_val_t(4096)); }
  size_t count;
  float* data;
};

// Filled by the workers that will use each part (first touch: the pages land near them).
void fill(Pool& pool, Buffer& b, float v) {
  pool.run([&](unsigned w, unsigned n) {
    const auto [lo, hi] = chunk(b.count, w, n);
    std::fill(b.data + lo, b.data + hi, v);
  });
}

void copy_op(Pool& pool, const Buffer& src, Buffer& dst) {
  pool.run([&](unsigned w, unsigned n) {
    const auto [lo, hi] = chunk(src.count, w, n);
    std::memcpy(dst.data + lo, src.data + lo, (hi - lo) * sizeof(float));
  });
}

void add_op(Pool& pool, const Buffer& a, const Buffer& b, Buffer& c) {
  pool.run([&](unsigned w, unsigned n) {
    const auto [lo, hi] = chunk(a.count, w, n);
    const float* __restrict x = a.data;
    const float* __restrict y = b.data;
    float* __restrict z = c.data;
    for (size_t i = lo; i < hi; ++i) z[i] = x[i] + y[i];
  });
}

// 16 independent float lanes per worker (vectorized without reassociation), added in double.
double sum_op(Pool& pool, const Buffer& a, std::vector<double>& partial) {
  pool.run([&](unsigned w, unsigned n) {
    const auto [lo, hi] = chunk(a.count, w, n);
    const float* __restrict x = a.data;
    float lane[16] = {};
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
      for (size_t k = 0; k < 16; ++k) lane[k] += x[i + k];
    }
    double s = 0;
    for (; i < hi; ++i) s += x[i];
    for (float v : lane) s += v;
    partial[w * 8] = s;  // one cache line per worker
  });
  double s = 0;
  for (unsigned w = 0; w < pool.size(); ++w) s += partial[w * 8];
  return s;
}

// dst = src^T for n x n: each worker takes a band of destination rows, tile by tile (32 x 32:
// faster here than 16, 64 or a tile staged through a local buffer).
void transpose_op(Pool& pool, const Buffer& src, Buffer& dst, size_t n) {
  pool.run([&](unsigned w, unsigned workers) {
    const size_t tiles = (n + kTile - 1) / kTile;
    const size_t t0 = tiles * w / workers, t1 = tiles * (w + 1) / workers;
    const float* __restrict s = src.data;
    float* __restrict d = dst.data;
    for (size_t ti = t0; ti < t1; ++ti) {
      const size_t i0 = ti * kTile, ni = std::min(n, i0 + kTile) - i0;
      for (size_t j0 = 0; j0 < n; j0 += kTile) {
        const size_t nj = std::min(n, j0 + kTile) - j0;
        for (size_t i = 0; i < ni; ++i) {
          for (size_t j = 0; j < nj; ++j) d[(i0 + i) * n + j0 + j] = s[(j0 + j) * n + i0 + i];
        }
      }
    }
  });
}

// Timing: the suite's host batch rule ------------------------------------------------------------

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double batch_ms(const std::function<void()>& fn, long batch) {
  const double t0 = now_s();
  for (long i = 0; i < batch; ++i) fn();
  return (now_s() - t0) * 1e3 / static_cast<double>(batch);
}

struct Timing {
  std::vector<double> ms;  // per operation, one per repetition
  long batch = 1;
};

// Warm-up (2 calls), a probe of 3 calls, then `reps` batches of about 2 ms (1..2000 calls).
Timing batched(const std::function<void()>& fn, int reps) {
  fn();
  fn();
  const double probe = batch_ms(fn, kBatchProbe);
  Timing t;
  t.batch = probe <= 0 ? kBatchMax : std::clamp(std::lround(kBatchTargetMs / probe), 1L, kBatchMax);
  for (int r = 0; r < reps; ++r) t.ms.push_back(batch_ms(fn, t.batch));
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void emit_rate(const char* op, size_t size, const Timing& t, double bytes, const std::string& how) {
  std::vector<double> gbps;
  for (double ms : t.ms) gbps.push_back(bytes / (std::max(ms, 1e-9) * 1e6));
  std::printf(
      "{\"impl\":\"native_host\",\"op\":\"host_%s\",\"size\":%zu,\"unit\":\"GB/s\",\"median\":%.6g,"
      "\"min\":%.6g,\"max\":%.6g,\"n\":%zu,\"batch\":%ld,\"how\":\"%s\"}\n",
      op, size, median(gbps), *std::min_element(gbps.begin(), gbps.end()),
      *std::max_element(gbps.begin(), gbps.end()), gbps.size(), t.batch, how.c_str());
  std::fflush(stdout);
}

void emit_error(const char* op, size_t size, const char* what) {
  std::string msg;
  for (const char* p = what; *p; ++p) {
    if (*p == '"' || *p == '\\') msg += '\\';
    msg += static_cast<unsigned char>(*p) < 0x20 ? ' ' : *p;
  }
  std::printf("{\"impl\":\"native_host\",\"op\":\"host_%s\",\"size\":%zu,\"error\":\"%s\"}\n", op,
              size, msg.c_str());
  std::fflush(stdout);
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(what);
}

void measure(Pool& pool, const std::string& op, size_t size, int reps) {
  const size_t count = size / sizeof(float);
  const std::string threads = std::to_string(pool.size()) + " threads";
  if (op == "copy") {
    Buffer src(count), dst(count);
    fill(pool, src, 1.5f);
    fill(pool, dst, 0.0f);
    const Timing t = batched([&] { copy_op(pool, src, dst); }, reps);
    check(dst.data[count - 1] == 1.5f, "copy: wrong result");
    emit_rate("copy", size, t, 2.0 * static_cast<double>(size), "memcpy per thread, " + threads);
  } else if (op == "add") {
    Buffer a(count), b(count), c(count);
    fill(pool, a, 1.5f);
    fill(pool, b, 2.25f);
    fill(pool, c, 0.0f);
    const Timing t = batched([&] { add_op(pool, a, b, c); }, reps);
    check(c.data[0] == 3.75f && c.data[count - 1] == 3.75f, "add: wrong result");
    emit_rate("add", size, t, 3.0 * static_cast<double>(size),
              "c[i] = a[i] + b[i] loop, " + threads);
  } else if (op == "sum") {
    Buffer a(count);
    fill(pool, a, 1.0f);
    std::vector<double> partial(8 * pool.size());
    double got = 0;
    const Timing t = batched([&] { got = sum_op(pool, a, partial); }, reps);
    check(std::fabs(got - static_cast<double>(count)) <= 1e-5 * static_cast<double>(count),
          "sum: wrong result");
    emit_rate("sum", size, t, static_cast<double>(size),
              "16 float lanes per thread, partial sums added, " + threads);
  } else if (op == "transpose") {
    const auto n = static_cast<size_t>(std::llround(std::sqrt(static_cast<double>(count))));
    if (n * n * sizeof(float) != size) {
      throw std::runtime_error("transpose: the size is not 4*n*n bytes");
    }
    Buffer src(count), dst(count);
    pool.run([&](unsigned w, unsigned workers) {
      const auto [lo, hi] = chunk(count, w, workers);
      for (size_t i = lo; i < hi; ++i) src.data[i] = static_cast<float>(i % 4099);
    });
    fill(pool, dst, 0.0f);
    const Timing t = batched([&] { transpose_op(pool, src, dst, n); }, reps);
    check(dst.data[1] == src.data[n] && dst.data[n * n - 2] == src.data[n * n - 1 - n],
          "transpose: wrong result");
    emit_rate("transpose", size, t, 2.0 * static_cast<double>(size),
              std::to_string(n) + "x" + std::to_string(n) + " dst = src^T, " +
                  std::to_string(kTile) + "x" + std::to_string(kTile) + " tiles, " + threads);
  }
}

// Command line
// -------------------------------------------------------------------------------------

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "culua-host-baseline: %s\n"
               "usage: culua-host-baseline [--ops copy,add,sum,transpose] [--reps R] "
               "[--sizes LIST] [--threads N]\n"
               "  sizes: comma-separated bytes with an optional suffix K, M or G\n",
               why.c_str());
  std::exit(2);
}

size_t parse_size(const std::string& t) {
  size_t end = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(t, &end);
  } catch (const std::exception&) {
    usage("bad size '" + t + "'");
  }
  const std::string suffix = t.substr(end);
  size_t scale = 1;
  if (suffix == "K" || suffix == "k") {
    scale = size_t{1} << 10;
  } else if (suffix == "M" || suffix == "m") {
    scale = size_t{1} << 20;
  } else if (suffix == "G" || suffix == "g") {
    scale = size_t{1} << 30;
  } else if (!suffix.empty()) {
    usage("bad size '" + t + "'");
  }
  const size_t bytes = static_cast<size_t>(v) * scale;
  if (bytes == 0 || t[0] == '-' || t[0] == '+' || bytes % 4 != 0) {
    usage("bad size '" + t + "' (a positive multiple of 4 bytes)");
  }
  return bytes;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    const size_t comma = s.find(',', pos);
    out.push_back(s.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int positive(const std::string& t, const char* what) {
  size_t end = 0;
  long v = 0;
  try {
    v = std::stol(t, &end);
  } catch (const std::exception&) {
    usage(std::string("bad ") + what + " '" + t + "'");
  }
  if (end != t.size() || v <= 0 || v > 1 << 20 || t[0] == '+') {
    usage(std::string("bad ") + what + " '" + t + "' (a positive integer)");
  }
  return static_cast<int>(v);
}

unsigned default_threads() {
  if (const char* env = std::getenv("CULUA_HOST_THREADS"); env && *env) {
    return static_cast<unsigned>(positive(env, "CULUA_HOST_THREADS"));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> ops(std::begin(kOps), std::end(kOps));
  int reps = 11;
  std::vector<size_t> sizes;
  for (size_t s = size_t{1} << 20; s <= size_t{256} << 20; s *= 4) sizes.push_back(s);
  unsigned threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--ops") {
      ops = split(value());
      for (const auto& op : ops) {
        if (std::find(std::begin(kOps), std::end(kOps), op) == std::end(kOps)) {
          usage("unknown op '" + op + "'");
        }
      }
    } else if (a == "--reps") {
      reps = positive(value(), "--reps");
    } else if (a == "--sizes") {
      sizes.clear();
      for (const auto& t : split(value())) sizes.push_back(parse_size(t));
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(positive(value(), "--threads"));
    } else if (a == "-h" || a == "--help") {
      std::printf("culua-host-baseline [--ops LIST] [--reps R] [--sizes LIST] [--threads N]\n");
      return 0;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  if (threads == 0) threads = default_threads();
  Pool pool(threads);
  std::printf("{\"impl\":\"native_host\",\"info\":{\"threads\":%u,\"hardware_threads\":%u}}\n",
              threads, std::thread::hardware_concurrency());
  std::fflush(stdout);
  for (const auto& op : ops) {
    for (size_t size : sizes) {
      try {
        measure(pool, op, size, reps);
      } catch (const std::exception& e) {
        emit_error(op.c_str(), size, e.what());
      }
    }
  }
  return 0;
}
