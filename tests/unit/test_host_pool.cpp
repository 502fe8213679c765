// The host kernels' thread pool (kernels/host_pool.hpp): parallel_for's partition, errors, order
// on one stream, several streams at once, and results that do not depend on the pool's size.
#include "helpers.hpp"

#include <atomic>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/base/interrupt.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/random.hpp"
#include "core/ops/reduce.hpp"
#include "host/host_stream.hpp"
#include "kernels/host_pool.hpp"

using namespace culua::detail;
using namespace culua::detail::test;
namespace pool = culua::detail::kernels::host;

namespace {

// Sets the pool's size for a scope (0 afterwards: the configured size).
struct PoolSize {
  explicit PoolSize(int n) { pool::set_pool_threads(n); }
  ~PoolSize() { pool::set_pool_threads(0); }
};

// The bytes of a contiguous array.
std::vector<unsigned char> bytes_of(Runtime& rt, const Array& a) {
  rt.backend().synchronize_device(0);
  REQUIRE(a.is_contiguous());
  std::vector<unsigned char> out(static_cast<size_t>(a.size()) * itemsize(a.dtype()));
  if (!out.empty()) std::memcpy(out.data(), a.data(), out.size());
  return out;
}

}  // namespace

TEST_CASE("host pool: parallel_for covers every index once, in aligned ranges", "[host][pool]") {
  PoolSize size(4);
  for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{100003}}) {
    for (const int64_t grain : {int64_t{1}, int64_t{10}, int64_t{4096}}) {
      for (const int64_t align : {int64_t{1}, int64_t{4}, int64_t{64}}) {
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        std::atomic<bool> misaligned{false};
        std::atomic<int64_t> ranges{0};
        pool::parallel_for(
            n, grain,
            [&](int64_t lo, int64_t hi) {
              if (lo % align != 0) misaligned = true;
              ++ranges;
              for (int64_t i = lo; i < hi; ++i) ++seen[static_cast<size_t>(i)];
            },
            align);
        int64_t wrong = 0;
        for (auto& s : seen) wrong += s.load() != 1;
        CHECK(wrong == 0);
        CHECK_FALSE(misaligned);
        if (n <= grain) CHECK(ranges == 1);  // small work stays on the calling thread, whole
      }
    }
  }
  // Nested: a range's own parallel_for runs on its thread.
  std::atomic<int64_t> total{0};
  pool::parallel_for(64, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      pool::parallel_for(1000, 1, [&](int64_t a, int64_t b) { total += b - a; });
    }
  });
  CHECK(total == 64000);
}

TEST_CASE("host pool: an exception in a range reaches the caller", "[host][pool]") {
  PoolSize size(3);
  std::atomic<int64_t> ran{0};
  const auto run = [&] {
    pool::parallel_for(1000, 1, [&](int64_t lo, int64_t hi) {
      ran += hi - lo;
      if (lo <= 500 && 500 < hi) throw std::runtime_error("range failed");
    });
  };
  CHECK_THROWS_WITH(run(), "range failed");
  CHECK(ran > 0);
  // The pool still works.
  std::atomic<int64_t> sum{0};
  pool::parallel_for(100000, 10, [&](int64_t lo, int64_t hi) { sum += hi - lo; });
  CHECK(sum == 100000);
}

TEST_CASE("host pool: its size", "[host][pool]") {
  // (CULUA_HOST_THREADS is read once per process: tests/cli/test_cli.lua checks it.)
  PoolSize size(2);
  CHECK(pool::pool_threads() == 2);
  pool::set_pool_threads(1);
  CHECK(pool::pool_threads() == 1);
  int64_t ranges = 0;  // one thread: the caller runs it all, in ranges of kStopChunkGrains grains
  pool::parallel_for(1 << 20, 1, [&](int64_t, int64_t) { ++ranges; });
  CHECK(ranges == (1 << 20) / pool::kStopChunkGrains);
  ranges = 0;
  pool::parallel_for(1 << 20, 1 << 20, [&](int64_t, int64_t) { ++ranges; });
  CHECK(ranges == 1);
  CHECK(pool::grain_for(4) == 64 * 1024);
}

TEST_CASE("host pool: long work stops between ranges", "[host][pool]") {
  for (int threads : {1, 3}) {
    PoolSize size(threads);
    INFO(threads << " threads");
    // A task's stop (the host backend's workers): the cut moves on while the work runs.
    std::atomic<bool> abandoned{false};
    std::atomic<uint64_t> cut{0};
    pool::WorkStop stop;
    stop.abandoned = &abandoned;
    stop.cut = &cut;
    std::atomic<int64_t> done{0};
    {
      const pool::WorkStopScope scope(&stop);
      CHECK_THROWS_AS(pool::parallel_for(int64_t{1} << 30, 1,
                                         [&](int64_t lo, int64_t hi) {
                                           done += hi - lo;
                                           cut = 1;  // requested from the first range on
                                         }),
                      pool::WorkStopped);
    }
    CHECK(done < (int64_t{1} << 30) / 4);  // most ranges never ran
    // On the calling thread (no scope): the thread's interrupt flag, as its error.
    InterruptFlag flag;
    InterruptScope interrupt(&flag);
    done = 0;
    CHECK(error_kind_of([&] {
            pool::parallel_for(int64_t{1} << 30, 1, [&](int64_t lo, int64_t hi) {
              done += hi - lo;
              flag.request();
            });
          }) == ErrorKind::Interrupted);
    CHECK(done < (int64_t{1} << 30) / 4);
    // Short work is one call, unchecked.
    int64_t calls = 0;
    pool::parallel_for(100, 1000, [&](int64_t, int64_t) { ++calls; });
    CHECK(calls == 1);
  }
}

TEST_CASE("host pool: a failing range poisons the backend as a failing task does",
          "[host][pool][stream]") {
  PoolSize size(3);
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  dynamic_cast<host::HostStream&>(*s).enqueue([] {
    pool::parallel_for(1 << 16, 1, [](int64_t lo, int64_t) {
      if (lo > 0) throw std::runtime_error("boom in a range");
    });
  });
  ev->record(*s);
  ev->synchronize();  // later work still runs
  CHECK(ev->query());
  CHECK(rt.backend().poisoned());
  CHECK_THAT(rt.backend().poison_message(),
             Catch::Contains("host backend task failed") && Catch::Contains("boom in a range"));
  CHECK(error_kind_of([&] { rt.synchronize(); }) == ErrorKind::Fatal);
}

TEST_CASE("host pool: one stream's tasks run in order, several streams at once",
          "[host][pool][stream]") {
  PoolSize size(4);
  Runtime rt(host_options());
  constexpr int kStreams = 4, kTasks = 40;
  constexpr int64_t n = 200000;
  std::vector<std::shared_ptr<Stream>> streams;
  std::vector<std::vector<int>> data(kStreams, std::vector<int>(n, 0));
  std::atomic<int> out_of_order{0};
  for (int k = 0; k < kStreams; ++k) {
    streams.push_back(rt.backend().create_stream(0, StreamPriority::Normal));
  }
  // Task t of each stream finds every element at t (what the task before it wrote) and writes
  // t + 1, in ranges across the pool; the streams' tasks interleave on the pool.
  for (int t = 0; t < kTasks; ++t) {
    for (int k = 0; k < kStreams; ++k) {
      std::vector<int>& v = data[static_cast<size_t>(k)];
      dynamic_cast<host::HostStream&>(*streams[static_cast<size_t>(k)])
          .enqueue([&v, &out_of_order, t] {
            pool::parallel_for(n, 1000, [&](int64_t lo, int64_t hi) {
              for (int64_t i = lo; i < hi; ++i) {
                if (v[static_cast<size_t>(i)] != t) ++out_of_order;
                v[static_cast<size_t>(i)] = t + 1;
              }
            });
          });
    }
  }
  rt.backend().synchronize_device(0);
  CHECK(out_of_order == 0);
  for (const auto& v : data) {
    int64_t wrong = 0;
    for (const int x : v) wrong += x != kTasks;
    CHECK(wrong == 0);
  }
  CHECK_FALSE(rt.backend().poisoned());
}

TEST_CASE("host pool: results do not depend on the pool's size", "[host][pool]") {
  // Sizes that cross the grains: reductions cut into leaves of 16384 elements, matmul into blocks
  // of at least 128 x 128, random and elementwise into ranges.
  const auto results = [](int threads) {
    PoolSize size(threads);
    Runtime rt(host_options());
    std::vector<std::vector<unsigned char>> r;
    const Array x = random(rt, RandomDistribution::Uniform, Shape{1000003}, DType::F64,
                           Location::Device, nullptr, uint64_t{42});
    const Array xf = random(rt, RandomDistribution::Normal, Shape{300001}, DType::F32,
                            Location::Device, nullptr, uint64_t{43});
    r.push_back(bytes_of(rt, x));
    r.push_back(bytes_of(rt, xf));
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Sum, x, std::nullopt, false)));
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Mean, x, std::nullopt, false)));
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Sum, xf, std::nullopt, false)));
    const Array m = view_as(x, Shape{1000003, 1});
    const Array wide = random(rt, RandomDistribution::Uniform, Shape{40000, 30}, DType::F64,
                              Location::Device, nullptr, uint64_t{44});
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Sum, m, 0, false)));
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Sum, wide, 0, false)));   // across rows
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Mean, wide, 1, false)));  // along rows
    const Array wt = clone(rt, wide.with_layout(wide.layout().transpose(0, 1)));
    r.push_back(bytes_of(rt, wt));
    r.push_back(bytes_of(rt, reduce(rt, ReduceOp::Sum, wt, 1, false)));  // 30 rows of 40000
    const Array a = random(rt, RandomDistribution::Uniform, Shape{600, 500}, DType::F64,
                           Location::Device, nullptr, uint64_t{45});
    const Array b = random(rt, RandomDistribution::Uniform, Shape{500, 700}, DType::F64,
                           Location::Device, nullptr, uint64_t{46});
    r.push_back(bytes_of(rt, matmul(rt, a, b)));
    r.push_back(bytes_of(rt, dot(rt, x, x)));
    return r;
  };
  const auto one = results(1);
  for (const int threads : {2, 3, 8}) {
    INFO("threads " << threads);
    const auto many = results(threads);
    REQUIRE(many.size() == one.size());
    for (size_t i = 0; i < one.size(); ++i) {
      INFO("result " << i);
      CHECK(many[i] == one[i]);
    }
  }
}
