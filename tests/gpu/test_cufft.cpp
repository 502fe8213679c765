// cuFFT on the CUDA backend: the plan cache is reused for a repeated shape, grows for a
// new one, stays bounded, and the transforms it runs are right (also under graph capture). The
// work areas: one per stream, allocated once and kept (a repeated transform binds nothing again),
// never shared by two streams at once (transforms alternating on two streams with one plan), kept
// apart from a graph's (replays between eager transforms of the same plan), freed with their
// stream, and still right after the plan was evicted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "backends/backends.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/fft.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/graph.hpp"
#include "cuda/cuda_backend.hpp"

using namespace culua::detail;

namespace {

Runtime& gpu_runtime() {
  static Runtime* rt = new Runtime(backends::engines(BackendKind::Cuda));  // never destroyed
  return *rt;
}

std::vector<std::complex<double>> values(Runtime& rt, const Array& a) {
  auto bytes = read_contiguous(rt, a);
  std::vector<std::complex<double>> v(bytes.size() / sizeof(std::complex<double>));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

Array ramp(Runtime& rt, int64_t n) {
  return arange(rt, Scalar::integer(0), Scalar::integer(n), Scalar::integer(1), DType::C128);
}

// A prime length: cuFFT transforms it by Bluestein's algorithm, which always needs a work area.
constexpr int64_t kPrime = 1048573;

// Distinct inputs of n points: (i + 1) * ramp + i * 1j, so that a transform reading another
// one's work area gives other values.
Array input(Runtime& rt, int i, int64_t n = kPrime) {
  const Array scaled = binary(rt, BinaryOp::Mul, ramp(rt, n), Scalar::real(i + 1.0));
  return binary(rt, BinaryOp::Add, scaled, Scalar::complex(0.0, i));
}

// `got` equals `want` within rounding (relative to the largest magnitude).
void check_same(const std::vector<std::complex<double>>& got,
                const std::vector<std::complex<double>>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  double scale = 0;
  for (const auto& w : want) scale = std::max(scale, std::abs(w));
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > 1e-9 * scale) ++bad;
  }
  INFO(what);
  CHECK(bad == 0);
}

Array fft_on(Runtime& rt, const Array& x, Stream* s) {
  return fft1(rt, FftFunction::Fft, x, 0, -1, FftNorm::Backward, s);
}

}  // namespace

TEST_CASE("cuFFT's plans are cached per shape and reused") {
  Runtime& rt = gpu_runtime();
  const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
  const Array x = ramp(rt, 1000);
  const Array y1 = fft1(rt, FftFunction::Fft, x, 0, -1, FftNorm::Backward);
  const cuda::FftPlanStats first = cuda::fft_plan_stats(rt.backend());
  const Array y2 = fft1(rt, FftFunction::Fft, x, 0, -1, FftNorm::Backward);
  const cuda::FftPlanStats second = cuda::fft_plan_stats(rt.backend());
  CHECK(second.hits == first.hits + 1);
  CHECK(second.misses == first.misses);
  CHECK(second.plans == first.plans);
  CHECK(first.misses + first.hits == before.misses + before.hits + 1);
  // another length is another plan
  fft1(rt, FftFunction::Fft, x, 0, 999, FftNorm::Backward);
  const cuda::FftPlanStats third = cuda::fft_plan_stats(rt.backend());
  CHECK(third.misses == second.misses + 1);
  // the values: sum of 0..999 at k = 0; the two results are the same
  const auto v1 = values(rt, y1), v2 = values(rt, y2);
  CHECK(v1[0].real() == Approx(499500.0));
  for (size_t i = 0; i < v1.size(); ++i) CHECK(v1[i] == v2[i]);
}

TEST_CASE("the plan cache is bounded: old plans are evicted") {
  Runtime& rt = gpu_runtime();
  const Array x = ramp(rt, 64);
  for (int64_t n = 2; n < 2 + 2 * static_cast<int64_t>(cuda::Cufft::kMaxPlans); ++n) {
    fft1(rt, FftFunction::Fft, x, 0, n, FftNorm::Backward);
  }
  const cuda::FftPlanStats s = cuda::fft_plan_stats(rt.backend());
  CHECK(s.plans <= cuda::Cufft::kMaxPlans);
  CHECK(s.evictions > 0);
  // an evicted shape works again (a new plan)
  const auto v = values(rt, fft1(rt, FftFunction::Fft, x, 0, 2, FftNorm::Backward));
  CHECK(v[0].real() == Approx(1.0));
  CHECK(v[1].real() == Approx(-1.0));
}

TEST_CASE("an fft captured in a graph replays with the right values") {
  Runtime& rt = gpu_runtime();
  const Array x = ramp(rt, 4096);
  std::shared_ptr<Stream> s = rt.backend().create_stream(0, StreamPriority::Normal);
  Array y;
  auto g = Graph::capture(rt, *s, "fft", "test_cufft.cpp", [&] {
    y = fft1(rt, FftFunction::Fft, x, 0, -1, FftNorm::Ortho, s.get());
  });
  g->launch(*s);
  s->synchronize();
  const auto v = values(rt, y);
  CHECK(v[0].real() == Approx(4095.0 * 4096 / 2 / 64.0));
}

TEST_CASE("a transform repeated on one stream keeps its work area and binds nothing again") {
  Runtime& rt = gpu_runtime();
  std::shared_ptr<Stream> s = rt.backend().create_stream(0, StreamPriority::Normal);
  const Array x = input(rt, 0);
  rt.synchronize();
  const auto want = values(rt, fft_on(rt, x, nullptr));
  const Array first = fft_on(rt, x, s.get());
  const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
  REQUIRE(before.work_areas > 0);  // Bluestein's plan needs one
  std::vector<Array> ys;
  for (int i = 0; i < 5; ++i) ys.push_back(fft_on(rt, x, s.get()));
  const cuda::FftPlanStats after = cuda::fft_plan_stats(rt.backend());
  CHECK(after.work_allocations == before.work_allocations);
  CHECK(after.work_area_bindings == before.work_area_bindings);
  CHECK(after.stream_bindings == before.stream_bindings);
  CHECK(after.work_areas == before.work_areas);
  check_same(values(rt, first), want, "first transform on the stream");
  for (const Array& y : ys) check_same(values(rt, y), want, "repeated transform");
}

TEST_CASE("transforms alternating on two streams with one plan use a work area each") {
  Runtime& rt = gpu_runtime();
  std::shared_ptr<Stream> s1 = rt.backend().create_stream(0, StreamPriority::Normal);
  std::shared_ptr<Stream> s2 = rt.backend().create_stream(0, StreamPriority::Normal);
  constexpr int kInputs = 4;
  std::vector<Array> xs;
  std::vector<std::vector<std::complex<double>>> want;
  for (int i = 0; i < kInputs; ++i) {
    xs.push_back(input(rt, i));
    want.push_back(values(rt, fft_on(rt, xs.back(), nullptr)));  // one at a time
  }
  rt.synchronize();
  const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
  // Queued without waiting: the two streams' transforms may run at the same time.
  std::vector<std::pair<int, Array>> ys;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kInputs; ++i) {
      ys.emplace_back(i, fft_on(rt, xs[static_cast<size_t>(i)], i % 2 ? s2.get() : s1.get()));
    }
  }
  const cuda::FftPlanStats after = cuda::fft_plan_stats(rt.backend());
  CHECK(after.work_allocations == before.work_allocations + 2);  // one per new stream, once
  CHECK(after.work_areas == before.work_areas + 2);
  CHECK(after.misses == before.misses);  // one plan
  for (const auto& [i, y] : ys) {
    check_same(values(rt, y), want[static_cast<size_t>(i)], "transform on two streams");
  }
}

TEST_CASE("a stream's work area is freed once the stream is released") {
  Runtime& rt = gpu_runtime();
  std::shared_ptr<Stream> keep = rt.backend().create_stream(0, StreamPriority::Normal);
  const Array x = input(rt, 1);
  rt.synchronize();
  const auto want = values(rt, fft_on(rt, x, nullptr));
  cuda::FftPlanStats held;
  {
    std::shared_ptr<Stream> s = rt.backend().create_stream(0, StreamPriority::Normal);
    const Array xs = clone(rt, x);  // arrays keep the streams that used them
    rt.synchronize();
    const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
    check_same(values(rt, fft_on(rt, xs, s.get())), want, "transform on the released stream");
    held = cuda::fft_plan_stats(rt.backend());
    CHECK(held.work_areas == before.work_areas + 1);
  }  // the stream and every array that used it are gone
  check_same(values(rt, fft_on(rt, x, keep.get())), want, "transform on another stream");
  const cuda::FftPlanStats after = cuda::fft_plan_stats(rt.backend());
  CHECK(after.work_frees >= held.work_frees + 1);
  CHECK(after.work_areas <= held.work_areas);  // keep's area came, the released one went
}

TEST_CASE("a captured transform replays right between eager ones of the same plan") {
  Runtime& rt = gpu_runtime();
  std::shared_ptr<Stream> s = rt.backend().create_stream(0, StreamPriority::Normal);
  std::shared_ptr<Stream> other = rt.backend().create_stream(0, StreamPriority::Normal);
  constexpr int kInputs = 3;
  std::vector<Array> xs;
  std::vector<std::vector<std::complex<double>>> want;
  for (int i = 0; i < kInputs; ++i) {
    xs.push_back(input(rt, i));
    want.push_back(values(rt, fft_on(rt, xs.back(), nullptr)));
  }
  // The plan is made and used on s before the capture (a Bluestein plan cannot be made during
  // one), so s has its work area; the graph must not use it.
  fft_on(rt, xs[0], s.get());
  const Array xin = clone(rt, xs[0], s.get());
  rt.synchronize();
  s->synchronize();
  Array y;
  auto g = Graph::capture(rt, *s, "fft", "test_cufft.cpp", [&] { y = fft_on(rt, xin, s.get()); });
  for (int round = 0; round < 2 * kInputs; ++round) {
    const int i = round % kInputs;
    copy(rt, xin, xs[static_cast<size_t>(i)], s.get());
    g->launch(*s);
    // Eager transforms of the same plan on both streams, queued beside the replay: they bind the
    // plan to their own work areas.
    const Array on_s = fft_on(rt, xs[static_cast<size_t>((i + 1) % kInputs)], s.get());
    const Array on_other = fft_on(rt, xs[static_cast<size_t>((i + 2) % kInputs)], other.get());
    check_same(values(rt, y), want[static_cast<size_t>(i)], "graph replay");
    check_same(values(rt, on_s), want[static_cast<size_t>((i + 1) % kInputs)],
               "eager transform on the capturing stream");
    check_same(values(rt, on_other), want[static_cast<size_t>((i + 2) % kInputs)],
               "eager transform on another stream");
  }
  // A longer prime on s grows its work area (the old one is freed on s); the graph keeps its own.
  const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
  const Array longer =
      fft1(rt, FftFunction::Fft, ramp(rt, 2097143), 0, -1, FftNorm::Backward, s.get());
  const cuda::FftPlanStats grown = cuda::fft_plan_stats(rt.backend());
  CHECK(grown.work_allocations == before.work_allocations + 1);
  CHECK(grown.work_frees == before.work_frees + 1);
  CHECK(std::abs(values(rt, longer)[0] - std::complex<double>(2097142.0 * 2097143.0 / 2, 0)) <
        1e-6 * 2097142.0 * 2097143.0);
  copy(rt, xin, xs[1], s.get());
  g->launch(*s);
  const Array after_growth = fft_on(rt, xs[2], s.get());
  check_same(values(rt, y), want[1], "replay after the stream's work area grew");
  check_same(values(rt, after_growth), want[2], "eager transform in the grown work area");
}

TEST_CASE("a plan evicted and made again runs right on streams that kept their work areas") {
  Runtime& rt = gpu_runtime();
  std::shared_ptr<Stream> s1 = rt.backend().create_stream(0, StreamPriority::Normal);
  std::shared_ptr<Stream> s2 = rt.backend().create_stream(0, StreamPriority::Normal);
  // Another prime: kPrime's plan was used under capture above, which keeps it from eviction.
  const Array x = input(rt, 2, 1048571);
  rt.synchronize();
  const auto want = values(rt, fft_on(rt, x, nullptr));
  check_same(values(rt, fft_on(rt, x, s1.get())), want, "before the eviction");
  const cuda::FftPlanStats before = cuda::fft_plan_stats(rt.backend());
  const Array small = ramp(rt, 64);
  for (int64_t n = 2; n < 2 + 2 * static_cast<int64_t>(cuda::Cufft::kMaxPlans); ++n) {
    fft1(rt, FftFunction::Fft, small, 0, n, FftNorm::Backward, s1.get());
  }
  const cuda::FftPlanStats evicted = cuda::fft_plan_stats(rt.backend());
  CHECK(evicted.evictions > before.evictions);
  const Array a = fft_on(rt, x, s1.get());
  const Array b = fft_on(rt, x, s2.get());
  const Array c = fft_on(rt, x, s1.get());
  const cuda::FftPlanStats after = cuda::fft_plan_stats(rt.backend());
  CHECK(after.misses > evicted.misses);  // made again
  check_same(values(rt, a), want, "after the eviction, first stream");
  check_same(values(rt, b), want, "after the eviction, second stream");
  check_same(values(rt, c), want, "after the eviction, first stream again");
}
