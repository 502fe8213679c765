// The embedding API on the CUDA backend: wrapping the application's device memory and sharing
// its stream. The application uses its own CUDA runtime, as a real one does. Exits 77 (skipped)
// without a GPU.
#define CATCH_CONFIG_RUNNER
#include <cuda_runtime.h>
#include <catch2/catch.hpp>
#include <culua/culua.hpp>

#include <cstdio>
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

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipping the embedding GPU tests\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
