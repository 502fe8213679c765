// The embedding API on the CUDA backend: wrapping the application's device memory and sharing
// its stream. The application uses its own CUDA runtime, as a real one does. Exits 77 (skipped)
// without a GPU.
#define CATCH_CONFIG_RUNNER
#include <cuda.h>
#include <cuda_runtime.h>
#include <catch2/catch.hpp>
#include <culua/culua.hpp>

#include <cstdio>
#include <thread>
#include <vector>

namespace {

culua::Options cuda() {
  culua::Options o;
  o.backend = culua::Backend::Cuda;
  return o;
}

#define CHECK_CUDA(call) REQUIRE((call) == cudaSuccess)

}  // namespace

TEST_CASE("a wrapped device pointer is shared, never copied, never freed") {
  const int64_t n = 1 << 20;
  float* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
  std::vector<float> h(n);
  for (int64_t i = 0; i < n; ++i) h[static_cast<size_t>(i)] = static_cast<float>(i % 7);
  CHECK_CUDA(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  {
    culua::Runtime rt(cuda());
    REQUIRE(rt.backend() == "cuda");
    rt.set("x", culua::Array::wrap(d, {n}, culua::DType::F32));
    const culua::Array back = rt.get<culua::Array>("x");
    CHECK(back.data() == d);
    CHECK(back.on_device());
    CHECK(back.device() == 0);
    CHECK(rt.eval<std::string>("x.location") == "device");
    double expected = 0;
    for (float v : h) expected += v;
    CHECK(rt.eval<double>("x:sum():item()") == Approx(expected));
    // The script writes the application's memory in place.
    rt.run_string("cu.mul(x, 2, {out = x}); x[1] = 42; cu.sync()");
    std::vector<float> out(n);
    CHECK_CUDA(cudaMemcpy(out.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(out[0] == 42.0f);
    CHECK(out[1] == 2.0f);
    CHECK(out[13] == 12.0f);
    // And sees the application's writes.
    CHECK_CUDA(cudaMemset(d, 0, n * sizeof(float)));
    CHECK(rt.eval<double>("x:sum():item()") == 0.0);
    rt.run_string("x = nil; collectgarbage(); collectgarbage()");
  }
  // culua never freed it: the application's free succeeds (a double free would fail).
  CHECK_CUDA(cudaFree(d));
}

TEST_CASE("host memory wrapped on the CUDA backend is a host array") {
  culua::Runtime rt(cuda());
  std::vector<double> h(100, 0.5);
  rt.set("h", culua::Array::wrap(h.data(), {100}, culua::DType::F64));
  CHECK(rt.eval<std::string>("h.location") == "pageable");
  CHECK(rt.eval<double>("h:to_device():sum():item()") == 50.0);
}

TEST_CASE("use_stream: scripts queue their work on the application's stream") {
  cudaStream_t app = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking));
  const int64_t n = 1 << 22;
  float* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
  {
    culua::Runtime rt(cuda());
    rt.use_stream(app);
    rt.set("x", culua::Array::wrap(d, {n}, culua::DType::F32));
    // Asynchronous work: the script returns while the device is busy on the app's stream.
    rt.run_string("cu.sleep(300); x:fill(7)");
    CHECK(cudaStreamQuery(app) == cudaErrorNotReady);
    // The application orders its own work after the script's through its stream alone.
    CHECK_CUDA(cudaStreamSynchronize(app));
    std::vector<float> out(n);
    CHECK_CUDA(cudaMemcpy(out.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(out[0] == 7.0f);
    CHECK(out[static_cast<size_t>(n - 1)] == 7.0f);
    // Arrays the script allocates are stream-ordered on the app's stream too.
    rt.run_string("y = cu.ones(1000) * 3; total = y:sum():item()");
    CHECK(rt.get<double>("total") == 3000.0);
    rt.use_stream(nullptr);
    rt.run_string("z = cu.ones(10):sum():item()");
    CHECK(rt.get<double>("z") == 10.0);
    rt.run_string("x = nil; y = nil; collectgarbage(); collectgarbage()");
    rt.synchronize();
  }
  CHECK_CUDA(cudaStreamSynchronize(app));
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaStreamDestroy(app));
}

TEST_CASE("errors on the CUDA backend leave the runtime usable") {
  culua::Runtime rt(cuda());
  CHECK_THROWS_WITH(rt.run_string("local _ = cu.zeros(4) + cu.zeros(5)"),
                    Catch::Contains("broadcast"));
  CHECK_THROWS_WITH(rt.run_string("cu.compile('this is not CUDA')"), Catch::Contains("error"));
  CHECK(rt.eval<double>("cu.ones(8):sum():item()") == 8.0);
}

namespace {

// The driver's current context of the calling thread (the application links its own CUDA runtime;
// culua's is another copy: only the driver's state is shared).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  REQUIRE(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault,
                                           &status) == cudaSuccess);
  REQUIRE(fn);
  CUcontext c = nullptr;
  REQUIRE(reinterpret_cast<GetCurrent>(fn)(&c) == CUDA_SUCCESS);
  return c;
}

// A script through everything that needs the device current: arrays, math, a reduction, cuBLAS,
// a run-time compiled kernel, streams, events, a graph, copies, synchronization, collection.
void run_on_device_0() {
  culua::Runtime rt(cuda());
  rt.run_string(R"(
    local n = 1 << 20
    local a = cu.ones(n) * 2
    local s = cu.stream()
    local e = cu.event()
    local m = cu.compile([[
      extern "C" __global__ void twice(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= 2.0f;
      }]])
    m.twice({grid = n // 256, block = 256, stream = s}, a, n)
    e:record(s)
    e:sync()
    local g = cu.graph(function() a:fill(3) end)
    g:launch()
    local p = cu.matmul(cu.ones({8, 8}), cu.ones({8, 8}))
    total = a:sum():item() + p:sum():item()
    local h = a:to_host()
    first = h[1]
    cu.sync()
    a, s, e, m, g, p, h = nil
    collectgarbage(); collectgarbage()
  )");
  CHECK(rt.get<double>("total") == 3.0 * (1 << 20) + 512.0);
  CHECK(rt.get<double>("first") == 3.0);
}

}  // namespace

TEST_CASE("culua gives the application its current device back") {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  // The application works on its last device (device 0 on a machine with one GPU); culua on 0.
  CHECK_CUDA(cudaSetDevice(n - 1));
  CHECK_CUDA(cudaFree(nullptr));
  const CUcontext before = current_context();
  run_on_device_0();
  int device = -1;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK(device == n - 1);
  CHECK(current_context() == before);
  CHECK_CUDA(cudaSetDevice(0));

  // A thread of the application without a CUDA context has none after culua returns (none was
  // made for it, on device 0 or any other).
  bool ran = false;
  std::thread t([&] {
    REQUIRE(current_context() == nullptr);
    run_on_device_0();
    CHECK(current_context() == nullptr);
    ran = true;
  });
  t.join();
  CHECK(ran);
}

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipping the embedding GPU tests\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
