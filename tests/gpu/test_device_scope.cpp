// cuda/scoped.hpp's DeviceScope, and culua giving the calling thread its current device (its
// current context) back. Meaningful on one GPU too: the scopes are checked against the driver's
// current context, and a thread that had no context must have none after culua returns.
#include <cuda.h>
#include <cuda_runtime.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "backends/backends.hpp"
#include "core/base/error.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/ops.hpp"
#include "core/ops/reduce.hpp"
#include "core/runtime/runtime.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/scoped.hpp"

using namespace culua::detail;
using culua::detail::cuda::DeviceScope;

namespace {

int device_count() {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  return n;
}

CUcontext current_context() {
  CUcontext c = nullptr;
  REQUIRE(cuda::driver_api().ctx_get_current(&c) == CUDA_SUCCESS);
  return c;
}

int current_device() {
  int d = -1;
  REQUIRE(cudaGetDevice(&d) == cudaSuccess);
  return d;
}

// Runs `fn` on a new thread, which starts without a current context; rethrows its failure.
template <class F>
void on_fresh_thread(F fn) {
  bool passed = false;
  std::thread t([&] {
    fn();
    passed = true;
  });
  t.join();
  REQUIRE(passed);
}

// Work on `device` through every kind of backend call that needs a context: allocation,
// built-in kernels, a reduction, cuBLAS, a staged pageable copy (worker lanes and the caller's
// lane), streams and events, device synchronization, releases.
void use_culua(int device) {
  RuntimeOptions options = backends::engines(BackendKind::Cuda);
  options.device = device;
  Runtime rt(options);
  Backend& be = rt.backend();
  auto s = be.create_stream(device, StreamPriority::Normal);
  const int64_t n = int64_t{1} << 20;  // 4 MiB of f32: above the staged copy's threshold
  Array a = full(rt, Shape{n}, DType::F32, Scalar::real(1.5), Location::Device, s.get());
  Array b = binary(rt, BinaryOp::Mul, a, Scalar::real(2.0), nullptr, s.get());
  Array total = reduce(rt, ReduceOp::Sum, b, std::nullopt, false, nullptr, s.get());
  Array m = full(rt, Shape{16, 16}, DType::F32, Scalar::real(1.0), Location::Device, s.get());
  Array p = matmul(rt, m, m);
  auto e = be.create_event(device, true);
  e->record(*s);
  e->synchronize();
  Array host = to_location(rt, b, Location::Pageable, s.get());
  const auto bytes = read_contiguous(rt, host);
  float first = 0;
  std::memcpy(&first, bytes.data(), sizeof first);
  CHECK(first == 3.0f);
  CHECK(read_element(rt, total).re == Approx(3.0 * static_cast<double>(n)));
  const auto product = read_contiguous(rt, p);
  float corner = 0;
  std::memcpy(&corner, product.data(), sizeof corner);
  CHECK(corner == 16.0f);
  rt.synchronize();
}

}  // namespace

TEST_CASE("DeviceScope: the current device is a no-op, nested scopes restore") {
  const int n = device_count();
  cuda::Health health;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  const CUcontext ctx0 = current_context();
  REQUIRE(ctx0 == cuda::primary_context(0));
  {
    const DeviceScope same(0, health);
    CHECK(current_context() == ctx0);
  }
  CHECK(current_context() == ctx0);
  {
    const DeviceScope outer(n - 1, health);
    CHECK(current_device() == n - 1);
    CHECK(current_context() == cuda::primary_context(n - 1));
    {
      const DeviceScope inner(0, health);
      CHECK(current_device() == 0);
      CHECK(current_context() == ctx0);
    }
    CHECK(current_device() == n - 1);
  }
  CHECK(current_device() == 0);
  CHECK(current_context() == ctx0);
}

TEST_CASE("DeviceScope: a device that does not exist changes nothing") {
  const int n = device_count();
  cuda::Health health;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  const CUcontext before = current_context();
  {
    const DeviceScope bad(n, std::nothrow);
    CHECK(!bad.ok());
    CHECK(current_context() == before);
  }
  CHECK(current_context() == before);
  CHECK_THROWS_AS(DeviceScope(n, health), culua::detail::Error);
  CHECK(current_context() == before);
}

TEST_CASE("DeviceScope: a thread without a context has none after the scope") {
  on_fresh_thread([] {
    cuda::Health health;
    REQUIRE(current_context() == nullptr);
    {
      const DeviceScope scope(0, health);
      CHECK(current_context() == cuda::primary_context(0));
      CHECK(cudaFree(nullptr) == cudaSuccess);  // the runtime works in the scope's context
    }
    CHECK(current_context() == nullptr);
  });
}

TEST_CASE("culua gives the caller its current device back") {
  const int n = device_count();
  SECTION("a caller on the last device, culua on device 0") {
    REQUIRE(cudaSetDevice(n - 1) == cudaSuccess);
    REQUIRE(cudaFree(nullptr) == cudaSuccess);
    const CUcontext before = current_context();
    use_culua(0);
    CHECK(current_device() == n - 1);
    CHECK(current_context() == before);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
  }
  SECTION("a caller on device 0, culua on the last device") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    const CUcontext before = current_context();
    use_culua(n - 1);
    CHECK(current_device() == 0);
    CHECK(current_context() == before);
  }
  SECTION("a caller thread without a context keeps none (no context made for device 0)") {
    on_fresh_thread([n] {
      REQUIRE(current_context() == nullptr);
      use_culua(n - 1);
      CHECK(current_context() == nullptr);
    });
  }
}
