// culua-baseline: the native C++ figures culua's benchmarks compare against, measured with raw
// CUDA runtime calls and events in the same run. Prints "name value unit" lines.
//
//   culua-baseline all                      transfers, allocation, context creation
//   culua-baseline transfers [MiB]          pinned and pageable copies (default 512 MiB)
//   culua-baseline alloc [MiB]              cudaMallocAsync/cudaFreeAsync vs cudaMalloc/cudaFree
//   culua-baseline startup CMD [ARGS...]    median wall time of running a command
#include <cuda_runtime.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

extern char** environ;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "culua-baseline: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call)

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "all";
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
    std::fprintf(stderr,
                 "usage: culua-baseline all|transfers [MiB]|alloc [MiB]|context|startup CMD...\n");
    return 2;
  }
  return 0;
}
