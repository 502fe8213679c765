// cuFFT called from C++: the native side of the suite's fft row, the same transforms
// as scripts/bench/fft.lua times through cu.fft, out of place, plans made once before timing.
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/fft_native.cu -lcufft -o build/fft_native
//   build/fft_native [log2 of the length, default 24]
// Each figure is the median of 20 runs timed with events, the L2 cache flushed before each (as
// cu.bench's cold samples), after 3 warm-up runs. Prints "fft_<case> <ms> ms" lines with the keys
// of scripts/bench/fft.lua.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)
#define CHECK_CUFFT(call)                                                            \
  do {                                                                               \
    cufftResult r_ = (call);                                                         \
    if (r_ != CUFFT_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d %s: cuFFT status %d\n", __FILE__, __LINE__, #call, \
                   static_cast<int>(r_));                                            \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace {

__global__ void fill(float* p, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = static_cast<float>((i * 2654435761u) % 1000) * 0.002f - 1.0f;
  }
}

__global__ void fill_double(double* p, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    p[i] = static_cast<double>((i * 2654435761u) % 1000) * 0.002 - 1.0;
  }
}

struct Timer {
  cudaStream_t stream;
  void* flush = nullptr;
  size_t flush_bytes = 0;

  explicit Timer(cudaStream_t s) : stream(s) {
    int dev = 0, l2 = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    flush_bytes = 2 * static_cast<size_t>(l2);
    CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  }
  ~Timer() { cudaFree(flush); }

  double median_ms(const std::function<void()>& fn, int reps = 20) {
    for (int i = 0; i < 3; ++i) fn();
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      CHECK_CUDA(cudaMemsetAsync(flush, i & 0xff, flush_bytes, stream));
      CHECK_CUDA(cudaEventRecord(a, stream));
      fn();
      CHECK_CUDA(cudaEventRecord(b, stream));
      CHECK_CUDA(cudaEventSynchronize(b));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
      ms.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  }
};

cufftHandle plan_1d(long long n, cufftType type, long long batch, cudaStream_t s) {
  cufftHandle h;
  size_t work = 0;
  CHECK_CUFFT(cufftCreate(&h));
  CHECK_CUFFT(cufftMakePlanMany64(h, 1, &n, nullptr, 1, 0, nullptr, 1, 0, type, batch, &work));
  CHECK_CUFFT(cufftSetStream(h, s));
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 24;
  const long long n = 1LL << log2n;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Timer timer(s);

  cufftComplex *c64_in, *c64_out;
  cufftDoubleComplex *c128_in, *c128_out;
  float* real;
  CHECK_CUDA(cudaMalloc(&c64_in, n * sizeof(cufftComplex)));
  CHECK_CUDA(cudaMalloc(&c64_out, n * sizeof(cufftComplex)));
  CHECK_CUDA(cudaMalloc(&c128_in, n * sizeof(cufftDoubleComplex)));
  CHECK_CUDA(cudaMalloc(&c128_out, n * sizeof(cufftDoubleComplex)));
  CHECK_CUDA(cudaMalloc(&real, n * sizeof(float)));
  fill<<<1024, 256, 0, s>>>(reinterpret_cast<float*>(c64_in), 2 * n);
  fill_double<<<1024, 256, 0, s>>>(reinterpret_cast<double*>(c128_in), 2 * n);
  fill<<<1024, 256, 0, s>>>(real, n);
  CHECK_CUDA(cudaStreamSynchronize(s));

  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int version = 0;
  CHECK_CUFFT(cufftGetVersion(&version));
  std::printf("cuFFT %d from C++, %s, n = 2^%d\n", version, prop.name, log2n);

  const cufftHandle c2c = plan_1d(n, CUFFT_C2C, 1, s);
  const cufftHandle z2z = plan_1d(n, CUFFT_Z2Z, 1, s);
  const cufftHandle r2c = plan_1d(n, CUFFT_R2C, 1, s);
  const cufftHandle c2r = plan_1d(n, CUFFT_C2R, 1, s);
  const cufftHandle batch = plan_1d(n / 256, CUFFT_C2C, 256, s);

  struct Case {
    const char* name;
    std::function<void()> fn;
  };
  // The C2R input is restored before each run (cuFFT overwrites it; cu.fft copies it first too).
  cufftComplex* spectrum = c64_out;
  const Case cases[] = {
      {"c2c_c64", [&] { CHECK_CUFFT(cufftExecC2C(c2c, c64_in, c64_out, CUFFT_FORWARD)); }},
      {"c2c_c64_inverse", [&] { CHECK_CUFFT(cufftExecC2C(c2c, c64_in, c64_out, CUFFT_INVERSE)); }},
      {"c2c_c128", [&] { CHECK_CUFFT(cufftExecZ2Z(z2z, c128_in, c128_out, CUFFT_FORWARD)); }},
      {"r2c_f32", [&] { CHECK_CUFFT(cufftExecR2C(r2c, real, c64_out)); }},
      {"c2r_f32",
       [&] {
         CHECK_CUDA(cudaMemcpyAsync(spectrum, c64_in, (n / 2 + 1) * sizeof(cufftComplex),
                                    cudaMemcpyDeviceToDevice, s));
         CHECK_CUFFT(cufftExecC2R(c2r, spectrum, real));
       }},
      {"c2c_c64_batch256",
       [&] { CHECK_CUFFT(cufftExecC2C(batch, c64_in, c64_out, CUFFT_FORWARD)); }},
  };
  for (const Case& c : cases) std::printf("fft_%s %.4f ms\n", c.name, timer.median_ms(c.fn));

  for (cufftHandle h : {c2c, z2z, r2c, c2r, batch}) cufftDestroy(h);
  cudaFree(c64_in);
  cudaFree(c64_out);
  cudaFree(c128_in);
  cudaFree(c128_out);
  cudaFree(real);
  cudaStreamDestroy(s);
  return 0;
}
