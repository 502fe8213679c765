// The host backend's products through OpenBLAS under concurrency: many products of mixed sizes
// (square and not, transposed operands, narrowed views, f32, f64 and a few c64 and f16, batches,
// dots), some small enough for OpenBLAS's calling thread, some on its threads, batches of many
// items with its threads set to one (host_blas.cpp, run_products), queued on 16 host streams at
// once (16 threads calling matmul), must give the bytes of each product computed alone. And beta
// 0 never reads C, small or large.
//
// CULUA_TEST_BLAS_RUNS sets how many times the 200 products run at once (default 3: quick on CI's
// 2 cores); the full check is CULUA_TEST_BLAS_RUNS=200 on a 16-core machine. The test prints how
// many runs differed and fails on any.
#include "helpers.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "core/ops/linalg.hpp"
#include "core/ops/random.hpp"
#include "host/host_blas.hpp"
#include "kernels/host_pool.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

constexpr int kStreams = 16;
constexpr int kProducts = 200;

int runs_from_environment() {
  const char* env = std::getenv("CULUA_TEST_BLAS_RUNS");
  if (env == nullptr || *env == 0) return 3;
  const int runs = std::atoi(env);
  REQUIRE(runs >= 1);
  return runs;
}

// One product (or dot) of the mix: its operands are views into shared random matrices.
struct Product {
  Array a, b;
  MatmulOptions options;
  bool dot = false;
  std::string what;
};

// A rows x cols view at (row, col) of a (batch x) size x size base, or the whole batch.
Array block(const Array& base, int64_t row, int64_t col, int64_t rows, int64_t cols) {
  const int d = base.ndim() - 2;
  return base.with_layout(base.layout().narrow(d, row, rows).narrow(d + 1, col, cols));
}

class Mix {
 public:
  explicit Mix(Runtime& rt) : rt_(rt) {
    for (const DType t : {DType::F32, DType::F64, DType::C64}) {
      bases_.push_back(rand(Shape{kBase, kBase}, t));
      bases_.push_back(rand(Shape{kBase, kBase}, t));
      batched_.push_back(rand(Shape{kBatch, kBatchBase, kBatchBase}, t));
      batched_.push_back(rand(Shape{kBatch, kBatchBase, kBatchBase}, t));
    }
    bases_.push_back(astype(rt, bases_[0], DType::F16));
    bases_.push_back(astype(rt, bases_[1], DType::F16));
    vectors_.push_back(rand(Shape{kVector}, DType::F32));
    vectors_.push_back(rand(Shape{kVector}, DType::F64));
    vectors_.push_back(rand(Shape{kVector}, DType::C128));
    std::mt19937_64 rng(2026);
    for (int i = 0; i < kProducts; ++i) products_.push_back(make(rng));
  }

  const std::vector<Product>& products() const { return products_; }

  Array run(const Product& p, Stream* stream) const {
    if (p.dot) return dot(rt_, p.a, p.b, nullptr, stream);
    MatmulOptions o = p.options;
    o.stream = stream;
    return matmul(rt_, p.a, p.b, o);
  }

 private:
  static constexpr int64_t kBase = 640;
  static constexpr int64_t kBatch = 24;  // at least OpenBLAS's threads on a 16-core machine
  static constexpr int64_t kBatchBase = 160;
  static constexpr int64_t kVector = 100003;

  Array rand(const Shape& s, DType t) {
    return random(rt_, RandomDistribution::Normal, s, t, Location::Device, nullptr, seed_++);
  }

  // Sizes: a third small (OpenBLAS's calling thread, m n k <= 64^3), a third medium, a third
  // up to the bases' size (on OpenBLAS's threads).
  static int64_t size(std::mt19937_64& rng, int64_t top) {
    const int kind = static_cast<int>(rng() % 3);
    const int64_t lo = kind == 0 ? 1 : kind == 1 ? 40 : top / 2;
    const int64_t hi = kind == 0 ? 64 : kind == 1 ? top / 2 : top;
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  }

  Product make(std::mt19937_64& rng) {
    Product p;
    const int r = static_cast<int>(rng() % 100);
    if (r < 5) {  // dots: pieces of the long vectors on the pool
      p.dot = true;
      const Array& v = vectors_[rng() % vectors_.size()];
      const int64_t n = 1 + static_cast<int64_t>(rng() % kVector);
      const int64_t start = static_cast<int64_t>(rng() % static_cast<uint64_t>(kVector - n + 1));
      p.a = v.with_layout(v.layout().narrow(0, start, n));
      p.b = v.with_layout(v.layout().narrow(0, kVector - n, n));
      p.what = "dot " + std::string(name(v.dtype())) + " n " + std::to_string(n);
      return p;
    }
    // f32 mostly, then f64; a few c64 and f16.
    const int t = r < 60 ? 0 : r < 90 ? 1 : r < 95 ? 2 : 3;
    const bool batched = t < 3 && rng() % 5 == 0;
    p.options.ta = rng() % 3 == 0;
    p.options.tb = rng() % 3 == 0;
    const int64_t top = batched ? kBatchBase : kBase;
    const int64_t m = size(rng, top), n = size(rng, top), k = size(rng, top);
    // Stored shapes: op(a) is m x k, op(b) is k x n.
    const int64_t ar = p.options.ta ? k : m, ac = p.options.ta ? m : k;
    const int64_t br = p.options.tb ? n : k, bc = p.options.tb ? k : n;
    const auto offset = [&](int64_t extent) {
      return static_cast<int64_t>(rng() % static_cast<uint64_t>(top - extent + 1));
    };
    const std::vector<Array>& from = batched ? batched_ : bases_;
    const size_t first = t == 3 ? bases_.size() - 2 : static_cast<size_t>(2 * t);
    p.a = block(from[first], offset(ar), offset(ac), ar, ac);
    p.b = block(from[first + 1], offset(br), offset(bc), br, bc);
    if (batched && rng() % 2 == 0) {  // broadcast: one b for every item of a
      p.b = block(bases_[first + 1], offset(br), offset(bc), br, bc);
    }
    p.what = std::string(name(p.a.dtype())) + (batched ? " batched " : " ") + std::to_string(m) +
             "x" + std::to_string(n) + "x" + std::to_string(k) + (p.options.ta ? " ta" : "") +
             (p.options.tb ? " tb" : "");
    return p;
  }

  Runtime& rt_;
  uint64_t seed_ = 7;
  std::vector<Array> bases_, batched_, vectors_;
  std::vector<Product> products_;
};

}  // namespace

TEST_CASE("host BLAS: products at once on 16 streams give the bytes of each alone",
          "[linalg][blas]") {
  Runtime rt(host_options());
  const Mix mix(rt);
  std::vector<std::shared_ptr<Stream>> streams;
  for (int i = 0; i < kStreams; ++i)
    streams.push_back(rt.backend().create_stream(0, StreamPriority::Normal));

  // Each product alone: nothing else runs meanwhile.
  std::vector<std::vector<unsigned char>> alone;
  int threaded = 0, batches_at_once = 0, calling = 0, dots = 0;
  for (const Product& p : mix.products()) {
    const Array r = mix.run(p, nullptr);
    alone.push_back(read_contiguous(rt, r));
    dots += p.dot;
    if (!p.dot) {
      const int64_t m = p.a.shape()[p.a.ndim() - (p.options.ta ? 1 : 2)];
      const int64_t k = p.a.shape()[p.a.ndim() - (p.options.ta ? 2 : 1)];
      const int64_t n = p.b.shape()[p.b.ndim() - (p.options.tb ? 2 : 1)];
      const double mnk = static_cast<double>(m) * n * k;
      const bool on_threads = mnk > 65536.0 * 4;
      const int64_t items = p.a.ndim() == 3 ? p.a.shape()[0] : 1;
      const bool at_once = on_threads && items >= host::blas_threads() && mnk <= 256.0 * 256 * 256;
      threaded += on_threads && !at_once;
      batches_at_once += at_once;
      calling += !on_threads;
    }
  }

  const int runs = runs_from_environment();
  int differing_runs = 0, reported = 0;
  for (int run = 0; run < runs; ++run) {
    std::vector<Array> results;
    results.reserve(mix.products().size());
    for (size_t i = 0; i < mix.products().size(); ++i) {
      // Each run puts the products on other streams, so that other products meet.
      Stream* s = streams[(i + static_cast<size_t>(run)) % streams.size()].get();
      results.push_back(mix.run(mix.products()[i], s));
    }
    rt.backend().synchronize_device(0);
    int differing = 0;
    for (size_t i = 0; i < results.size(); ++i) {
      if (read_contiguous(rt, results[i]) != alone[i]) {
        if (++reported <= 10) {
          UNSCOPED_INFO("run " << run << ": product " << i << " (" << mix.products()[i].what
                               << ") differs from the product alone");
        }
        ++differing;
      }
    }
    differing_runs += differing > 0;
  }
  std::printf(
      "host BLAS: %d of %d runs differed (%d products on %d streams: %d on OpenBLAS's threads, %d "
      "batches with OpenBLAS's threads set to one, %d on the calling thread, %d dots; %s; host "
      "pool %d threads)\n",
      differing_runs, runs, kProducts, kStreams, threaded, batches_at_once, calling, dots,
      host::blas_library().c_str(), kernels::host::pool_threads());
  // The mix reaches every path.
  CHECK(threaded >= kProducts / 4);
  CHECK(batches_at_once >= 1);
  CHECK(calling >= kProducts / 10);
  CHECK(dots >= 1);
  CHECK(differing_runs == 0);
  CHECK_FALSE(rt.backend().poisoned());
}

TEST_CASE("host BLAS: beta 0 never reads C, on the calling thread and on OpenBLAS's threads",
          "[linalg][blas]") {
  Runtime rt(host_options());
  for (const DType t : {DType::F32, DType::F64, DType::C64, DType::C128, DType::F16}) {
    for (const int64_t size : {int64_t{20}, int64_t{300}}) {
      INFO(name(t) << " " << size << "^3");
      const Array a = astype(rt,
                             random(rt, RandomDistribution::Normal, Shape{size, size}, DType::F64,
                                    Location::Device, nullptr, uint64_t{1}),
                             t);
      const Array b = astype(rt,
                             random(rt, RandomDistribution::Normal, Shape{size, size}, DType::F64,
                                    Location::Device, nullptr, uint64_t{2}),
                             t);
      const Array want = matmul(rt, a, b);
      const Array out =
          full(rt, Shape{size, size}, t, Scalar::real(std::numeric_limits<double>::quiet_NaN()));
      MatmulOptions o;
      o.out = &out;
      matmul(rt, a, b, o);
      CHECK(read_contiguous(rt, out) == read_contiguous(rt, want));
    }
  }
}

TEST_CASE("host BLAS: OpenBLAS's thread count is its own, not the host pool's", "[linalg][blas]") {
  // As OpenBLAS chooses it (OPENBLAS_NUM_THREADS, else the processors), as culua -v reports it;
  // so a product's bytes do not follow the host pool's size.
  const int threads = host::blas_threads();
  CHECK(threads >= 1);
  CHECK(threads <= 64);
  CHECK(host::blas_library().find(", " + std::to_string(threads) + " thread") != std::string::npos);
  const char* env = std::getenv("OPENBLAS_NUM_THREADS");
  if (env != nullptr && std::atoi(env) > 0) CHECK(threads <= std::atoi(env));
  Runtime rt(host_options());
  const Array a = random(rt, RandomDistribution::Normal, Shape{300, 200}, DType::F64,
                         Location::Device, nullptr, uint64_t{3});
  const Array b = random(rt, RandomDistribution::Normal, Shape{200, 400}, DType::F64,
                         Location::Device, nullptr, uint64_t{4});
  std::vector<std::vector<unsigned char>> bytes;
  for (const int pool : {1, 3, 0}) {
    kernels::host::set_pool_threads(pool);
    bytes.push_back(read_contiguous(rt, matmul(rt, a, b)));
  }
  kernels::host::set_pool_threads(0);
  CHECK(bytes[1] == bytes[0]);
  CHECK(bytes[2] == bytes[0]);
}
