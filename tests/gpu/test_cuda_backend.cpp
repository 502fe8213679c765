// CUDA backend behaviour that the Lua tests cannot see directly.
#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "backends/backends.hpp"
#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/ops/ops.hpp"

using namespace culua::detail;

namespace {

// Never destroyed: no CUDA work may run in static destructors (the CUDA runtime may be gone).
Runtime& gpu_runtime() {
  static Runtime* rt = new Runtime(backends::engines(BackendKind::Cuda));
  return *rt;
}

std::vector<float> to_vector(Runtime& rt, const Array& a) {
  auto bytes = read_contiguous(rt, a);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// compute-sanitizer (tests/run_gpu_sanitizer.sh sets CULUA_UNDER_SANITIZER=1) makes a kernel
// launch wait for the device's earlier work: a check that a call returns while work is still
// queued cannot hold there, and is only reported.
bool under_sanitizer(const char* what) {
  const char* v = std::getenv("CULUA_UNDER_SANITIZER");
  if (!v || std::strcmp(v, "1") != 0) return false;
  std::printf("note: under compute-sanitizer (launches serialized), not asserted: %s\n", what);
  return true;
}

}  // namespace

TEST_CASE("the CUDA backend is selected and describes the device") {
  Runtime& rt = gpu_runtime();
  REQUIRE(rt.kind() == BackendKind::Cuda);
  const DeviceInfo d = rt.backend().device_info(0);
  CHECK(d.sm_count > 0);
  CHECK(d.memory > (uint64_t{1} << 30));
  CHECK(d.cc_major >= 7);
  CHECK(!d.name.empty());
}

TEST_CASE("garbage collection never frees memory that queued work still uses") {
  // s1: a 200 ms kernel, then a fill of `a` with 1; `a` is dropped while both are queued. s2 then
  // allocates the same size and fills it with 2. If the pool handed `a`'s memory to s2 before
  // s1's fill ran, the late fill would overwrite b with 1s.
  Runtime& rt = gpu_runtime();
  Backend& be = rt.backend();
  auto s1 = be.create_stream(0, StreamPriority::Normal);
  auto s2 = be.create_stream(0, StreamPriority::Normal);
  const Shape shape{int64_t{16} << 20};
  {
    Array a = empty(rt, shape, DType::F32, Location::Device, s1.get());
    sleep(rt, 0.2, s1.get());
    fill(rt, a, Scalar::real(1.0), s1.get());
  }
  Array b = empty(rt, shape, DType::F32, Location::Device, s2.get());
  fill(rt, b, Scalar::real(2.0), s2.get());
  rt.synchronize();
  const auto v = to_vector(rt, b);
  size_t wrong = 0;
  for (float x : v) wrong += x != 2.0f;
  CHECK(wrong == 0);
}

TEST_CASE("a buffer used on two streams is freed after both") {
  Runtime& rt = gpu_runtime();
  Backend& be = rt.backend();
  auto s1 = be.create_stream(0, StreamPriority::Normal);
  auto s2 = be.create_stream(0, StreamPriority::Normal);
  const Shape shape{int64_t{16} << 20};
  {
    Array a = empty(rt, shape, DType::F32, Location::Device, s1.get());
    fill(rt, a, Scalar::real(0.0), s1.get());
    sleep(rt, 0.2, s2.get());
    fill(rt, a, Scalar::real(1.0), s2.get());  // first use on s2, queued behind 200 ms
  }
  auto s3 = be.create_stream(0, StreamPriority::Normal);
  Array b = empty(rt, shape, DType::F32, Location::Device, s3.get());
  fill(rt, b, Scalar::real(3.0), s3.get());
  rt.synchronize();
  const auto v = to_vector(rt, b);
  size_t wrong = 0;
  for (float x : v) wrong += x != 3.0f;
  CHECK(wrong == 0);
}

TEST_CASE("pinned copies with a stream are asynchronous, others are synchronous") {
  Runtime& rt = gpu_runtime();
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  const Shape shape{int64_t{1} << 20};
  Array d = full(rt, shape, DType::F32, Scalar::real(5.0), Location::Device, s.get());
  Array pinned = empty(rt, shape, DType::F32, Location::Pinned);
  Array pageable = empty(rt, shape, DType::F32, Location::Pageable);
  rt.synchronize();

  sleep(rt, 0.3, s.get());
  auto t0 = std::chrono::steady_clock::now();
  copy(rt, pinned, d, s.get());
  const double async_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!under_sanitizer("a pinned copy returns while the stream is busy")) {
    CHECK(async_ms < 100);
    CHECK_FALSE(s->query());
  }
  // A host read of the pinned array waits for the copy.
  CHECK(read_element(rt, pinned.with_layout(pinned.layout().select(7))).re == 5.0);

  sleep(rt, 0.3, s.get());
  t0 = std::chrono::steady_clock::now();
  copy(rt, pageable, d, s.get());
  const double sync_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(sync_ms > 250);
  CHECK(s->query());
}

TEST_CASE("allocation beyond device memory raises out of memory and the runtime stays usable") {
  Runtime& rt = gpu_runtime();
  const uint64_t total = rt.backend().device_info(0).memory;
  try {
    empty(rt, Shape{static_cast<int64_t>(total)}, DType::F32);  // 4x the device memory
    FAIL("allocation should have failed");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::OutOfMemory);
    const std::string msg = e.what();
    CHECK(msg.find("requested") != std::string::npos);
    CHECK(msg.find("free of") != std::string::npos);
  }
  Array ok = full(rt, Shape{1000}, DType::F64, Scalar::real(1.5));
  CHECK(read_element(rt, ok.with_layout(ok.layout().select(999))).re == 1.5);
}

TEST_CASE("allocation retries after collecting garbage") {
  Runtime& rt = gpu_runtime();
  const uint64_t total = rt.backend().device_info(0).memory;
  const int64_t chunk = static_cast<int64_t>(total / 3);
  std::vector<Array> held;
  int collections = 0;
  rt.collect_garbage = [&] {
    ++collections;
    held.clear();
  };
  for (int i = 0; i < 8; ++i) held.push_back(empty(rt, Shape{chunk}, DType::U8));
  CHECK(collections >= 2);
  rt.collect_garbage = nullptr;
}

TEST_CASE("stream priorities map to CUDA's range") {
  Runtime& rt = gpu_runtime();
  auto high = rt.backend().create_stream(0, StreamPriority::High);
  auto low = rt.backend().create_stream(0, StreamPriority::Low);
  int ph = 0, pl = 0;
  REQUIRE(cudaStreamGetPriority(static_cast<cudaStream_t>(high->native_handle()), &ph) ==
          cudaSuccess);
  REQUIRE(cudaStreamGetPriority(static_cast<cudaStream_t>(low->native_handle()), &pl) ==
          cudaSuccess);
  CHECK(ph < pl);
  unsigned flags = 0;
  REQUIRE(cudaStreamGetFlags(static_cast<cudaStream_t>(low->native_handle()), &flags) ==
          cudaSuccess);
  CHECK((flags & cudaStreamNonBlocking) != 0);
}

TEST_CASE("the memory pool keeps freed memory (release threshold at its maximum)") {
  Runtime& rt = gpu_runtime();
  rt.synchronize();
  size_t free_before = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  {
    Array a = empty(rt, Shape{int64_t{1} << 30}, DType::U8);  // 1 GiB
  }
  rt.synchronize();
  size_t free_after = 0;
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  // The GiB went back to the pool, not to the driver: the device's free memory did not recover.
  CHECK(free_after + (size_t{1} << 29) < free_before + (size_t{1} << 30));
  rt.backend().trim(0);
  size_t free_trimmed = 0;
  REQUIRE(cudaMemGetInfo(&free_trimmed, &total) == cudaSuccess);
  CHECK(free_trimmed > free_after);
}

TEST_CASE("waits for the device are interruptible, queued work and its buffers go on") {
  Runtime& rt = gpu_runtime();
  Backend& be = rt.backend();
  auto s1 = be.create_stream(0, StreamPriority::Normal);
  const Shape shape{int64_t{1} << 20};
  std::optional<Array> a =
      full(rt, shape, DType::F32, Scalar::real(1.0), Location::Device, s1.get());
  sleep(rt, 0.6, s1.get());
  fill(rt, *a, Scalar::real(2.0), s1.get());
  Array b = empty(rt, shape, DType::F32, Location::Device, s1.get());
  copy(rt, b, *a, s1.get());  // b = 2 once the sleep is over
  auto e = be.create_event(0, false);
  e->record(*s1);
  InterruptFlag flag;
  const auto interrupted_after = [&](auto&& wait) {
    flag.clear();
    std::thread t([&flag] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      flag.request();
    });
    const auto t0 = std::chrono::steady_clock::now();
    ErrorKind kind = ErrorKind::Value;
    {
      InterruptScope scope(&flag);
      try {
        wait();
      } catch (const Error& err) {
        kind = err.kind();
      }
    }
    t.join();
    CHECK(kind == ErrorKind::Interrupted);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  // Under the sanitizer the fill waited for the sleep: nothing is left to interrupt.
  if (!under_sanitizer("waits for queued work are interrupted")) {
    CHECK(interrupted_after([&] { s1->synchronize(); }) < 200);
    CHECK(interrupted_after([&] { e->synchronize(); }) < 200);
    CHECK(interrupted_after([&] { rt.synchronize(); }) < 200);  // polls the streams culua made
    CHECK(interrupted_after([&] { (void)to_vector(rt, b); }) < 200);
  }
  a.reset();  // freed stream-ordered, after the fill and the copy
  rt.synchronize();
  const auto v = to_vector(rt, b);
  size_t wrong = 0;
  for (float x : v) wrong += x != 2.0f;
  CHECK(wrong == 0);

  // A stream dropped with work queued is kept (and polled) until that work is done.
  auto s2 = be.create_stream(0, StreamPriority::Normal);
  sleep(rt, 0.4, s2.get());
  s2.reset();
  CHECK(interrupted_after([&] { rt.synchronize(); }) < 200);
  const auto t0 = std::chrono::steady_clock::now();
  rt.synchronize();
  CHECK(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >
        100);
}
