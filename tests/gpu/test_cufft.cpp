// cuFFT on the CUDA backend: the plan cache is reused for a repeated shape, grows for a
// new one, stays bounded, and the transforms it runs are right (also under graph capture, where the
// work area comes from the stream-ordered pool).
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <cstring>
#include <vector>

#include "backends/backends.hpp"
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
