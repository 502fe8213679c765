// culua-baseline suite: the native figures of the performance suite (docs/performance.md), one
// JSON record per line on standard output, measured with raw CUDA runtime and driver calls,
// cuBLAS, CUB and events on one non-blocking stream of device 0.
//
// A measurement that fails gives an error record and the run goes on (what it had allocated is
// freed, the error cleared); an error that leaves the device unusable (an illegal address, ...)
// ends the program with status 1, as does a machine without a usable device. Bad options: the
// usage and status 2.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "baseline_suite.hpp"
#include "core/backend/elementwise_call.hpp"
#include "kernels/kernels.hpp"

namespace culua_baseline {

const char* const kSuiteUsage =
    "usage: culua-baseline suite [--ops LIST] [--reps R] [--launches N] [--bw-sizes LIST]\n"
    "                            [--transfer-sizes LIST] [--alloc-sizes LIST]\n"
    "                            [--matmul-sizes LIST] [--sort-keys N] [--fft-points N]\n"
    "                            [--reduce-bytes BYTES]\n"
    "The native figures of the performance suite (docs/performance.md): one JSON record per\n"
    "line on standard output, impl \"native\", device 0, one non-blocking stream.\n"
    "  --ops LIST             comma-separated groups (default: all of them, startup first):\n"
    "                         launch     launch_rtc0/4/8, enqueue_rtc0/4/8, sync_empty (NVRTC,\n"
    "                                    cuLaunchKernel), launch_static0, enqueue_static0\n"
    "                         add1k      launch_add1k, enqueue_add1k, sync_add1k (culua's add\n"
    "                                    kernel called from C++) and the same with _raw (a\n"
    "                                    plain <<<>>> float4 add kernel)\n"
    "                         graph      graph_empty, graph_add1k (per node of a CUDA graph of\n"
    "                                    1000 launches, replayed), graph_capture_empty,\n"
    "                                    graph_capture_add1k, graph_instantiate_empty,\n"
    "                                    graph_instantiate_add1k (capture and instantiation)\n"
    "                         bandwidth  copy, add, sum, sum_cub, cast at every --bw-sizes\n"
    "                         transfer   h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable\n"
    "                         alloc      cudaMallocAsync + cudaFreeAsync at every --alloc-sizes\n"
    "                         matmul     matmul_f32, matmul_bf16, matmul_f64 (cublasGemmEx)\n"
    "                         arrays     sort_f32, sort_i32, argsort_f32, argsort_i32 (CUB's\n"
    "                                    radix sort), fft_c64 (cuFFT), arrays_copy (cudaMemcpy\n"
    "                                    at --reduce-bytes: the bound of cumsum, any, std),\n"
    "                                    cumsum (CUB's DeviceScan::InclusiveSum, f32)\n"
    "                         startup    context, first_kernel\n"
    "  --reps R               repetitions per figure (default 11)\n"
    "  --launches N           back-to-back launches per launch_* repetition (default 10000);\n"
    "                         graph_empty and graph_add1k replay their graph N / 1000 times\n"
    "                         (at least once) per repetition\n"
    "  --bw-sizes LIST        bytes per array, suffix K, M or G (powers of 1024), multiples of\n"
    "                         4 (default 4K,16K,...,4G: steps of 4x)\n"
    "  --transfer-sizes LIST  bytes (default 4K,16K,...,1G)\n"
    "  --alloc-sizes LIST     bytes (default 4K,16K,...,1G)\n"
    "  --matmul-sizes LIST    N of the N x N x N products (default 1024,2048,4096,8192)\n"
    "  --sort-keys N          keys sorted (default 67108864 = 2^26)\n"
    "  --fft-points N         points of the c64 transform (default 16777216 = 2^24)\n"
    "  --reduce-bytes BYTES   size of arrays_copy (default 1G)\n"
    "An info record comes first (device, versions, clocks). Status 2 for bad options, 1 when\n"
    "there is no usable device or the device fails beyond recovery.\n";

namespace {

// ---------------------------------------------------------------------------------------------
// Records

std::string quote(const std::string& s) {
  std::string r = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        r += "\\\"";
        break;
      case '\\':
        r += "\\\\";
        break;
      case '\n':
        r += "\\n";
        break;
      case '\r':
        r += "\\r";
        break;
      case '\t':
        r += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          r += buf;
        } else {
          r += ch;
        }
    }
  }
  return r + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A JSON object built key by key.
class Object {
 public:
  Object& add(const char* key, const std::string& json) {
    if (text_.size() > 1) text_ += ',';
    text_ += quote(key);
    text_ += ':';
    text_ += json;
    return *this;
  }
  Object& str(const char* key, const std::string& v) { return add(key, quote(v)); }
  Object& num(const char* key, double v) { return add(key, number(v)); }
  Object& integer(const char* key, long long v) { return add(key, std::to_string(v)); }
  std::string json() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

void emit(const Object& o) {
  const std::string line = o.json() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

constexpr long long kNoSize = -1;

Object record(const std::string& op, long long size) {
  Object o;
  o.str("impl", "native").str("op", op);
  if (size >= 0) o.integer("size", size);
  return o;
}

// median, min and max of `values`; batch 0: the repetitions time single operations.
Object figures(const std::string& op, long long size, const char* unit,
               const std::vector<double>& values, int batch, const std::string& how) {
  Object o = record(op, size);
  o.str("unit", unit);
  o.num("median", median(values));
  o.num("min", values.empty() ? 0 : *std::min_element(values.begin(), values.end()));
  o.num("max", values.empty() ? 0 : *std::max_element(values.begin(), values.end()));
  o.integer("n", static_cast<long long>(values.size()));
  if (batch > 0) o.integer("batch", batch);
  o.str("how", how);
  return o;
}

void emit_figures(const std::string& op, long long size, const char* unit,
                  const std::vector<double>& values, int batch, const std::string& how) {
  emit(figures(op, size, unit, values, batch, how));
}

void emit_error(const std::string& op, long long size, const std::string& message) {
  Object o = record(op, size);
  o.str("error", message);
  emit(o);
}

// ---------------------------------------------------------------------------------------------
// Failures: thrown out of a measurement, reported as its error record.

using Failure = CudaFailure;
void ck(cudaError_t e, const char* what) {
  check_cuda(e, what);
}
#define CK(call) ck((call), #call)

void ck_blas(const Cublas& api, cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS) throw Failure(std::string(what) + ": " + api.status_name(st));
}
#define CK_BLAS(api, call) ck_blas((api), (api).call, #call)

std::string cu_message(const Driver& d, CUresult r, const char* what) {
  const char* msg = nullptr;
  if (d.get_error_string) d.get_error_string(r, &msg);
  return std::string(what) + ": " + (msg ? msg : "CUresult " + std::to_string(static_cast<int>(r)));
}

// After every measurement: clears an error that leaves the context usable; ends the program when
// the context is broken (a sticky error: nothing after it can be measured).
void settle() {
  cudaGetLastError();
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "culua-baseline: the device failed beyond recovery: %s: %s\n",
                 cudaGetErrorName(e), cudaGetErrorString(e));
    std::exit(1);
  }
  cudaGetLastError();
}

// Runs `body` (what it allocated is freed when it throws); "" or what failed.
template <class F>
std::string caught(F&& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    return "out of host memory";
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Runs `body`; "" or what failed (the error cleared).
template <class F>
std::string attempt(F&& body) {
  const std::string error = caught(body);
  settle();
  return error;
}

// Runs the measurement `body` of op at size; its failure becomes the op's error record.
template <class F>
void guarded(const std::string& op, long long size, F&& body) {
  const std::string error = caught(body);
  if (!error.empty()) emit_error(op, size, error);
  settle();
}

// ---------------------------------------------------------------------------------------------
// Resources, released on every path.

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { CK(cudaMalloc(&p_, std::max<size_t>(bytes, 1))); }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T = void>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes) {
    CK(cudaHostAlloc(&p_, std::max<size_t>(bytes, 1), cudaHostAllocPortable));
  }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

class Event {
 public:
  Event() { CK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Milliseconds between two events recorded on s around fn().
template <class F>
double event_ms(cudaStream_t s, const Event& e0, const Event& e1, F&& fn) {
  CK(cudaEventRecord(e0.get(), s));
  fn();
  CK(cudaEventRecord(e1.get(), s));
  CK(cudaEventSynchronize(e1.get()));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
  return ms;
}

// ---------------------------------------------------------------------------------------------
// Options

enum Group {
  kLaunch,
  kAdd1k,
  kGraph,
  kBandwidth,
  kTransfer,
  kAlloc,
  kMatmul,
  kArrays,
  kStartup,
  kNumGroups
};
constexpr const char* kGroupNames[kNumGroups] = {
    "launch", "add1k", "graph", "bandwidth", "transfer", "alloc", "matmul", "arrays", "startup"};

constexpr const char* kOptionNames[] = {
    "--ops",         "--reps",         "--launches",  "--bw-sizes",   "--transfer-sizes",
    "--alloc-sizes", "--matmul-sizes", "--sort-keys", "--fft-points", "--reduce-bytes"};

struct Options {
  bool groups[kNumGroups] = {true, true, true, true, true, true, true, true, true};
  int reps = 11;
  int launches = 10000;
  std::vector<size_t> bw_sizes, transfer_sizes, alloc_sizes;
  std::vector<int> matmul_sizes = {1024, 2048, 4096, 8192};
  size_t sort_keys = size_t{1} << 26;
  size_t fft_points = size_t{1} << 24;
  size_t reduce_bytes = size_t{1} << 30;
};

std::vector<size_t> steps_of_4(size_t from, size_t to) {
  std::vector<size_t> v;
  for (size_t b = from; b <= to; b *= 4) v.push_back(b);
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    items.push_back(
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// A positive count with an optional suffix K, M or G (powers of 1024); false when unreadable.
bool parse_size(const std::string& s, bool suffixes, unsigned long long& out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || v == 0) return false;
  const std::string suffix(end);
  int shift = 0;
  if (suffix == "K" && suffixes) {
    shift = 10;
  } else if (suffix == "M" && suffixes) {
    shift = 20;
  } else if (suffix == "G" && suffixes) {
    shift = 30;
  } else if (!suffix.empty()) {
    return false;
  }
  if (v > (1ull << 50) >> shift) return false;  // 1 PiB: no device has that much
  out = v << shift;
  return true;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "culua-baseline suite: %s\n%s", message.c_str(), kSuiteUsage);
  return 2;
}

// -1: go on; else the exit status.
int parse_options(int argc, char** argv, Options& o) {
  o.bw_sizes = steps_of_4(4 << 10, 4ull << 30);
  o.transfer_sizes = steps_of_4(4 << 10, 1ull << 30);
  o.alloc_sizes = steps_of_4(4 << 10, 1ull << 30);
  for (int i = 0; i < argc; ++i) {
    std::string name = argv[i], value;
    if (name == "-h" || name == "--help") {
      std::fputs(kSuiteUsage, stdout);
      return 0;
    }
    const size_t eq = name.find('=');
    const bool inline_value = name.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (std::find(std::begin(kOptionNames), std::end(kOptionNames), name) ==
        std::end(kOptionNames)) {
      return usage_error(name.rfind("--", 0) == 0 ? "unknown option " + name
                                                  : "unexpected argument " + name);
    }
    if (!inline_value) {
      if (i + 1 >= argc) return usage_error(name + " needs a value");
      value = argv[++i];
    }
    auto sizes = [&](std::vector<size_t>& out, size_t multiple) {
      out.clear();
      for (const std::string& item : split(value)) {
        unsigned long long v = 0;
        if (!parse_size(item, true, v)) return false;
        if (v % multiple != 0) return false;
        out.push_back(static_cast<size_t>(v));
      }
      return true;
    };
    auto count = [&](int& out, unsigned long long max) {
      unsigned long long v = 0;
      if (!parse_size(value, false, v) || v > max) return false;
      out = static_cast<int>(v);
      return true;
    };
    if (name == "--ops") {
      bool wanted[kNumGroups] = {};
      for (const std::string& item : split(value)) {
        const auto* it = std::find(std::begin(kGroupNames), std::end(kGroupNames), item);
        if (it == std::end(kGroupNames))
          return usage_error("unknown group '" + item + "' in --ops");
        wanted[it - std::begin(kGroupNames)] = true;
      }
      std::copy(std::begin(wanted), std::end(wanted), o.groups);
    } else if (name == "--reps") {
      if (!count(o.reps, 100000)) return usage_error("--reps needs a count in 1..100000");
    } else if (name == "--launches") {
      if (!count(o.launches, 100000000)) return usage_error("--launches needs a count in 1..1e8");
    } else if (name == "--bw-sizes") {
      if (!sizes(o.bw_sizes, 4)) {
        return usage_error("--bw-sizes needs byte sizes (multiples of 4, suffix K, M or G)");
      }
    } else if (name == "--transfer-sizes") {
      if (!sizes(o.transfer_sizes, 1)) return usage_error("--transfer-sizes needs byte sizes");
    } else if (name == "--alloc-sizes") {
      if (!sizes(o.alloc_sizes, 1)) return usage_error("--alloc-sizes needs byte sizes");
    } else if (name == "--matmul-sizes") {
      o.matmul_sizes.clear();
      for (const std::string& item : split(value)) {
        unsigned long long v = 0;
        if (!parse_size(item, false, v) || v > 65536) {
          return usage_error("--matmul-sizes needs plain sizes N in 1..65536");
        }
        o.matmul_sizes.push_back(static_cast<int>(v));
      }
    } else if (name == "--sort-keys" || name == "--fft-points") {
      unsigned long long v = 0;
      if (!parse_size(value, false, v) || v > (1ull << 31) - 1) {
        return usage_error(name + " needs a count in 1..2^31-1");
      }
      (name == "--sort-keys" ? o.sort_keys : o.fft_points) = static_cast<size_t>(v);
    } else if (name == "--reduce-bytes") {
      unsigned long long v = 0;
      if (!parse_size(value, true, v)) return usage_error("--reduce-bytes needs a byte size");
      o.reduce_bytes = static_cast<size_t>(v);
    } else {
      return usage_error("unknown option " + name);
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// The device and the stream every measurement uses.

struct Context {
  Options opt;
  cudaStream_t s = nullptr;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  unsigned resident_blocks = 0;  // blocks of 256 threads that fill every SM

  // Blocks of 256 threads for `work` items (one per thread) in a grid-stride kernel: enough to
  // fill the device, no more than the items need.
  unsigned blocks(size_t work) const {
    const size_t needed = (work + 255) / 256;
    return static_cast<unsigned>(std::clamp<size_t>(needed, 1, resident_blocks));
  }
};

constexpr int kBlock = 256;

// ---------------------------------------------------------------------------------------------
// Kernels compiled into the binary.

__global__ void empty_static() {}

__global__ void startup_kernel() {}

// Non-zero inputs: 1 + (i mod 97) / 100, in [1, 1.96] (most not representable in bfloat16, so
// that the cast rounds).
__global__ void fill_pattern(float* p, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    p[i] = 1.0f + static_cast<float>(i % 97) * 0.01f;
  }
}

__device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// int32_t: the high 32 bits of the hash (uniform over the range). Others uniform in [-1, 1):
// 2u - 1 with u = k / 2^24 (float; bfloat16 rounds that float to nearest) or
// k / 2^53 (double), k from a hash of the seed and the index. scripts/bench/suite.lua fills culua's
// operands with the same formula (cu.compile), so that both sides multiply identical data: the
// tensor cores' throughput depends on the data through the power drawn.
template <class T>
__global__ void fill_uniform(T* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    const uint64_t x = splitmix64(seed ^ (i * 0xd1b54a32d192ed03ull));
    if constexpr (std::is_same_v<T, double>) {
      p[i] = 2.0 * (static_cast<double>(x >> 11) * 0x1.0p-53) - 1.0;
    } else if constexpr (std::is_same_v<T, int32_t>) {
      p[i] = static_cast<int32_t>(static_cast<uint32_t>(x >> 32));  // the whole range
    } else {
      const float v = 2.0f * (static_cast<float>(x >> 40) * 0x1.0p-24f) - 1.0f;
      if constexpr (std::is_same_v<T, float>) {
        p[i] = v;
      } else {
        p[i] = __float2bfloat16_rn(v);
      }
    }
  }
}

// The bandwidth kernels: float4 loads and stores over the first n / 4 * 4 elements, grid-stride
// (4 iterations unrolled), then the n % 4 remaining elements one by one.
__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
  const size_t n4 = n / 4;
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  const auto* a4 = reinterpret_cast<const float4*>(a);
  const auto* b4 = reinterpret_cast<const float4*>(b);
  auto* c4 = reinterpret_cast<float4*>(c);
#pragma unroll 4
  for (size_t i = t; i < n4; i += stride) {
    const float4 x = a4[i], y = b4[i];
    c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  for (size_t i = n4 * 4 + t; i < n; i += stride) c[i] = a[i] + b[i];
}

__global__ void read_kernel(const float* in, size_t n, float* sink) {
  const size_t n4 = n / 4;
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  float acc = 0;
#pragma unroll 4
  for (size_t i = t; i < n4; i += stride) {
    const float4 v = in4[i];
    acc += v.x + v.y + v.z + v.w;
  }
  for (size_t i = n4 * 4 + t; i < n; i += stride) acc += in[i];
  if (acc == -1.0f) *sink = acc;  // never true for the positive data read; keeps the loads live
}

__global__ void cast_bf16_kernel(const float* in, __nv_bfloat16* out, size_t n) {
  const size_t n4 = n / 4;
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  const auto* in4 = reinterpret_cast<const float4*>(in);
  auto* out4 = reinterpret_cast<uint2*>(out);  // 4 bfloat16 = 8 bytes
#pragma unroll 4
  for (size_t i = t; i < n4; i += stride) {
    const float4 v = in4[i];
    const unsigned x = __bfloat16_as_ushort(__float2bfloat16_rn(v.x));
    const unsigned y = __bfloat16_as_ushort(__float2bfloat16_rn(v.y));
    const unsigned z = __bfloat16_as_ushort(__float2bfloat16_rn(v.z));
    const unsigned w = __bfloat16_as_ushort(__float2bfloat16_rn(v.w));
    out4[i] = make_uint2(x | (y << 16), z | (w << 16));
  }
  for (size_t i = n4 * 4 + t; i < n; i += stride) out[i] = __float2bfloat16_rn(in[i]);
}

// c = a + b on n4 float4s, one per thread.
__global__ void add1k_raw_kernel(const float4* a, const float4* b, float4* c, int n4) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n4) {
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

void fill(const Context& c, float* p, size_t n) {
  fill_pattern<<<c.blocks(n), kBlock, 0, c.s>>>(p, n);
  CK(cudaGetLastError());
}

// ---------------------------------------------------------------------------------------------
// Timing

// Per-operation milliseconds of `reps` batches (events around `batch` back-to-back operations),
// with batch chosen so that a batch lasts about 2 ms (1..2000): estimated from 3 operations after
// 2 warm-ups, then once more from a batch of the estimated size.
struct Batched {
  std::vector<double> per_op_ms;
  int batch = 1;
};

int batch_for(double per_op_ms) {
  if (!(per_op_ms > 0)) return 2000;
  return static_cast<int>(std::clamp(std::round(2.0 / per_op_ms), 1.0, 2000.0));
}

template <class Op>
Batched time_batched(cudaStream_t s, int reps, Op&& op) {
  Event e0, e1;
  auto run = [&](int count) {
    return event_ms(s, e0, e1, [&] {
      for (int i = 0; i < count; ++i) op();
    });
  };
  op();
  op();
  CK(cudaStreamSynchronize(s));
  Batched r;
  r.batch = batch_for(run(3) / 3);
  if (r.batch > 3) r.batch = batch_for(run(r.batch) / r.batch);
  for (int i = 0; i < reps; ++i) r.per_op_ms.push_back(run(r.batch) / r.batch);
  return r;
}

// Figures per operation from milliseconds per operation: `amount` (bytes, flops) / time / scale.
std::vector<double> rates(const std::vector<double>& per_op_ms, double amount, double scale) {
  std::vector<double> v;
  for (double ms : per_op_ms) v.push_back(amount / (ms * 1e-3) / scale);
  return v;
}

// The launch measurements. `issue` enqueues one launch (throwing when the call fails); `check`
// runs after each loop (for launches whose errors only cudaGetLastError reports).
template <class Issue, class Check>
void warm_launches(cudaStream_t s, Issue& issue, Check& check) {
  for (int i = 0; i < 1000; ++i) issue();
  check();
  CK(cudaStreamSynchronize(s));
}

// Microseconds per launch: events around `launches` back-to-back launches.
template <class Issue, class Check>
std::vector<double> launch_us(cudaStream_t s, int reps, int launches, Issue& issue, Check& check) {
  warm_launches(s, issue, check);
  Event e0, e1;
  std::vector<double> us;
  for (int rep = 0; rep < reps; ++rep) {
    const double ms = event_ms(s, e0, e1, [&] {
      for (int i = 0; i < launches; ++i) issue();
    });
    check();
    us.push_back(ms * 1e3 / launches);
  }
  return us;
}

// Microseconds per launch: host time to issue 1000 launches onto an idle stream.
template <class Issue, class Check>
std::vector<double> enqueue_us(cudaStream_t s, int reps, Issue& issue, Check& check) {
  warm_launches(s, issue, check);
  std::vector<double> us;
  for (int rep = 0; rep < reps; ++rep) {
    CK(cudaStreamSynchronize(s));
    const double t0 = now_s();
    for (int i = 0; i < 1000; ++i) issue();
    const double t1 = now_s();
    check();
    us.push_back((t1 - t0) * 1e6 / 1000);
  }
  CK(cudaStreamSynchronize(s));
  return us;
}

// Microseconds per (launch, cudaStreamSynchronize): host time of 1000 of them.
template <class Issue, class Check>
std::vector<double> sync_us(cudaStream_t s, int reps, Issue& issue, Check& check) {
  warm_launches(s, issue, check);
  std::vector<double> us;
  for (int rep = 0; rep < reps; ++rep) {
    const double t0 = now_s();
    for (int i = 0; i < 1000; ++i) {
      issue();
      CK(cudaStreamSynchronize(s));
    }
    const double t1 = now_s();
    check();
    us.push_back((t1 - t0) * 1e6 / 1000);
  }
  return us;
}

// ---------------------------------------------------------------------------------------------
// launch: the empty kernels

// Resolves the driver API, compiles kLaunchSource with NVRTC and loads the module as culua loads
// a cu.compile module: fns[k] is empty<4k>. Throws Failure; `module` is set once loaded (the
// caller unloads it).
void load_empty_kernels(const Context& c, Driver& drv, CUmodule& module, CUfunction (&fns)[3]) {
  const std::string driver_error = load_driver(drv);
  if (!driver_error.empty()) throw Failure(driver_error);
  std::vector<char> cubin;
  const std::string compile_error = compile_empty_kernels(c.cc_major, c.cc_minor, cubin);
  if (!compile_error.empty()) throw Failure(compile_error);
  CUresult r = drv.module_load_data(&module, cubin.data());
  if (r != CUDA_SUCCESS) {
    module = nullptr;
    throw Failure(cu_message(drv, r, "cuModuleLoadData"));
  }
  for (int k = 0; k < 3; ++k) {
    const std::string name = "empty" + std::to_string(4 * k);
    r = drv.module_get_function(&fns[k], module, name.c_str());
    if (r != CUDA_SUCCESS) throw Failure(cu_message(drv, r, "cuModuleGetFunction"));
  }
}

void launch_group(const Context& c) {
  const std::string arch = "sm_" + std::to_string(c.cc_major * 10 + c.cc_minor);
  Driver drv;
  CUmodule module = nullptr;
  CUfunction fns[3] = {};
  std::optional<DeviceBuffer> buffer;  // a, b, d, e: 256 floats
  const std::string setup = attempt([&] {
    load_empty_kernels(c, drv, module, fns);
    buffer.emplace(256 * sizeof(float));
    CK(cudaMemsetAsync(buffer->as(), 0, 256 * sizeof(float), c.s));
    CK(cudaStreamSynchronize(c.s));
  });
  float* a = buffer ? buffer->as<float>() : nullptr;
  float fc = 1.5f;
  int n = 256;
  double f = 2.5;
  long long g = 7;
  void* args[] = {&a, &a, &fc, &n, &a, &a, &f, &g};
  auto nothing = [] {};
  const std::string launches = std::to_string(c.opt.launches);

  for (int k = 0; k < 3; ++k) {
    const int params = 4 * k;
    const std::string p = std::to_string(params);
    const std::string launch_op = "launch_rtc" + p, enqueue_op = "enqueue_rtc" + p;
    if (!setup.empty()) {
      emit_error(launch_op, kNoSize, setup);
      emit_error(enqueue_op, kNoSize, setup);
      continue;
    }
    auto issue = [&, k, params] {
      const CUresult r =
          drv.launch_kernel(fns[k], 1, 1, 1, 1, 1, 1, 0, c.s, params ? args : nullptr, nullptr);
      if (r != CUDA_SUCCESS) throw Failure(cu_message(drv, r, "cuLaunchKernel"));
    };
    const std::string kernel = "empty kernel with " + p + " parameters (NVRTC, " + arch +
                               ") launched with cuLaunchKernel, grid 1, block 1";
    guarded(launch_op, kNoSize, [&] {
      emit_figures(launch_op, kNoSize, "us",
                   launch_us(c.s, c.opt.reps, c.opt.launches, issue, nothing), 0,
                   kernel + ": events around " + launches + " back-to-back launches");
    });
    guarded(enqueue_op, kNoSize, [&] {
      emit_figures(enqueue_op, kNoSize, "us", enqueue_us(c.s, c.opt.reps, issue, nothing), 0,
                   kernel + ": host time to issue 1000 launches onto an idle stream");
    });
  }

  if (!setup.empty()) {
    emit_error("sync_empty", kNoSize, setup);
  } else {
    auto issue = [&] {
      const CUresult r = drv.launch_kernel(fns[0], 1, 1, 1, 1, 1, 1, 0, c.s, nullptr, nullptr);
      if (r != CUDA_SUCCESS) throw Failure(cu_message(drv, r, "cuLaunchKernel"));
    };
    guarded("sync_empty", kNoSize, [&] {
      emit_figures("sync_empty", kNoSize, "us", sync_us(c.s, c.opt.reps, issue, nothing), 0,
                   "host time of 1000 x (cuLaunchKernel of empty0 (NVRTC, " + arch +
                       "), grid 1, block 1; cudaStreamSynchronize)");
    });
  }
  if (module) drv.module_unload(module);
  settle();

  // The same empty kernel compiled into the binary, launched with <<<>>>.
  auto issue = [&] { empty_static<<<1, 1, 0, c.s>>>(); };
  auto check = [] { CK(cudaGetLastError()); };
  const std::string kernel = "empty __global__ compiled into the binary, <<<1, 1, 0, stream>>>";
  guarded("launch_static0", kNoSize, [&] {
    emit_figures("launch_static0", kNoSize, "us",
                 launch_us(c.s, c.opt.reps, c.opt.launches, issue, check), 0,
                 kernel + ": events around " + launches + " back-to-back launches");
  });
  guarded("enqueue_static0", kNoSize, [&] {
    emit_figures("enqueue_static0", kNoSize, "us", enqueue_us(c.s, c.opt.reps, issue, check), 0,
                 kernel + ": host time to issue 1000 launches onto an idle stream");
  });
}

// ---------------------------------------------------------------------------------------------
// add1k: c = a + b on 1024 floats

constexpr int kAdd1kElements = 1024;

culua::detail::StridedView contiguous_f32(void* p, int64_t n) {
  culua::detail::StridedView v;
  v.data = p;
  v.dtype = culua::detail::DType::F32;
  v.ndim = 1;
  v.size = n;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

// culua's kernel, described as culua's cu.add(a, b, {out = c}) describes it
// (src/core/ops/elementwise.cpp, binary()): contiguous 1-d float32 views, compute type float32.
culua::detail::ElementwiseCall culua_add_call(void* a, void* b, void* out, int64_t n) {
  namespace cd = culua::detail;
  cd::ElementwiseCall call;
  call.kind = cd::ElementwiseCall::Kind::Binary;
  call.op = static_cast<uint8_t>(cd::BinaryOp::Add);
  call.compute = cd::DType::F32;
  call.out = contiguous_f32(out, n);
  call.in[0].view = contiguous_f32(a, n);
  call.in[1].view = contiguous_f32(b, n);
  return call;
}

// Launches the call on c.s as culua's CUDA backend does (kernels::cuda::elementwise, the device's
// default memory pool for scratch memory); throws Failure.
class CuluaAdd {
 public:
  CuluaAdd(const Context& c, void* a, void* b, void* out, int64_t n)
      : call_(culua_add_call(a, b, out, n)) {
    cudaMemPool_t pool = nullptr;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaGetLastError();
    launch_ = culua::detail::kernels::cuda::Launch{c.s, c.sm_count, pool};
  }
  void operator()() const {
    const int e = culua::detail::kernels::cuda::elementwise(call_, launch_);
    if (e != 0) ck(static_cast<cudaError_t>(e), "culua::detail::kernels::cuda::elementwise");
  }

 private:
  culua::detail::ElementwiseCall call_;
  culua::detail::kernels::cuda::Launch launch_{};
};

// Copies c back and compares it with a + b.
void verify_add(const Context& c, const float* a, const float* b, const float* out, size_t n,
                const char* what) {
  CK(cudaStreamSynchronize(c.s));
  std::vector<float> ha(n), hb(n), hc(n);
  CK(cudaMemcpy(ha.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hb.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hc.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) {
    if (hc[i] != ha[i] + hb[i]) {
      throw Failure(std::string(what) + " gave a wrong result at element " + std::to_string(i));
    }
  }
}

// The operands of add1k and graph_add1k: two filled arrays of kAdd1kElements floats and an output.
void add1k_operands(const Context& c, std::optional<DeviceBuffer>& a,
                    std::optional<DeviceBuffer>& b, std::optional<DeviceBuffer>& out) {
  a.emplace(kAdd1kElements * sizeof(float));
  b.emplace(kAdd1kElements * sizeof(float));
  out.emplace(kAdd1kElements * sizeof(float));
  fill(c, a->as<float>(), kAdd1kElements);
  fill(c, b->as<float>(), kAdd1kElements);
  CK(cudaStreamSynchronize(c.s));
}

void add1k_group(const Context& c) {
  const char* ops[] = {"launch_add1k",     "enqueue_add1k",     "sync_add1k",
                       "launch_add1k_raw", "enqueue_add1k_raw", "sync_add1k_raw"};
  std::optional<DeviceBuffer> a, b, out;
  const std::string setup = attempt([&] { add1k_operands(c, a, b, out); });
  if (!setup.empty()) {
    for (const char* op : ops) emit_error(op, kNoSize, setup);
    return;
  }
  const std::string launches = std::to_string(c.opt.launches);

  const CuluaAdd add(c, a->as(), b->as(), out->as(), kAdd1kElements);
  auto culua_add = [&] { add(); };
  auto nothing = [] {};
  const std::string culua_how =
      "culua's add kernel (kernels::cuda::elementwise, contiguous float32, out=) called from C++";
  bool verified = false;
  guarded("launch_add1k", kNoSize, [&] {
    CK(cudaMemsetAsync(out->as(), 0, kAdd1kElements * sizeof(float), c.s));
    culua_add();
    verify_add(c, a->as<float>(), b->as<float>(), out->as<float>(), kAdd1kElements,
               "culua's add kernel");
    verified = true;
    emit_figures("launch_add1k", kNoSize, "us",
                 launch_us(c.s, c.opt.reps, c.opt.launches, culua_add, nothing), 0,
                 culua_how + ": events around " + launches + " back-to-back calls");
  });
  guarded("enqueue_add1k", kNoSize, [&] {
    if (!verified) throw Failure("culua's add kernel failed (see launch_add1k)");
    emit_figures("enqueue_add1k", kNoSize, "us", enqueue_us(c.s, c.opt.reps, culua_add, nothing), 0,
                 culua_how + ": host time to issue 1000 calls onto an idle stream");
  });
  guarded("sync_add1k", kNoSize, [&] {
    if (!verified) throw Failure("culua's add kernel failed (see launch_add1k)");
    emit_figures("sync_add1k", kNoSize, "us", sync_us(c.s, c.opt.reps, culua_add, nothing), 0,
                 culua_how + ": host time of 1000 x (the call, cudaStreamSynchronize)");
  });

  // A plain kernel as culua's grid: one float4 per thread, blocks of 256 (1024 floats: 1 block).
  const int n4 = kAdd1kElements / 4;
  const unsigned grid = (n4 + kBlock - 1) / kBlock;
  auto raw_add = [&] {
    add1k_raw_kernel<<<grid, kBlock, 0, c.s>>>(a->as<float4>(), b->as<float4>(), out->as<float4>(),
                                               n4);
  };
  auto check = [] { CK(cudaGetLastError()); };
  const std::string raw_how = "float4 c = a + b kernel compiled into the binary, <<<" +
                              std::to_string(grid) + ", " + std::to_string(kBlock) +
                              ", 0, stream>>> (one float4 per thread)";
  guarded("launch_add1k_raw", kNoSize, [&] {
    CK(cudaMemsetAsync(out->as(), 0, kAdd1kElements * sizeof(float), c.s));
    raw_add();
    check();
    verify_add(c, a->as<float>(), b->as<float>(), out->as<float>(), kAdd1kElements,
               "the raw add kernel");
    emit_figures("launch_add1k_raw", kNoSize, "us",
                 launch_us(c.s, c.opt.reps, c.opt.launches, raw_add, check), 0,
                 raw_how + ": events around " + launches + " back-to-back launches");
  });
  guarded("enqueue_add1k_raw", kNoSize, [&] {
    emit_figures("enqueue_add1k_raw", kNoSize, "us", enqueue_us(c.s, c.opt.reps, raw_add, check), 0,
                 raw_how + ": host time to issue 1000 launches onto an idle stream");
  });
  guarded("sync_add1k_raw", kNoSize, [&] {
    emit_figures("sync_add1k_raw", kNoSize, "us", sync_us(c.s, c.opt.reps, raw_add, check), 0,
                 raw_how + ": host time of 1000 x (the launch, cudaStreamSynchronize)");
  });
}

// ---------------------------------------------------------------------------------------------
// graph: CUDA graphs of kGraphNodes launches, captured and launched as culua does
// (src/cuda/cuda_backend.cpp): cudaStreamBeginCapture in thread-local mode, cudaStreamEndCapture,
// cudaGraphInstantiateWithFlags with flags 0, cudaGraphLaunch.

constexpr int kGraphNodes = 1000;

// An executable graph, its node count and the host times of its capture and instantiation.
struct CapturedGraph {
  cudaGraphExec_t exec = nullptr;
  size_t nodes = 0;
  double capture_ms = 0;
  double instantiate_ms = 0;

  CapturedGraph() = default;
  ~CapturedGraph() {
    if (exec) cudaGraphExecDestroy(exec);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
};

// Ends a capture that an exception interrupted and drops what it recorded: the stream works
// again.
class CaptureGuard {
 public:
  explicit CaptureGuard(cudaStream_t s) : s_(s) {}
  ~CaptureGuard() {
    if (!armed_) return;
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(s_, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
  }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  void disarm() { armed_ = false; }

 private:
  cudaStream_t s_;
  bool armed_ = true;
};

class OwnedGraph {
 public:
  explicit OwnedGraph(cudaGraph_t g) : g_(g) {}
  ~OwnedGraph() {
    if (g_) cudaGraphDestroy(g_);
  }
  OwnedGraph(const OwnedGraph&) = delete;
  OwnedGraph& operator=(const OwnedGraph&) = delete;

 private:
  cudaGraph_t g_;
};

// Captures kGraphNodes calls of issue() on s and instantiates the graph into `out`.
template <class Issue>
void capture_graph(cudaStream_t s, Issue& issue, CapturedGraph& out) {
  const double t0 = now_s();
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CaptureGuard guard(s);
  for (int i = 0; i < kGraphNodes; ++i) issue();
  guard.disarm();
  cudaGraph_t graph = nullptr;
  CK(cudaStreamEndCapture(s, &graph));
  const double t1 = now_s();
  const OwnedGraph owned(graph);  // the executable graph does not need it
  cudaGraphExec_t exec = nullptr;
  CK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  const double t2 = now_s();
  out.exec = exec;
  out.capture_ms = (t1 - t0) * 1e3;
  out.instantiate_ms = (t2 - t1) * 1e3;
  CK(cudaGraphGetNodes(graph, nullptr, &out.nodes));
  if (out.nodes != static_cast<size_t>(kGraphNodes)) {
    throw Failure("the captured graph has " + std::to_string(out.nodes) + " nodes, not " +
                  std::to_string(kGraphNodes));
  }
}

// graph_<kind> (per node of the graph, replayed), graph_capture_<kind> and
// graph_instantiate_<kind> for a graph of kGraphNodes calls of issue(), which does `what`.
// reset() runs before the graph's first launch and verify() after it (it synchronizes).
template <class Issue, class Reset, class Verify>
void graph_ops(const Context& c, const std::string& kind, const std::string& setup, Issue& issue,
               Reset& reset, Verify& verify, const std::string& what) {
  const std::string replay_op = "graph_" + kind;
  const std::string capture_op = "graph_capture_" + kind;
  const std::string instantiate_op = "graph_instantiate_" + kind;
  if (!setup.empty()) {
    for (const std::string& op : {replay_op, capture_op, instantiate_op}) {
      emit_error(op, kNoSize, setup);
    }
    return;
  }
  const int replays = std::max(1, c.opt.launches / kGraphNodes);
  const std::string nodes = std::to_string(kGraphNodes);
  const std::string graph = "a graph of " + nodes + " x " + what +
                            ", captured on the stream (cudaStreamBeginCapture in thread-local "
                            "mode, cudaStreamEndCapture), cudaGraphInstantiateWithFlags(flags 0)";

  guarded(replay_op, kNoSize, [&] {
    for (int i = 0; i < kGraphNodes; ++i) issue();  // eager: modules loaded before the capture
    CK(cudaStreamSynchronize(c.s));
    CapturedGraph g;
    capture_graph(c.s, issue, g);
    reset();
    CK(cudaGraphLaunch(g.exec, c.s));
    verify();
    CK(cudaGraphLaunch(g.exec, c.s));
    CK(cudaStreamSynchronize(c.s));
    Event e0, e1;
    std::vector<double> us;
    for (int rep = 0; rep < c.opt.reps; ++rep) {
      const double ms = event_ms(c.s, e0, e1, [&] {
        for (int i = 0; i < replays; ++i) CK(cudaGraphLaunch(g.exec, c.s));
      });
      us.push_back(ms * 1e3 / (static_cast<double>(replays) * kGraphNodes));
    }
    Object o =
        figures(replay_op, kNoSize, "us", us, replays * kGraphNodes,
                graph + "; events around " + std::to_string(replays) + " x cudaGraphLaunch, / " +
                    std::to_string(replays * kGraphNodes) + " nodes");
    o.integer("nodes", kGraphNodes);
    emit(o);
  });

  std::vector<double> total, instantiate;
  const std::string error = attempt([&] {
    for (int rep = -1; rep < c.opt.reps; ++rep) {  // the first capture warms up
      CK(cudaStreamSynchronize(c.s));
      CapturedGraph g;
      capture_graph(c.s, issue, g);
      if (rep >= 0) {
        total.push_back(g.capture_ms + g.instantiate_ms);
        instantiate.push_back(g.instantiate_ms);
      }
    }
  });
  if (!error.empty()) {
    emit_error(capture_op, kNoSize, error);
    emit_error(instantiate_op, kNoSize, error);
    return;
  }
  Object capture = figures(capture_op, kNoSize, "ms", total, 0,
                           graph +
                               "; host time from cudaStreamBeginCapture to the end of "
                               "cudaGraphInstantiateWithFlags, the stream idle");
  capture.integer("nodes", kGraphNodes);
  emit(capture);
  Object inst = figures(instantiate_op, kNoSize, "ms", instantiate, 0,
                        graph + "; host time of cudaGraphInstantiateWithFlags alone");
  inst.integer("nodes", kGraphNodes);
  emit(inst);
}

void graph_group(const Context& c) {
  {
    Driver drv;
    CUmodule module = nullptr;
    CUfunction fns[3] = {};
    const std::string setup = attempt([&] { load_empty_kernels(c, drv, module, fns); });
    auto issue = [&] {
      const CUresult r = drv.launch_kernel(fns[0], 1, 1, 1, 1, 1, 1, 0, c.s, nullptr, nullptr);
      if (r != CUDA_SUCCESS) throw Failure(cu_message(drv, r, "cuLaunchKernel"));
    };
    auto nothing = [] {};
    auto sync = [&] { CK(cudaStreamSynchronize(c.s)); };
    const std::string arch = "sm_" + std::to_string(c.cc_major * 10 + c.cc_minor);
    graph_ops(c, "empty", setup, issue, nothing, sync,
              "cuLaunchKernel of empty0 (NVRTC, " + arch + "), grid 1, block 1");
    if (module) drv.module_unload(module);
    settle();
  }

  std::optional<DeviceBuffer> a, b, out;
  std::optional<CuluaAdd> add;
  const std::string setup = attempt([&] {
    add1k_operands(c, a, b, out);
    add.emplace(c, a->as(), b->as(), out->as(), kAdd1kElements);
  });
  auto issue = [&] { (*add)(); };
  auto reset = [&] { CK(cudaMemsetAsync(out->as(), 0, kAdd1kElements * sizeof(float), c.s)); };
  auto verify = [&] {
    verify_add(c, a->as<float>(), b->as<float>(), out->as<float>(), kAdd1kElements,
               "the graph of culua's add kernel");
  };
  graph_ops(c, "add1k", setup, issue, reset, verify,
            "culua's add kernel (kernels::cuda::elementwise, contiguous float32, out=) on " +
                std::to_string(kAdd1kElements) + " floats");
}

// ---------------------------------------------------------------------------------------------
// bandwidth: copy, add, sum, sum_cub, cast

// Results are checked against the host at sizes up to this (copying back costs little there).
constexpr size_t kVerifyBytes = 16u << 20;

std::vector<float> to_host(const float* p, size_t n) {
  std::vector<float> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// float -> bfloat16 bits, round to nearest even (no NaN among the inputs).
uint16_t host_bf16_rn(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

template <class N>
cudaError_t cub_sum(void* temp, size_t& temp_bytes, const float* in, float* out, N n,
                    cudaStream_t s) {
  return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, s);
}

void bandwidth_group(const Context& c) {
  const char* ops[] = {"copy", "add", "sum", "sum_cub", "cast"};
  for (const size_t size : c.opt.bw_sizes) {
    const auto sz = static_cast<long long>(size);
    const size_t n = size / sizeof(float);
    const bool verify = size <= kVerifyBytes;
    std::optional<DeviceBuffer> a, b, out;
    const std::string setup = attempt([&] {
      a.emplace(size);
      b.emplace(size);
      out.emplace(size);  // the output of copy and add, and of cast (size / 2 bytes)
      fill(c, a->as<float>(), n);
      fill(c, b->as<float>(), n);
      CK(cudaMemsetAsync(out->as(), 0, size, c.s));
      CK(cudaStreamSynchronize(c.s));
    });
    if (!setup.empty()) {
      for (const char* op : ops) emit_error(op, sz, setup);
      continue;
    }
    const float* pa = a->as<float>();
    const float* pb = b->as<float>();
    float* pc = out->as<float>();
    const unsigned grid = c.blocks(n / 4 ? n / 4 : n);
    const std::string grid_text = ", grid " + std::to_string(grid) + " x " +
                                  std::to_string(kBlock) +
                                  " (blocks filling the SMs, no more than the float4s need)";
    auto emit_bw = [&](const char* op, const Batched& t, double moved, const std::string& how) {
      emit_figures(op, sz, "GB/s", rates(t.per_op_ms, moved, 1e9), t.batch, how);
    };

    guarded("copy", sz, [&] {
      const Batched t = time_batched(c.s, c.opt.reps, [&] {
        CK(cudaMemcpyAsync(pc, pa, size, cudaMemcpyDeviceToDevice, c.s));
      });
      if (verify && to_host(pc, n) != to_host(pa, n)) throw Failure("the copy is wrong");
      emit_bw("copy", t, 2.0 * static_cast<double>(size),
              "cudaMemcpyAsync device to device (2 x size moved)");
    });

    guarded("add", sz, [&] {
      const Batched t = time_batched(c.s, c.opt.reps, [&] {
        add_kernel<<<grid, kBlock, 0, c.s>>>(pa, pb, pc, n);
        CK(cudaGetLastError());
      });
      if (verify) verify_add(c, pa, pb, pc, n, "the add kernel");
      emit_bw("add", t, 3.0 * static_cast<double>(size),
              "float4 a + b kernel, grid-stride" + grid_text + " (3 x size moved)");
    });

    guarded("sum", sz, [&] {
      DeviceBuffer sink(sizeof(float));
      const Batched t = time_batched(c.s, c.opt.reps, [&] {
        read_kernel<<<grid, kBlock, 0, c.s>>>(pa, n, sink.as<float>());
        CK(cudaGetLastError());
      });
      emit_bw(
          "sum", t, static_cast<double>(size),
          "read-only kernel (float4 loads), the native reference for sum, grid-stride" + grid_text);
    });

    guarded("sum_cub", sz, [&] {
      const bool narrow = n <= static_cast<size_t>(INT_MAX);
      auto run = [&](void* temp, size_t& temp_bytes, float* result) {
        return narrow ? cub_sum(temp, temp_bytes, pa, result, static_cast<int>(n), c.s)
                      : cub_sum(temp, temp_bytes, pa, result, static_cast<int64_t>(n), c.s);
      };
      size_t temp_bytes = 0;
      CK(run(nullptr, temp_bytes, nullptr));
      DeviceBuffer temp(temp_bytes);
      DeviceBuffer result(sizeof(float));
      const Batched t = time_batched(c.s, c.opt.reps, [&] {
        size_t bytes = temp_bytes;
        CK(run(temp.as(), bytes, result.as<float>()));
      });
      if (verify) {
        CK(cudaStreamSynchronize(c.s));
        float got = 0;
        CK(cudaMemcpy(&got, result.as(), sizeof(float), cudaMemcpyDeviceToHost));
        double want = 0;
        for (float v : to_host(pa, n)) want += v;
        if (std::fabs(got - want) > 1e-3 * want) {
          throw Failure("cub::DeviceReduce::Sum gave " + number(got) + ", not " + number(want));
        }
      }
      emit_bw("sum_cub", t, static_cast<double>(size),
              "cub::DeviceReduce::Sum into a device scalar (temporary storage allocated once, "
              "outside the timing)");
    });

    guarded("cast", sz, [&] {
      auto* dst = reinterpret_cast<__nv_bfloat16*>(pc);
      const Batched t = time_batched(c.s, c.opt.reps, [&] {
        cast_bf16_kernel<<<grid, kBlock, 0, c.s>>>(pa, dst, n);
        CK(cudaGetLastError());
      });
      if (verify) {
        CK(cudaStreamSynchronize(c.s));
        const std::vector<float> in = to_host(pa, n);
        std::vector<uint16_t> got(n);
        CK(cudaMemcpy(got.data(), dst, n * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) {
          if (got[i] != host_bf16_rn(in[i])) {
            throw Failure("the cast is wrong at element " + std::to_string(i));
          }
        }
      }
      emit_bw("cast", t, 1.5 * static_cast<double>(size),
              "float32 -> bfloat16 kernel (float4 loads, 4 x __float2bfloat16_rn stored as 8 "
              "bytes), grid-stride" +
                  grid_text + " (1.5 x size moved)");
    });
  }
}

// ---------------------------------------------------------------------------------------------
// transfer

void transfer_group(const Context& c) {
  for (const size_t size : c.opt.transfer_sizes) {
    const auto sz = static_cast<long long>(size);
    std::optional<DeviceBuffer> d;
    std::optional<PinnedBuffer> pinned;
    std::vector<unsigned char> pageable;
    const std::string device_error = attempt([&] {
      d.emplace(size);
      CK(cudaMemsetAsync(d->as(), 1, size, c.s));
      CK(cudaStreamSynchronize(c.s));
    });
    std::string pinned_error = device_error, pageable_error = device_error;
    if (device_error.empty()) {
      pinned_error = attempt([&] {
        pinned.emplace(size);
        std::memset(pinned->get(), 1, size);
      });
      pageable_error = attempt([&] { pageable.assign(size, 1); });  // touched
    }

    auto pinned_copy = [&](const char* op, void* dst, const void* src, cudaMemcpyKind kind,
                           const char* direction) {
      if (!pinned_error.empty()) {
        emit_error(op, sz, pinned_error);
        return;
      }
      guarded(op, sz, [&] {
        Event e0, e1;
        for (int i = 0; i < 2; ++i) CK(cudaMemcpyAsync(dst, src, size, kind, c.s));
        CK(cudaStreamSynchronize(c.s));
        std::vector<double> gbps;
        for (int rep = 0; rep < c.opt.reps; ++rep) {
          const double ms =
              event_ms(c.s, e0, e1, [&] { CK(cudaMemcpyAsync(dst, src, size, kind, c.s)); });
          gbps.push_back(static_cast<double>(size) / (ms * 1e6));
        }
        emit_figures(op, sz, "GB/s", gbps, 0,
                     std::string("cudaMemcpyAsync ") + direction +
                         " with page-locked memory (cudaHostAlloc), events around one copy");
      });
    };
    auto pageable_copy = [&](const char* op, void* dst, const void* src, cudaMemcpyKind kind,
                             const char* direction) {
      if (!pageable_error.empty()) {
        emit_error(op, sz, pageable_error);
        return;
      }
      guarded(op, sz, [&] {
        CK(cudaMemcpy(dst, src, size, kind));
        std::vector<double> gbps;
        for (int rep = 0; rep < c.opt.reps; ++rep) {
          const double t0 = now_s();
          CK(cudaMemcpy(dst, src, size, kind));
          gbps.push_back(static_cast<double>(size) / ((now_s() - t0) * 1e9));
        }
        emit_figures(op, sz, "GB/s", gbps, 0,
                     std::string("cudaMemcpy ") + direction +
                         " with pageable memory (std::vector, touched), host clock around one "
                         "copy");
      });
    };
    void* dev = d ? d->as() : nullptr;
    void* pin = pinned ? pinned->get() : nullptr;
    pinned_copy("h2d_pinned", dev, pin, cudaMemcpyHostToDevice, "host to device");
    pinned_copy("d2h_pinned", pin, dev, cudaMemcpyDeviceToHost, "device to host");
    pageable_copy("h2d_pageable", dev, pageable.data(), cudaMemcpyHostToDevice, "host to device");
    pageable_copy("d2h_pageable", pageable.data(), dev, cudaMemcpyDeviceToHost, "device to host");
  }
}

// ---------------------------------------------------------------------------------------------
// alloc

void alloc_group(const Context& c) {
  cudaMemPool_t pool = nullptr;
  const std::string setup = attempt([&] {
    CK(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t threshold = std::numeric_limits<uint64_t>::max();
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  });
  for (const size_t size : c.opt.alloc_sizes) {
    const auto sz = static_cast<long long>(size);
    if (!setup.empty()) {
      emit_error("alloc", sz, setup);
      continue;
    }
    guarded("alloc", sz, [&] {
      void* p = nullptr;
      auto pair = [&] {
        CK(cudaMallocAsync(&p, size, c.s));
        CK(cudaFreeAsync(p, c.s));
      };
      for (int i = 0; i < 100; ++i) pair();  // warms the pool
      std::vector<double> us;
      for (int rep = 0; rep < c.opt.reps; ++rep) {
        CK(cudaStreamSynchronize(c.s));
        const double t0 = now_s();
        for (int i = 0; i < 1000; ++i) pair();
        us.push_back((now_s() - t0) * 1e6 / 1000);
      }
      CK(cudaStreamSynchronize(c.s));
      emit_figures("alloc", sz, "us", us, 0,
                   "host time of 1000 x (cudaMallocAsync, cudaFreeAsync) on the stream, default "
                   "memory pool with release threshold UINT64_MAX, after 100 such pairs");
    });
    if (pool) {
      cudaStreamSynchronize(c.s);
      cudaMemPoolTrimTo(pool, 0);  // gives the memory back to the later groups
      cudaGetLastError();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// matmul

template <class T>
void matmul_one(const Context& c, const Cublas& blas, cublasHandle_t h, const std::string& op,
                int n, cudaDataType type, cublasComputeType_t compute, const std::string& how) {
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  DeviceBuffer a(count * sizeof(T)), b(count * sizeof(T)), out(count * sizeof(T));
  fill_uniform<T><<<c.blocks(count), kBlock, 0, c.s>>>(a.as<T>(), count, 0x243f6a8885a308d3ull);
  fill_uniform<T><<<c.blocks(count), kBlock, 0, c.s>>>(b.as<T>(), count, 0x13198a2e03707344ull);
  CK(cudaGetLastError());
  CK(cudaMemsetAsync(out.as(), 0, count * sizeof(T), c.s));
  // alpha and beta in the compute type's scale type: double for 64F, float otherwise.
  const double alpha64 = 1, beta64 = 0;
  const float alpha32 = 1, beta32 = 0;
  const bool f64 = compute == CUBLAS_COMPUTE_64F;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const Batched t = time_batched(c.s, c.opt.reps, [&] {
    CK_BLAS(blas, gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, alpha, a.as(), type, n, b.as(),
                          type, n, beta, out.as(), type, n, compute, CUBLAS_GEMM_DEFAULT));
  });
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  emit_figures(op, n, "TFLOP/s", rates(t.per_op_ms, flops, 1e12), t.batch, how);
}

void matmul_group(const Context& c) {
  cublasHandle_t h = nullptr;
  const Cublas* blas = nullptr;
  const std::string setup = attempt([&] {
    std::string error;
    blas = load_cublas(&error);
    if (!blas) throw Failure(error);
    CK_BLAS(*blas, create(&h));
    CK_BLAS(*blas, set_stream(h, c.s));
    CK_BLAS(*blas, set_math_mode(h, CUBLAS_DEFAULT_MATH));
  });
  const std::string common =
      "cublasGemmEx, column-major, no transposes, CUBLAS_GEMM_DEFAULT, operands uniform in "
      "[-1, 1) (2 N^3 flops), ";
  for (const int n : c.opt.matmul_sizes) {
    const char* ops[] = {"matmul_f32", "matmul_bf16", "matmul_f64"};
    if (!setup.empty()) {
      for (const char* op : ops) emit_error(op, n, setup);
      continue;
    }
    guarded("matmul_f32", n, [&] {
      matmul_one<float>(c, *blas, h, "matmul_f32", n, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                        common + "CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH (no TF32)");
    });
    guarded("matmul_bf16", n, [&] {
      matmul_one<__nv_bfloat16>(c, *blas, h, "matmul_bf16", n, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
                                common + "CUDA_R_16BF, CUBLAS_COMPUTE_32F (accumulating in f32)");
    });
    guarded("matmul_f64", n, [&] {
      matmul_one<double>(c, *blas, h, "matmul_f64", n, CUDA_R_64F, CUBLAS_COMPUTE_64F,
                         common + "CUDA_R_64F, CUBLAS_COMPUTE_64F");
    });
  }
  if (h) blas->destroy(h);
  settle();
}

// ---------------------------------------------------------------------------------------------
// arrays: CUB's radix sort and cuFFT as a C++ program calls them, on the numbers culua sorts and
// transforms (fill_uniform with the suite's seeds), and the copy bandwidth that bounds cumsum,
// any and std (docs/performance.md, "The arrays group").

constexpr uint64_t kSeedF32 = 0x243f6a8885a308d3ull, kSeedI32 = 0x13198a2e03707344ull;
constexpr uint64_t kSeedRe = 0x452821e638d01377ull, kSeedIm = 0x0be5466cf34e90c6ull;

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A JSON array of exact numbers: the records' `check` (scripts/bench/suite.lua compares it).
std::string check_list(const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + exact(values[i]);
  return s + "]";
}

// The 0-based indices of the five 1-based positions 1, n/4, n/2, 3n/4, n that the suite compares.
std::vector<size_t> check_positions(size_t n) {
  std::vector<size_t> v;
  for (size_t p : {size_t{1}, n / 4, n / 2, 3 * n / 4, n}) v.push_back(std::max<size_t>(p, 1) - 1);
  return v;
}

__global__ void positions_kernel(int64_t* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    out[i] = static_cast<int64_t>(i) + 1;
  }
}

__global__ void interleave_kernel(const float* re, const float* im, float2* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(blockDim.x) * gridDim.x) {
    out[i] = make_float2(re[i], im[i]);
  }
}

template <class T>
std::vector<T> copy_back(const T* p, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// The sorted keys are the input's, in order: non-decreasing, with the same sum (modulo 2^64) and
// the same xor of the bit patterns, both independent of the order (a permutation test that costs
// one pass; a sum in double is not: 2^26 i32 keys exceed its 53 bits and round by order).
template <class T>
void verify_sorted(const std::vector<T>& in, const std::vector<T>& out, const std::string& what) {
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i] < out[i - 1]) throw Failure(what + " is not sorted at element " + std::to_string(i));
  }
  auto digest = [](const std::vector<T>& v) {
    uint64_t sum = 0;
    uint32_t bits = 0;
    for (const T x : v) {
      uint32_t b;
      std::memcpy(&b, &x, 4);
      sum += b;
      bits ^= b * 0x9e3779b9u + (b >> 7);
    }
    return std::make_pair(sum, bits);
  };
  if (digest(in) != digest(out)) throw Failure(what + " is not a permutation of the keys");
}

template <class T>
void sort_rows(const Context& c, const char* dtype, uint64_t seed) {
  const size_t n = c.opt.sort_keys;
  const auto sz = static_cast<long long>(n);
  const std::string sort_op = std::string("sort_") + dtype,
                    argsort_op = "argsort_" + sort_op.substr(5);
  std::optional<DeviceBuffer> keys, out, pos, pos_out, temp;
  size_t temp_bytes = 0;
  const int count = static_cast<int>(n);
  const std::string setup = attempt([&] {
    keys.emplace(n * sizeof(T));
    out.emplace(n * sizeof(T));
    pos.emplace(n * sizeof(int64_t));
    pos_out.emplace(n * sizeof(int64_t));
    fill_uniform<T><<<c.blocks(n), kBlock, 0, c.s>>>(keys->as<T>(), n, seed);
    CK(cudaGetLastError());
    size_t a = 0, b = 0;
    CK(cub::DeviceRadixSort::SortKeys(nullptr, a, keys->as<T>(), out->as<T>(), count, 0,
                                      int{sizeof(T) * 8}, c.s));
    CK(cub::DeviceRadixSort::SortPairs(nullptr, b, keys->as<T>(), out->as<T>(), pos->as<int64_t>(),
                                       pos_out->as<int64_t>(), count, 0, int{sizeof(T) * 8}, c.s));
    temp_bytes = std::max(a, b);
    temp.emplace(temp_bytes);
    CK(cudaStreamSynchronize(c.s));
  });
  if (!setup.empty()) {
    emit_error(sort_op, sz, setup);
    emit_error(argsort_op, sz, setup);
    return;
  }
  const T* k = keys->as<T>();
  T* o = out->as<T>();
  const std::string keys_text =
      std::string(dtype) +
      (std::is_same_v<T, float> ? " uniform in [-1, 1)" : " uniform over the range") +
      " (the suite's fill formula and seed), temporary storage and output allocated once";
  guarded(sort_op, sz, [&] {
    const Batched t = time_batched(c.s, c.opt.reps, [&] {
      size_t bytes = temp_bytes;
      CK(cub::DeviceRadixSort::SortKeys(temp->as(), bytes, k, o, count, 0, int{sizeof(T) * 8},
                                        c.s));
    });
    CK(cudaStreamSynchronize(c.s));
    const std::vector<T> in = copy_back(k, n), sorted = copy_back<T>(o, n);
    verify_sorted(in, sorted, "cub::DeviceRadixSort::SortKeys's output");
    std::vector<double> check;
    for (size_t i : check_positions(n)) check.push_back(static_cast<double>(sorted[i]));
    Object r = figures(sort_op, sz, "ms", t.per_op_ms, t.batch,
                       std::string("cub::DeviceRadixSort::SortKeys<") +
                           (std::is_same_v<T, float> ? "float" : "int32_t") + ">, " + keys_text);
    r.add("check", check_list(check));
    emit(r);
  });
  guarded(argsort_op, sz, [&] {
    int64_t* p = pos->as<int64_t>();
    int64_t* po = pos_out->as<int64_t>();
    const Batched t = time_batched(c.s, c.opt.reps, [&] {
      positions_kernel<<<c.blocks(n), kBlock, 0, c.s>>>(p, n);
      CK(cudaGetLastError());
      size_t bytes = temp_bytes;
      CK(cub::DeviceRadixSort::SortPairs(temp->as(), bytes, k, o, p, po, count, 0,
                                         int{sizeof(T) * 8}, c.s));
    });
    CK(cudaStreamSynchronize(c.s));
    const std::vector<T> in = copy_back(k, n);
    const std::vector<int64_t> idx = copy_back<int64_t>(po, n);
    std::vector<bool> seen(n);
    std::vector<T> gathered(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t j = idx[i] - 1;
      if (j < 0 || static_cast<size_t>(j) >= n || seen[j]) {
        throw Failure("the positions are not a permutation of 1..n");
      }
      seen[j] = true;
      gathered[i] = in[j];
    }
    verify_sorted(in, gathered, "the keys in SortPairs's order");
    emit_figures(argsort_op, sz, "ms", t.per_op_ms, t.batch,
                 "1-based positions (a grid-stride kernel) then cub::DeviceRadixSort::SortPairs<" +
                     std::string(std::is_same_v<T, float> ? "float" : "int32_t") + ", int64_t>, " +
                     keys_text);
  });
}

// X[k] of x (interleaved re, im) by the definition, in double.
std::pair<double, double> dft_at(const std::vector<float>& x, size_t k) {
  const size_t n = x.size() / 2;
  double re = 0, im = 0;
  for (size_t j = 0; j < n; ++j) {
    const double angle = -2.0 * M_PI * static_cast<double>((j * k) % n) / static_cast<double>(n);
    const double c = std::cos(angle), s = std::sin(angle);
    re += x[2 * j] * c - x[2 * j + 1] * s;
    im += x[2 * j] * s + x[2 * j + 1] * c;
  }
  return {re, im};
}

void fft_row(const Context& c) {
  const size_t n = c.opt.fft_points;
  const auto sz = static_cast<long long>(n);
  guarded("fft_c64", sz, [&] {
    std::string error;
    const Cufft* fft = load_cufft(&error);
    if (!fft) throw Failure(error);
    DeviceBuffer re(n * 4), im(n * 4), in(n * 8), out(n * 8);
    fill_uniform<float><<<c.blocks(n), kBlock, 0, c.s>>>(re.as<float>(), n, kSeedRe);
    fill_uniform<float><<<c.blocks(n), kBlock, 0, c.s>>>(im.as<float>(), n, kSeedIm);
    interleave_kernel<<<c.blocks(n), kBlock, 0, c.s>>>(re.as<float>(), im.as<float>(),
                                                       in.as<float2>(), n);
    CK(cudaGetLastError());
    cufftHandle plan = 0;
    auto ck_fft = [](cufftResult r, const char* what) {
      if (r != CUFFT_SUCCESS)
        throw Failure(std::string(what) + ": cuFFT status " + std::to_string(r));
    };
    ck_fft(fft->create(&plan), "cufftCreate");
    struct Destroy {
      const Cufft* api;
      cufftHandle h;
      ~Destroy() { api->destroy(h); }
    } destroy{fft, plan};
    long long len = static_cast<long long>(n);
    size_t work = 0;
    ck_fft(fft->make_plan_many_64(plan, 1, &len, nullptr, 1, 0, nullptr, 1, 0, CUFFT_C2C, 1, &work),
           "cufftMakePlanMany64");
    ck_fft(fft->set_stream(plan, c.s), "cufftSetStream");
    auto* x = in.as<cufftComplex>();
    auto* y = out.as<cufftComplex>();
    const Batched t = time_batched(
        c.s, c.opt.reps, [&] { ck_fft(fft->exec_c2c(plan, x, y, CUFFT_FORWARD), "cufftExecC2C"); });
    CK(cudaStreamSynchronize(c.s));
    const std::vector<float> xs = copy_back(in.as<float>(), 2 * n);
    const std::vector<float> ys = copy_back(out.as<float>(), 2 * n);
    // suite.lua's fft_tolerance: the rounding grows as log2(n) times the spectrum's scale, sqrt(n).
    const double tol =
        1e-5 * std::sqrt(static_cast<double>(n)) * std::log2(static_cast<double>(n)) + 1e-3;
    std::vector<double> check;
    for (size_t k : {size_t{0}, size_t{1}, n / 2, n - 1}) {
      const auto [wr, wi] = dft_at(xs, k);
      if (std::fabs(ys[2 * k] - wr) + std::fabs(ys[2 * k + 1] - wi) > tol) {
        throw Failure("cufftExecC2C gave X[" + std::to_string(k) + "] = " + number(ys[2 * k]) +
                      ", " + number(ys[2 * k + 1]) + ", not " + number(wr) + ", " + number(wi));
      }
      check.push_back(ys[2 * k]);
      check.push_back(ys[2 * k + 1]);
    }
    int version = 0;
    fft->get_version(&version);
    Object r = figures("fft_c64", sz, "ms", t.per_op_ms, t.batch,
                       "cufftExecC2C forward, out of place, a 1-D plan of n points "
                       "(cufftMakePlanMany64, made once, automatic work area), cuFFT " +
                           std::to_string(version) +
                           ", real and imaginary parts uniform in [-1, 1) (the suite's formula)");
    r.add("check", check_list(check));
    emit(r);
  });
}

void arrays_group(const Context& c) {
  sort_rows<float>(c, "f32", kSeedF32);
  sort_rows<int32_t>(c, "i32", kSeedI32);
  fft_row(c);
  const size_t size = c.opt.reduce_bytes;
  guarded("arrays_copy", static_cast<long long>(size), [&] {
    DeviceBuffer a(size), b(size);
    fill(c, a.as<float>(), size / 4);
    const Batched t = time_batched(c.s, c.opt.reps, [&] {
      CK(cudaMemcpyAsync(b.as(), a.as(), size, cudaMemcpyDeviceToDevice, c.s));
    });
    CK(cudaStreamSynchronize(c.s));
    if (copy_back(b.as<unsigned char>(), size) != copy_back(a.as<unsigned char>(), size)) {
      throw Failure("the copy is wrong");
    }
    emit_figures("arrays_copy", static_cast<long long>(size), "GB/s",
                 rates(t.per_op_ms, 2.0 * static_cast<double>(size), 1e9), t.batch,
                 "cudaMemcpyAsync device to device (2 x size moved): the bound of the arrays "
                 "group's cumsum, any and std");
  });
  // CUB's own scan at the same size: what cu.cumsum can reach through CUB.
  guarded("cumsum", static_cast<long long>(size), [&] {
    const size_t n = size / 4;
    if (n > static_cast<size_t>(INT_MAX)) throw Failure("more items than an int counts");
    const int count = static_cast<int>(n);
    DeviceBuffer a(size), b(size);
    fill(c, a.as<float>(), n);
    size_t bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, a.as<float>(), b.as<float>(), count, c.s));
    DeviceBuffer temp(std::max<size_t>(bytes, 1));
    const Batched t = time_batched(c.s, c.opt.reps, [&] {
      size_t b_ = bytes;
      CK(cub::DeviceScan::InclusiveSum(temp.as(), b_, a.as<float>(), b.as<float>(), count, c.s));
    });
    CK(cudaStreamSynchronize(c.s));
    const std::vector<float> in = copy_back(a.as<float>(), n), out = copy_back(b.as<float>(), n);
    double sum = 0, magnitude = 0;
    for (float x : in) {
      sum += x;
      magnitude += std::fabs(x);
    }
    if (!(std::fabs(out[n - 1] - sum) <= 1e-3 * magnitude + 1e-6)) {
      throw Failure("cub::DeviceScan::InclusiveSum's last element " + number(out[n - 1]) +
                    " is not the sum " + number(sum));
    }
    emit_figures("cumsum", static_cast<long long>(size), "GB/s",
                 rates(t.per_op_ms, 2.0 * static_cast<double>(size), 1e9), t.batch,
                 "cub::DeviceScan::InclusiveSum<float> with an int count (2 x size moved), "
                 "temporary storage allocated once");
  });
}

// ---------------------------------------------------------------------------------------------
// info

std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void emit_info(const Context& c) {
  Object info;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
    info.str("device", p.name);
    info.integer("memory_bytes", static_cast<long long>(p.totalGlobalMem));
    info.integer("l2_bytes", p.l2CacheSize);
    info.integer("max_threads_per_sm", p.maxThreadsPerMultiProcessor);
  }
  info.str("compute_capability", std::to_string(c.cc_major) + "." + std::to_string(c.cc_minor));
  info.integer("sm_count", c.sm_count);
  auto attribute = [&](const char* key, cudaDeviceAttr a) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, 0) == cudaSuccess) info.integer(key, v);
  };
  attribute("clock_khz", cudaDevAttrClockRate);
  attribute("memory_clock_khz", cudaDevAttrMemoryClockRate);
  attribute("memory_bus_bits", cudaDevAttrGlobalMemoryBusWidth);
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) info.str("driver", version_text(v));
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) info.str("runtime", version_text(v));
  int major = 0, minor = 0, patch = 0;
  std::string error;
  const Cublas* blas = load_cublas(&error);
  if (!blas) {
    info.str("cublas", "not loaded: " + error);
  } else if (blas->get_property(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
             blas->get_property(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
             blas->get_property(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS) {
    info.str("cublas",
             std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  }
  const Nvrtc* rtc = load_nvrtc(&error);
  if (!rtc) {
    info.str("nvrtc", "not loaded: " + error);
  } else if (rtc->version(&major, &minor) == NVRTC_SUCCESS) {
    info.str("nvrtc", std::to_string(major) + "." + std::to_string(minor));
  }
  info.str("cub", std::to_string(CUB_VERSION / 100000) + "." +
                      std::to_string(CUB_VERSION / 100 % 1000) + "." +
                      std::to_string(CUB_VERSION % 100));
  const char* loading = std::getenv("CUDA_MODULE_LOADING");
  info.str("module_loading", loading ? loading : "default (lazy)");
  info.integer("reps", c.opt.reps);
  info.integer("launches", c.opt.launches);
  cudaGetLastError();
  Object o;
  o.str("impl", "native").add("info", info.json());
  emit(o);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

int suite(int argc, char** argv) {
  Context c;
  const int status = parse_options(argc, argv, c.opt);
  if (status >= 0) return status;

  // The context: the process's first CUDA call.
  const double t0 = now_s();
  const cudaError_t created = cudaFree(nullptr);
  const double context_ms = (now_s() - t0) * 1e3;
  if (created != cudaSuccess) {
    std::fprintf(stderr, "culua-baseline: no usable CUDA device: cudaFree(0): %s: %s\n",
                 cudaGetErrorName(created), cudaGetErrorString(created));
    return 1;
  }
  const std::string device_error = attempt([&] {
    CK(cudaSetDevice(0));
    CK(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
  });
  if (!device_error.empty()) {
    std::fprintf(stderr, "culua-baseline: %s\n", device_error.c_str());
    return 1;
  }
  // The first kernel, before anything else runs on the device.
  double first_kernel_ms = 0;
  std::string first_kernel_error;
  if (c.opt.groups[kStartup]) {
    first_kernel_error = attempt([&] {
      const double k0 = now_s();
      startup_kernel<<<1, 1, 0, c.s>>>();
      CK(cudaGetLastError());
      CK(cudaStreamSynchronize(c.s));
      first_kernel_ms = (now_s() - k0) * 1e3;
    });
  }

  int max_threads = 0;
  const std::string attributes_error = attempt([&] {
    CK(cudaDeviceGetAttribute(&c.sm_count, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&c.cc_major, cudaDevAttrComputeCapabilityMajor, 0));
    CK(cudaDeviceGetAttribute(&c.cc_minor, cudaDevAttrComputeCapabilityMinor, 0));
    CK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
  });
  if (!attributes_error.empty()) {
    std::fprintf(stderr, "culua-baseline: %s\n", attributes_error.c_str());
    return 1;
  }
  c.resident_blocks = static_cast<unsigned>(std::max(1, c.sm_count * (max_threads / kBlock)));

  emit_info(c);
  if (c.opt.groups[kStartup]) {
    emit_figures("context", kNoSize, "ms", {context_ms}, 0,
                 "cudaFree(0) as the process's first CUDA call, host clock");
    if (first_kernel_error.empty()) {
      emit_figures("first_kernel", kNoSize, "ms", {first_kernel_ms}, 0,
                   "first launch of an empty kernel compiled into the binary, <<<1, 1, 0, "
                   "stream>>> + cudaStreamSynchronize, after the context (module loading "
                   "included), host clock");
    } else {
      emit_error("first_kernel", kNoSize, first_kernel_error);
    }
  }
  if (c.opt.groups[kLaunch]) launch_group(c);
  if (c.opt.groups[kAdd1k]) add1k_group(c);
  if (c.opt.groups[kGraph]) graph_group(c);
  if (c.opt.groups[kBandwidth]) bandwidth_group(c);
  if (c.opt.groups[kTransfer]) transfer_group(c);
  if (c.opt.groups[kAlloc]) alloc_group(c);
  if (c.opt.groups[kMatmul]) matmul_group(c);
  if (c.opt.groups[kArrays]) arrays_group(c);
  settle();
  cudaStreamDestroy(c.s);
  return 0;
}

int first_kernel() {
  cudaError_t e = cudaFree(nullptr);
  const char* what = "cudaFree(0)";
  if (e == cudaSuccess) {
    startup_kernel<<<1, 1>>>();
    e = cudaGetLastError();
    what = "the kernel launch";
  }
  if (e == cudaSuccess) {
    e = cudaDeviceSynchronize();
    what = "cudaDeviceSynchronize";
  }
  if (e != cudaSuccess) {
    std::fprintf(stderr, "culua-baseline: %s: %s: %s\n", what, cudaGetErrorName(e),
                 cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw CudaFailure(std::string(what) + ": " + cudaGetErrorName(e) + ": " +
                      cudaGetErrorString(e));
  }
}

}  // namespace culua_baseline
