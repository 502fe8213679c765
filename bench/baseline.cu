// culua-baseline: the native C++ figures culua's benchmarks compare against, measured with raw
// CUDA runtime calls and events in the same run. Prints "name value unit" lines.
//
//   culua-baseline all                      transfers, allocation, context creation
//   culua-baseline transfers [MiB]          pinned and pageable copies (default 512 MiB)
//   culua-baseline alloc [MiB]              cudaMallocAsync/cudaFreeAsync vs cudaMalloc/cudaFree
//   culua-baseline startup CMD [ARGS...]    median wall time of running a command
//   culua-baseline d2d BYTES                device-to-device cudaMemcpyAsync of BYTES:
//                                           native.d2d_GBps (bytes read + written per second)
//   culua-baseline read BYTES               a read-only kernel (float4 loads, grid-stride, the sum
//                                           kept live): native.read_GBps (bytes read per second)
//   culua-baseline binary BYTES             c = a + b on floats (float4, grid-stride), each array
//                                           BYTES: native.binary_GBps (3 x BYTES per second)
//   culua-baseline gemm f32|bf16|f16|f64 N  cuBLAS N x N x N gemm (cublasGemmEx, column-major, no
//                                           transposes) with culua's compute types: f32 and
//                                           f16/bf16 accumulate in f32 without TF32
//                                           (CUBLAS_COMPUTE_32F), f64 in f64:
//                                           native.gemm_<dtype>_ms and native.gemm_<dtype>_TFLOPs
//                                           (2 N^3 flops)
//   culua-baseline launch [N]               empty kernels compiled with NVRTC (0, 4 and 8
//                                           parameters) launched with cuLaunchKernel on one
//                                           non-blocking stream: native.launchK_us (per launch,
//                                           N back-to-back launches timed with events) and
//                                           native.enqueueK_us (host time to issue 1000 launches,
//                                           per launch); medians of 11 runs, and with
//                                           `launch N raw` every run's figure as well
//   culua-baseline kernel FILE N GRID BLOCK SAMPLES
//                                           the saxpy of FILE timed as cu.bench times it
//   culua-baseline suite [options]          the performance suite's native figures: one JSON
//                                           record per line (docs/performance.md); options
//                                           --ops LIST --reps R --launches N --bw-sizes LIST
//                                           --transfer-sizes LIST --alloc-sizes LIST
//                                           --matmul-sizes LIST --sort-keys N --fft-points N
//                                           --reduce-bytes BYTES (bench/baseline_suite.cu)
//   culua-baseline nccl [options]           allreduce/allgather/reducescatter over all visible GPUs
//                                           with NCCL (dlopen), one JSON record per line: time,
//                                           algbw and busbw as nccl-tests computes them
//                                           (bench/baseline_nccl.cpp; --ops --min --max --iters)
//   culua-baseline first-kernel             creates the context, runs one kernel compiled into
//                                           the binary, synchronizes and exits 0 (the suite times
//                                           the whole process)
// BYTES may carry a suffix K, M or G (powers of 1024): 2G, 512M. The kernels round it down to a
// multiple of 16. Each figure is the best of several event-timed runs after a warm-up; the device
// is device 0. Exit status 2 for bad arguments, 1 for a CUDA or cuBLAS failure. Driver API
// functions are resolved through the runtime (cudaGetDriverEntryPointByVersion, as culua does):
// the program links no libcuda.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "baseline_nccl.hpp"
#include "baseline_suite.hpp"

extern char** environ;

namespace culua_baseline {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "2G", "512M", "1048576" -> bytes; 0 when unreadable.
size_t parse_bytes(const char* s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s) return 0;
  const std::string suffix(end);
  if (suffix.empty() || suffix == "B") return v;
  if (suffix == "K" || suffix == "KiB") return v << 10;
  if (suffix == "M" || suffix == "MiB") return v << 20;
  if (suffix == "G" || suffix == "GiB") return v << 30;
  return 0;
}

namespace {

// Opens the first of `names` that loads and stores the address of each symbol of `symbols` in its
// slot; "" or what failed.
std::string open_library(std::initializer_list<const char*> names,
                         std::initializer_list<std::pair<const char*, void**>> symbols) {
  void* lib = nullptr;
  std::string errors;
  for (const char* name : names) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!lib) return "cannot load " + std::string(*names.begin()) + ": " + errors;
  for (const auto& [symbol, slot] : symbols) {
    *slot = dlsym(lib, symbol);
    if (!*slot) return std::string(*names.begin()) + " has no " + symbol;
  }
  return "";  // the library stays loaded for the life of the process
}

template <class F>
std::pair<const char*, void**> slot(const char* symbol, F& f) {
  return {symbol, reinterpret_cast<void**>(&f)};
}

}  // namespace

const Cublas* load_cublas(std::string* error) {
  static Cublas api;
  static const std::string failure = open_library(
      {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"},
      {slot("cublasCreate_v2", api.create), slot("cublasDestroy_v2", api.destroy),
       slot("cublasSetStream_v2", api.set_stream), slot("cublasSetMathMode", api.set_math_mode),
       slot("cublasGemmEx", api.gemm_ex), slot("cublasGetStatusName", api.status_name),
       slot("cublasGetProperty", api.get_property)});
  if (!failure.empty()) {
    if (error) *error = failure;
    return nullptr;
  }
  return &api;
}

const Cufft* load_cufft(std::string* error) {
  static Cufft api;
  static const std::string failure = open_library(
      {"libcufft.so.12", "/usr/local/cuda/lib64/libcufft.so.12"},
      {slot("cufftCreate", api.create), slot("cufftDestroy", api.destroy),
       slot("cufftMakePlanMany64", api.make_plan_many_64), slot("cufftSetStream", api.set_stream),
       slot("cufftExecC2C", api.exec_c2c), slot("cufftGetVersion", api.get_version)});
  if (!failure.empty()) {
    if (error) *error = failure;
    return nullptr;
  }
  return &api;
}

const Nvrtc* load_nvrtc(std::string* error) {
  static Nvrtc api;
  static const std::string failure = open_library(
      {"libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13"},
      {slot("nvrtcVersion", api.version), slot("nvrtcCreateProgram", api.create_program),
       slot("nvrtcDestroyProgram", api.destroy_program),
       slot("nvrtcCompileProgram", api.compile_program),
       slot("nvrtcGetCUBINSize", api.get_cubin_size), slot("nvrtcGetCUBIN", api.get_cubin)});
  if (!failure.empty()) {
    if (error) *error = failure;
    return nullptr;
  }
  return &api;
}

}  // namespace culua_baseline

using culua_baseline::median;
using culua_baseline::now_s;
using culua_baseline::parse_bytes;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "culua-baseline: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call)

// Median GB/s of `reps` single copies, each timed with events.
double copy_bandwidth(void* dst, const void* src, size_t bytes, cudaStream_t s, int reps) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 2; ++i) CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
  CHECK(cudaStreamSynchronize(s));
  std::vector<double> gbps;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    gbps.push_back(static_cast<double>(bytes) / (ms * 1e6));
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return median(gbps);
}

// Copies between every ordered pair of devices with cudaMemcpyPeerAsync (peer access enabled
// where the pair allows it), on a stream of the destination device: the median GB/s of `reps`
// copies, each timed with events. One JSON line per pair.
int peer_bandwidth(size_t bytes, int reps) {
  int n = 0;
  CHECK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::fprintf(stderr, "culua-baseline: peer needs two devices, found %d\n", n);
    return 3;
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      int access = 0;
      CHECK(cudaDeviceCanAccessPeer(&access, j, i));
      void* src = nullptr;
      void* dst = nullptr;
      CHECK(cudaSetDevice(i));
      CHECK(cudaMalloc(&src, bytes));
      CHECK(cudaMemset(src, 1, bytes));
      if (access) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) CHECK(e);
        cudaGetLastError();
      }
      CHECK(cudaSetDevice(j));
      if (access) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(i, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) CHECK(e);
        cudaGetLastError();
      }
      CHECK(cudaMalloc(&dst, bytes));
      cudaStream_t s;
      CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      cudaEvent_t a, b;
      CHECK(cudaEventCreate(&a));
      CHECK(cudaEventCreate(&b));
      for (int k = 0; k < 2; ++k) CHECK(cudaMemcpyPeerAsync(dst, j, src, i, bytes, s));
      CHECK(cudaStreamSynchronize(s));
      std::vector<double> gbps;
      for (int k = 0; k < reps; ++k) {
        CHECK(cudaEventRecord(a, s));
        CHECK(cudaMemcpyPeerAsync(dst, j, src, i, bytes, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        gbps.push_back(static_cast<double>(bytes) / (ms * 1e6));
      }
      std::printf("{\"src\":%d,\"dst\":%d,\"bytes\":%zu,\"peer_access\":%s,\"GBps\":%.3f}\n", i, j,
                  bytes, access ? "true" : "false", median(gbps));
      CHECK(cudaEventDestroy(a));
      CHECK(cudaEventDestroy(b));
      CHECK(cudaStreamDestroy(s));
      CHECK(cudaFree(dst));
      CHECK(cudaSetDevice(i));
      CHECK(cudaFree(src));
    }
  }
  return 0;
}

// Pageable copies have synchronous semantics: time them with the host clock around
// cudaMemcpy, as a program using them experiences it.
double pageable_bandwidth(void* dst, const void* src, size_t bytes, int reps) {
  CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  std::vector<double> gbps;
  for (int i = 0; i < reps; ++i) {
    const double t0 = now_s();
    CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    gbps.push_back(static_cast<double>(bytes) / ((now_s() - t0) * 1e9));
  }
  return median(gbps);
}

void transfers(size_t mib) {
  const size_t bytes = mib << 20;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *d, *pinned;
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable));
  std::vector<unsigned char> pageable(bytes, 1);
  std::memset(pinned, 1, bytes);
  const int reps = 10;
  std::printf("native.h2d_pinned_GBps %.2f GB/s\n", copy_bandwidth(d, pinned, bytes, s, reps));
  std::printf("native.d2h_pinned_GBps %.2f GB/s\n", copy_bandwidth(pinned, d, bytes, s, reps));
  std::printf("native.h2d_pageable_GBps %.2f GB/s\n",
              pageable_bandwidth(d, pageable.data(), bytes, reps));
  std::printf("native.d2h_pageable_GBps %.2f GB/s\n",
              pageable_bandwidth(pageable.data(), d, bytes, reps));
  std::printf("native.transfer_MiB %zu MiB\n", mib);
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(s));
}

void alloc(size_t mib) {
  const size_t bytes = mib << 20;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t threshold = std::numeric_limits<uint64_t>::max();
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  void* p = nullptr;
  for (int i = 0; i < 100; ++i) {  // warm the pool
    CHECK(cudaMallocAsync(&p, bytes, s));
    CHECK(cudaFreeAsync(p, s));
  }
  std::vector<double> us;
  for (int batch = 0; batch < 10; ++batch) {
    const int n = 1000;
    const double t0 = now_s();
    for (int i = 0; i < n; ++i) {
      CHECK(cudaMallocAsync(&p, bytes, s));
      CHECK(cudaFreeAsync(p, s));
    }
    us.push_back((now_s() - t0) / n * 1e6);
  }
  CHECK(cudaStreamSynchronize(s));
  std::printf("native.pool_alloc_free_us %.3f us\n", median(us));
  us.clear();
  for (int i = 0; i < 20; ++i) {
    const double t0 = now_s();
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaFree(p));
    us.push_back((now_s() - t0) * 1e6);
  }
  std::printf("native.malloc_free_us %.3f us\n", median(us));
  std::printf("native.alloc_MiB %zu MiB\n", mib);
  CHECK(cudaStreamDestroy(s));
}

// cuBLAS and NVRTC for the text modes: a failure to load them ends the program.
const culua_baseline::Cublas& blas() {
  std::string error;
  const culua_baseline::Cublas* api = culua_baseline::load_cublas(&error);
  if (!api) {
    std::fprintf(stderr, "culua-baseline: %s\n", error.c_str());
    std::exit(1);
  }
  return *api;
}

const culua_baseline::Nvrtc& rtc() {
  std::string error;
  const culua_baseline::Nvrtc* api = culua_baseline::load_nvrtc(&error);
  if (!api) {
    std::fprintf(stderr, "culua-baseline: %s\n", error.c_str());
    std::exit(1);
  }
  return *api;
}

void check_blas(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "culua-baseline: %s: %s\n", what, blas().status_name(st));
    std::exit(1);
  }
}
#define CHECK_BLAS(call) check_blas((call), #call)

// Best (shortest) event-timed milliseconds of `fn` enqueued on `s`, after `warmup` runs.
template <class F>
double best_ms(cudaStream_t s, int warmup, int reps, F&& fn) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmup; ++i) fn();
  CHECK(cudaStreamSynchronize(s));
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(a, s));
    fn();
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, static_cast<double>(ms));
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return best;
}

// Blocks of 256 threads that fill every SM.
unsigned resident_blocks() {
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, 0));
  return static_cast<unsigned>(p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / 256));
}

__global__ void read_kernel(const float4* in, size_t n, float* sink) {
  float acc = 0;
#pragma unroll 4
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    const float4 v = in[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == -1.0f) *sink = acc;  // never true for the zeros read; keeps the loads live
}

__global__ void add_kernel(const float4* a, const float4* b, float4* c, size_t n) {
#pragma unroll 4
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

template <class T>
__global__ void fill_kernel(T* p, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    p[i] = static_cast<T>(static_cast<float>(i % 7) * 0.125f - 0.375f);
  }
}

void d2d_bandwidth(size_t bytes) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *src, *dst;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemset(src, 1, bytes));
  const double ms = best_ms(
      s, 2, 10, [&] { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); });
  std::printf("native.d2d_GBps %.2f GB/s\n", 2.0 * static_cast<double>(bytes) / (ms * 1e6));
  std::printf("native.d2d_bytes %zu B\n", bytes);
  CHECK(cudaFree(src));
  CHECK(cudaFree(dst));
  CHECK(cudaStreamDestroy(s));
}

void read_bandwidth(size_t bytes) {
  const size_t n = bytes / 16;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float4* in;
  float* sink;
  CHECK(cudaMalloc(&in, n * 16));
  CHECK(cudaMalloc(&sink, sizeof(float)));
  CHECK(cudaMemset(in, 0, n * 16));
  const unsigned blocks = resident_blocks();
  const double ms = best_ms(s, 2, 10, [&] {
    read_kernel<<<blocks, 256, 0, s>>>(in, n, sink);
    CHECK(cudaGetLastError());
  });
  std::printf("native.read_GBps %.2f GB/s\n", static_cast<double>(n * 16) / (ms * 1e6));
  std::printf("native.read_bytes %zu B\n", n * 16);
  CHECK(cudaFree(in));
  CHECK(cudaFree(sink));
  CHECK(cudaStreamDestroy(s));
}

void binary_bandwidth(size_t bytes) {
  const size_t n = bytes / 16;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float4 *a, *b, *c;
  CHECK(cudaMalloc(&a, n * 16));
  CHECK(cudaMalloc(&b, n * 16));
  CHECK(cudaMalloc(&c, n * 16));
  CHECK(cudaMemset(a, 0, n * 16));
  CHECK(cudaMemset(b, 0, n * 16));
  const unsigned blocks = resident_blocks();
  const double ms = best_ms(s, 2, 10, [&] {
    add_kernel<<<blocks, 256, 0, s>>>(a, b, c, n);
    CHECK(cudaGetLastError());
  });
  std::printf("native.binary_GBps %.2f GB/s\n", 3.0 * static_cast<double>(n * 16) / (ms * 1e6));
  std::printf("native.binary_bytes %zu B\n", n * 16);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaStreamDestroy(s));
}

template <class T>
void gemm_typed(const std::string& dtype, int n, cudaDataType type, cublasComputeType_t compute) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h;
  CHECK_BLAS(blas().create(&h));
  CHECK_BLAS(blas().set_stream(h, s));
  CHECK_BLAS(blas().set_math_mode(h, CUBLAS_DEFAULT_MATH));
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  T *a, *b, *c;
  CHECK(cudaMalloc(&a, count * sizeof(T)));
  CHECK(cudaMalloc(&b, count * sizeof(T)));
  CHECK(cudaMalloc(&c, count * sizeof(T)));
  const unsigned blocks = resident_blocks();
  fill_kernel<<<blocks, 256, 0, s>>>(a, count);
  fill_kernel<<<blocks, 256, 0, s>>>(b, count);
  CHECK(cudaGetLastError());
  // alpha/beta in the compute type's scale type: double for 64F, float otherwise.
  const double alpha64 = 1, beta64 = 0;
  const float alpha32 = 1, beta32 = 0;
  const bool f64 = compute == CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  const int reps = flops > 1e12 ? 5 : 20;
  const double ms = best_ms(s, 3, reps, [&] {
    CHECK_BLAS(blas().gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, alpha, a, type, n, b, type, n,
                              beta, c, type, n, compute, CUBLAS_GEMM_DEFAULT));
  });
  std::printf("native.gemm_%s_ms %.4f ms\n", dtype.c_str(), ms);
  std::printf("native.gemm_%s_TFLOPs %.2f TFLOP/s\n", dtype.c_str(), flops / (ms * 1e9));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK_BLAS(blas().destroy(h));
  CHECK(cudaStreamDestroy(s));
}

int gemm(const std::string& dtype, int n) {
  if (dtype == "f32") {
    gemm_typed<float>(dtype, n, CUDA_R_32F, CUBLAS_COMPUTE_32F);
  } else if (dtype == "f64") {
    gemm_typed<double>(dtype, n, CUDA_R_64F, CUBLAS_COMPUTE_64F);
  } else if (dtype == "f16") {
    gemm_typed<__half>(dtype, n, CUDA_R_16F, CUBLAS_COMPUTE_32F);
  } else if (dtype == "bf16") {
    gemm_typed<__nv_bfloat16>(dtype, n, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
  } else {
    std::fprintf(stderr, "culua-baseline: gemm dtype must be f32, bf16, f16 or f64, not %s\n",
                 dtype.c_str());
    return 2;
  }
  return 0;
}

void context() {
  const double t0 = now_s();
  CHECK(cudaFree(nullptr));
  std::printf("native.context_s %.4f s\n", now_s() - t0);
}

int startup(int argc, char** argv) {
  std::vector<double> ms;
  for (int i = 0; i < 21; ++i) {
    const double t0 = now_s();
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv, environ) != 0) {
      std::fprintf(stderr, "culua-baseline: cannot run %s\n", argv[0]);
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "culua-baseline: %s failed\n", argv[0]);
      return 1;
    }
    ms.push_back((now_s() - t0) * 1e3);
  }
  (void)argc;
  std::printf("startup_ms %.3f ms\n", median(ms));
  return 0;
}

}  // namespace

namespace culua_baseline {

std::string compile_empty_kernels(int major, int minor, std::vector<char>& cubin) {
  std::string error;
  const Nvrtc* api = load_nvrtc(&error);
  if (!api) return error;
  nvrtcProgram prog;
  if (api->create_program(&prog, kLaunchSource, "launch.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  const std::string arch = "-arch=sm_" + std::to_string(major * 10 + minor);
  const char* opts[] = {arch.c_str()};
  if (api->compile_program(prog, 1, opts) != NVRTC_SUCCESS) {
    api->destroy_program(&prog);
    return "NVRTC failed to compile the empty kernels";
  }
  size_t size = 0;
  if (api->get_cubin_size(prog, &size) != NVRTC_SUCCESS || size == 0) {
    api->destroy_program(&prog);
    return "NVRTC produced no cubin for the empty kernels";
  }
  cubin.assign(size, 0);
  const nvrtcResult got = api->get_cubin(prog, cubin.data());
  api->destroy_program(&prog);
  return got == NVRTC_SUCCESS ? "" : "nvrtcGetCUBIN failed";
}

namespace {
template <class F>
std::string resolve(const char* symbol, F& out) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    return std::string("the CUDA driver has no ") + symbol +
           (e != cudaSuccess ? std::string(": ") + cudaGetErrorString(e) : std::string());
  }
  out = reinterpret_cast<F>(p);
  return "";
}
}  // namespace

std::string load_driver(Driver& d) {
  std::string err;
  if (err.empty()) err = resolve("cuGetErrorString", d.get_error_string);
  if (err.empty()) err = resolve("cuModuleLoadData", d.module_load_data);
  if (err.empty()) err = resolve("cuModuleUnload", d.module_unload);
  if (err.empty()) err = resolve("cuModuleGetFunction", d.module_get_function);
  if (err.empty()) err = resolve("cuLaunchKernel", d.launch_kernel);
  return err;
}

}  // namespace culua_baseline

namespace {

// The driver functions of the text modes: a failure to resolve them ends the program.
const culua_baseline::Driver& driver() {
  static culua_baseline::Driver d;
  static bool loaded = false;
  if (!loaded) {
    const std::string err = culua_baseline::load_driver(d);
    if (!err.empty()) {
      std::fprintf(stderr, "culua-baseline: %s\n", err.c_str());
      std::exit(1);
    }
    loaded = true;
  }
  return d;
}

void check_cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* msg = nullptr;
    if (driver().get_error_string) driver().get_error_string(r, &msg);
    std::fprintf(stderr, "culua-baseline: %s: %s\n", what, msg ? msg : "?");
    std::exit(1);
  }
}

}  // namespace

int launch_overhead(int n, bool raw) {
  CHECK(cudaFree(nullptr));
  int dev = 0, major = 0, minor = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  std::vector<char> cubin;
  const std::string err = culua_baseline::compile_empty_kernels(major, minor, cubin);
  if (!err.empty()) {
    std::fprintf(stderr, "culua-baseline: %s\n", err.c_str());
    return 1;
  }
  CUmodule module;
  check_cu(driver().module_load_data(&module, cubin.data()), "cuModuleLoadData");
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float* a = nullptr;
  CHECK(cudaMalloc(&a, 1024));
  float c = 1.5f;
  int count = 256;
  double f = 2.5;
  long long g = 7;
  void* args[] = {&a, &a, &c, &count, &a, &a, &f, &g};
  for (int params : {0, 4, 8}) {
    CUfunction fn;
    const std::string name = "empty" + std::to_string(params);
    check_cu(driver().module_get_function(&fn, module, name.c_str()), "cuModuleGetFunction");
    const auto launch_kernel = driver().launch_kernel;
    auto issue = [&](int count_) {
      for (int i = 0; i < count_; ++i) {
        check_cu(launch_kernel(fn, 1, 1, 1, 1, 1, 1, 0, s, params ? args : nullptr, nullptr),
                 "cuLaunchKernel");
      }
    };
    issue(1000);
    CHECK(cudaStreamSynchronize(s));
    std::vector<double> per_launch, enqueue;
    for (int rep = 0; rep < 11; ++rep) {
      CHECK(cudaEventRecord(e0, s));
      issue(n);
      CHECK(cudaEventRecord(e1, s));
      CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1));
      per_launch.push_back(ms * 1e3 / n);
      const double t0 = now_s();
      issue(1000);
      enqueue.push_back((now_s() - t0) * 1e6 / 1000);
      CHECK(cudaStreamSynchronize(s));
    }
    if (raw) {
      for (double v : per_launch) std::printf("native.launch%d_us_sample %.4f us\n", params, v);
      for (double v : enqueue) std::printf("native.enqueue%d_us_sample %.4f us\n", params, v);
    }
    std::printf("native.launch%d_us %.3f us\n", params, median(per_launch));
    std::printf("native.enqueue%d_us %.3f us\n", params, median(enqueue));
  }
  CHECK(cudaFree(a));
  check_cu(driver().module_unload(module), "cuModuleUnload");
  return 0;
}

// The saxpy of bench/kernels/saxpy.cu on n floats, timed as cu.bench times it: cold samples (L2
// flushed by writing a buffer twice the L2's size, the stream drained, then events around one
// launch) and hot batches (back-to-back launches between two events). Prints medians in ms.
int kernel_agreement(const char* file, long long n, int grid, int block, int samples) {
  std::FILE* f = std::fopen(file, "rb");
  if (!f) {
    std::fprintf(stderr, "culua-baseline: cannot read %s\n", file);
    return 2;
  }
  std::string source;
  char buf[4096];
  for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) source.append(buf, got);
  std::fclose(f);
  CHECK(cudaFree(nullptr));
  int dev = 0, major = 0, minor = 0, l2 = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  nvrtcProgram prog;
  // The gate: a kernel spinning on the global timer, as culua's cu.sleep.
  source += R"(
extern "C" __global__ void culua_hold(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
)";
  if (rtc().create_program(&prog, source.c_str(), "saxpy.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    return 1;
  const std::string arch = "-arch=sm_" + std::to_string(major * 10 + minor);
  const char* opts[] = {arch.c_str(), "-std=c++17"};
  if (rtc().compile_program(prog, 2, opts) != NVRTC_SUCCESS) {
    std::fprintf(stderr, "culua-baseline: NVRTC failed to compile %s\n", file);
    return 1;
  }
  size_t size = 0;
  rtc().get_cubin_size(prog, &size);
  std::vector<char> cubin(size);
  rtc().get_cubin(prog, cubin.data());
  rtc().destroy_program(&prog);
  CUmodule module;
  CUfunction fn;
  check_cu(driver().module_load_data(&module, cubin.data()), "cuModuleLoadData");
  check_cu(driver().module_get_function(&fn, module, "saxpy"), "cuModuleGetFunction");
  CUfunction hold;
  check_cu(driver().module_get_function(&hold, module, "culua_hold"), "cuModuleGetFunction");
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float *x = nullptr, *y = nullptr;
  void* flush = nullptr;
  const size_t flush_bytes = 2 * static_cast<size_t>(l2 > 0 ? l2 : 64 << 20);
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  float a = 2.0f;
  void* args[] = {&a, &x, &y, &n};
  auto launch = [&] {
    check_cu(driver().launch_kernel(fn, grid, 1, 1, block, 1, 1, 0, s, args, nullptr),
             "cuLaunchKernel");
  };
  auto elapsed = [&] {
    float ms = 0;
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return static_cast<double>(ms);
  };
  launch();
  CHECK(cudaStreamSynchronize(s));
  // As cu.bench: per sample a host-timed call, then a call held behind a gate (a spinning kernel
  // lasting four times the host's issue time, at least 50 us) so that the events time the
  // device's work alone. Both after an L2 flush and a drained stream.
  std::vector<double> cold, ungated;
  for (int i = 0; i < samples; ++i) {
    CHECK(cudaMemsetAsync(flush, i & 1, flush_bytes, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaEventRecord(e0, s));
    const double t0 = now_s();
    launch();
    const double issue_ms = (now_s() - t0) * 1e3;
    CHECK(cudaEventRecord(e1, s));
    ungated.push_back(elapsed());
    CHECK(cudaMemsetAsync(flush, (i + 1) & 1, flush_bytes, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned long long hold_ns =
        static_cast<unsigned long long>(std::max(0.05, 4 * issue_ms) * 1e6);
    void* hold_args[] = {&hold_ns};
    check_cu(driver().launch_kernel(hold, 1, 1, 1, 1, 1, 1, 0, s, hold_args, nullptr),
             "cuLaunchKernel");
    CHECK(cudaEventRecord(e0, s));
    launch();
    const bool held = cudaEventQuery(e0) == cudaErrorNotReady;
    CHECK(cudaEventRecord(e1, s));
    const double ms = elapsed();
    if (held) cold.push_back(ms);
  }
  // Hot: batches lasting about 10 ms each.
  const int batch = std::max(1, static_cast<int>(10.0 / std::max(median(cold), 1e-3)));
  std::vector<double> hot;
  for (int b = 0; b < 20; ++b) {
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaEventRecord(e0, s));
    for (int i = 0; i < batch; ++i) launch();
    CHECK(cudaEventRecord(e1, s));
    hot.push_back(elapsed() / batch);
  }
  std::printf("native.cold_median_ms %.6f\n", median(cold));
  std::printf("native.cold_held_samples %zu\n", cold.size());
  std::printf("native.cold_ungated_median_ms %.6f\n", median(ungated));
  std::printf("native.cold_min_ms %.6f\n", *std::min_element(cold.begin(), cold.end()));
  std::printf("native.hot_median_ms %.6f\n", median(hot));
  std::printf("native.hot_batch %d\n", batch);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(flush));
  check_cu(driver().module_unload(module), "cuModuleUnload");
  return 0;
}

constexpr const char* kUsage =
    "usage: culua-baseline all | transfers [MiB] | alloc [MiB] | context | startup CMD... |\n"
    "                      d2d BYTES | read BYTES | binary BYTES | gemm f32|bf16|f16|f64 N |\n"
    "                      peer BYTES (copies between every pair of devices) |\n"
    "                      launch [N] | kernel FILE N GRID BLOCK SAMPLES | first-kernel |\n"
    "                      suite [--ops LIST] [--reps R] [--launches N] [--bw-sizes LIST]\n"
    "                            [--transfer-sizes LIST] [--alloc-sizes LIST]\n"
    "                            [--matmul-sizes LIST]   (culua-baseline suite --help) |\n"
    "                      nccl [--ops LIST] [--min BYTES] [--max BYTES] [--iters N]\n"
    "                           [--warmup N] |\n"
    "                      rk4 [--n N] [--steps S] [--reps R]   (the RK4 loop's native floors)\n";

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "all";
  if (cmd == "suite") return culua_baseline::suite(argc - 2, argv + 2);
  if (cmd == "nccl") return culua_baseline::nccl(argc - 2, argv + 2);
  if (cmd == "rk4") return culua_baseline::rk4(argc - 2, argv + 2);
  if (cmd == "first-kernel") {
    if (argc != 2) {
      std::fprintf(stderr, "%s", kUsage);
      return 2;
    }
    return culua_baseline::first_kernel();
  }
  if (cmd == "d2d" || cmd == "read" || cmd == "binary") {
    const size_t bytes = argc == 3 ? parse_bytes(argv[2]) : 0;
    if (bytes < 16) {
      std::fprintf(stderr, "culua-baseline: %s needs a size of at least 16 bytes (like 2G)\n%s",
                   cmd.c_str(), kUsage);
      return 2;
    }
    if (cmd == "d2d") d2d_bandwidth(bytes);
    if (cmd == "read") read_bandwidth(bytes);
    if (cmd == "binary") binary_bandwidth(bytes);
    return 0;
  }
  if (cmd == "peer") {
    const size_t bytes = argc == 3 ? parse_bytes(argv[2]) : 0;
    if (bytes < 16) {
      std::fprintf(stderr, "culua-baseline: peer needs a size of at least 16 bytes (like 64M)\n%s",
                   kUsage);
      return 2;
    }
    return peer_bandwidth(bytes, 20);
  }
  if (cmd == "gemm") {
    const long n = argc == 4 ? std::strtol(argv[3], nullptr, 10) : 0;
    if (n < 1 || n > 65536) {
      std::fprintf(stderr, "culua-baseline: gemm needs a dtype and a size N in 1..65536\n%s",
                   kUsage);
      return 2;
    }
    return gemm(argv[2], static_cast<int>(n));
  }
  if (cmd == "launch") {
    const long n = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 10000;
    if (n < 1) {
      std::fprintf(stderr, "culua-baseline: launch needs a positive count\n%s", kUsage);
      return 2;
    }
    return launch_overhead(static_cast<int>(n), argc > 3 && std::string(argv[3]) == "raw");
  }
  if (cmd == "kernel") {
    if (argc != 7) {
      std::fprintf(stderr, "%s", kUsage);
      return 2;
    }
    return kernel_agreement(argv[2], std::atoll(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                            std::atoi(argv[6]));
  }
  const size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  if (cmd == "startup") {
    if (argc < 3) {
      std::fprintf(stderr, "usage: culua-baseline startup CMD [ARGS...]\n");
      return 2;
    }
    return startup(argc - 2, argv + 2);
  }
  if (cmd == "all" || cmd == "context") context();
  if (cmd == "all" || cmd == "transfers") transfers(mib ? mib : 512);
  if (cmd == "all" || cmd == "alloc") alloc(mib ? mib : 64);
  if (cmd != "all" && cmd != "context" && cmd != "transfers" && cmd != "alloc") {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  return 0;
}
