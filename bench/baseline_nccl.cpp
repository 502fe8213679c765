// The native NCCL loop (culua-baseline nccl), measured as nccl-tests measures (src/common.cu):
// for each collective and size, warm-up iterations, then `iters` iterations of one NCCL group
// (one call per GPU) between events recorded on every GPU's stream; the time of one iteration is
// the longest GPU's elapsed time over iters. algbw = bytes / time; busbw = algbw * factor with
// nccl-tests' factors: allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n (0 on one GPU,
// so algbw is reported too). `bytes` is nccl-tests' size: the whole buffer (allgather: its
// output, reducescatter: its input, allreduce: either), n times each rank's part.
//
// libnccl.so.2 is loaded with dlopen (as culua loads it, src/dist/nccl_api.cpp): the program
// starts, and the other commands run, on a machine without NCCL. NCCL_NVLS_ENABLE=0 unless set.
#include "baseline_nccl.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace culua_baseline {

namespace {

struct Nccl {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
};

template <class F>
bool resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) std::fprintf(stderr, "culua-baseline: libnccl.so.2 has no %s\n", name);
  return out != nullptr;
}

bool load(Nccl& api) {
  std::vector<std::string> names;
  if (const char* env = std::getenv("CULUA_NCCL_LIBRARY"); env && *env) {
    names.push_back(env);
  } else {
    names = {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
             "/usr/local/cuda/lib/libnccl.so.2"};
  }
  void* lib = nullptr;
  for (const std::string& n : names) {
    if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!lib) {
    std::fprintf(stderr, "culua-baseline: libnccl.so.2 (NCCL) not found\n");
    return false;
  }
  return resolve(lib, "ncclGetVersion", api.get_version) &&
         resolve(lib, "ncclCommInitAll", api.comm_init_all) &&
         resolve(lib, "ncclCommDestroy", api.comm_destroy) &&
         resolve(lib, "ncclGetErrorString", api.error_string) &&
         resolve(lib, "ncclGroupStart", api.group_start) &&
         resolve(lib, "ncclGroupEnd", api.group_end) &&
         resolve(lib, "ncclAllReduce", api.all_reduce) &&
         resolve(lib, "ncclAllGather", api.all_gather) &&
         resolve(lib, "ncclReduceScatter", api.reduce_scatter);
}

struct Failure {};

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "culua-baseline: %s: %s\n", what, cudaGetErrorString(e));
  throw Failure{};
}

size_t parse_size(const char* s) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  double mul = 1;
  if (end && *end) {
    switch (*end) {
      case 'K':
      case 'k':
        mul = 1024.0;
        break;
      case 'M':
      case 'm':
        mul = 1024.0 * 1024;
        break;
      case 'G':
      case 'g':
        mul = 1024.0 * 1024 * 1024;
        break;
      default:
        return 0;
    }
  }
  return v > 0 ? static_cast<size_t>(v * mul) : 0;
}

double bus_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  return static_cast<double>(n - 1) / n;
}

constexpr const char* kNcclUsage =
    "usage: culua-baseline nccl [--ops allreduce,allgather,reducescatter] [--min BYTES]\n"
    "                           [--max BYTES] [--iters N] [--warmup N]\n";

}  // namespace

int nccl(int argc, char** argv) {
  std::vector<std::string> ops{"allreduce", "allgather", "reducescatter"};
  size_t min_bytes = 8, max_bytes = size_t{4} << 30;
  int iters = 20, warmup = 5;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s", kNcclUsage);
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--ops") {
      ops.clear();
      std::string list = v;
      for (size_t p = 0; p <= list.size();) {
        const size_t q = std::min(list.find(',', p), list.size());
        const std::string op = list.substr(p, q - p);
        if (op != "allreduce" && op != "allgather" && op != "reducescatter") {
          std::fprintf(stderr, "culua-baseline: unknown collective '%s'\n%s", op.c_str(),
                       kNcclUsage);
          return 2;
        }
        ops.push_back(op);
        p = q + 1;
      }
    } else if (a == "--min") {
      min_bytes = parse_size(v);
    } else if (a == "--max") {
      max_bytes = parse_size(v);
    } else if (a == "--iters") {
      iters = std::atoi(v);
    } else if (a == "--warmup") {
      warmup = std::atoi(v);
    } else {
      std::fprintf(stderr, "%s", kNcclUsage);
      return 2;
    }
  }
  if (min_bytes < 1 || max_bytes < min_bytes || iters < 1 || warmup < 0) {
    std::fprintf(stderr, "culua-baseline: bad sizes or counts\n%s", kNcclUsage);
    return 2;
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  Nccl api;
  if (!load(api)) return 3;
  try {
    int n = 0;
    check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    std::vector<int> devs(static_cast<size_t>(n));
    for (int d = 0; d < n; ++d) devs[static_cast<size_t>(d)] = d;
    std::vector<ncclComm_t> comms(static_cast<size_t>(n));
    ncclResult_t r = api.comm_init_all(comms.data(), n, devs.data());
    if (r != ncclSuccess) {
      std::fprintf(stderr, "culua-baseline: ncclCommInitAll: %s\n", api.error_string(r));
      return 1;
    }
    int version = 0;
    api.get_version(&version);
    std::vector<cudaStream_t> streams(static_cast<size_t>(n));
    std::vector<cudaEvent_t> start(static_cast<size_t>(n)), stop(static_cast<size_t>(n));
    for (int d = 0; d < n; ++d) {
      const auto k = static_cast<size_t>(d);
      check(cudaSetDevice(d), "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&streams[k], cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaEventCreate(&start[k]), "cudaEventCreate");
      check(cudaEventCreate(&stop[k]), "cudaEventCreate");
    }
    const size_t unit = sizeof(float) * static_cast<size_t>(n);  // every rank's part whole floats
    for (const std::string& op : ops) {
      size_t last_total = 0;
      for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        const size_t total = std::max(unit, bytes / unit * unit);
        if (total == last_total) continue;  // sizes below one float per GPU
        last_total = total;
        const size_t part = total / static_cast<size_t>(n);
        const size_t in_bytes = op == "allgather" ? part : total;
        const size_t out_bytes = op == "reducescatter" ? part : total;
        std::vector<void*> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
        bool fits = true;
        for (int d = 0; d < n && fits; ++d) {
          const auto k = static_cast<size_t>(d);
          check(cudaSetDevice(d), "cudaSetDevice");
          size_t free_bytes = 0, total_bytes = 0;
          check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
          if (in_bytes + out_bytes + (size_t{1} << 30) > free_bytes) {
            fits = false;
            break;
          }
          check(cudaMalloc(&in[k], in_bytes), "cudaMalloc");
          check(cudaMalloc(&out[k], out_bytes), "cudaMalloc");
          check(cudaMemset(in[k], 0, in_bytes), "cudaMemset");
        }
        if (!fits) {
          for (int d = 0; d < n; ++d) {
            cudaSetDevice(d);
            cudaFree(in[static_cast<size_t>(d)]);
            cudaFree(out[static_cast<size_t>(d)]);
          }
          std::fprintf(stderr, "culua-baseline: %zu bytes do not fit; larger sizes skipped\n",
                       bytes);
          break;
        }
        auto round = [&] {
          api.group_start();
          for (int d = 0; d < n; ++d) {
            const auto k = static_cast<size_t>(d);
            ncclResult_t e = ncclSuccess;
            if (op == "allreduce") {
              e = api.all_reduce(in[k], out[k], total / sizeof(float), ncclFloat32, ncclSum,
                                 comms[k], streams[k]);
            } else if (op == "allgather") {
              e = api.all_gather(in[k], out[k], part / sizeof(float), ncclFloat32, comms[k],
                                 streams[k]);
            } else {
              e = api.reduce_scatter(in[k], out[k], part / sizeof(float), ncclFloat32, ncclSum,
                                     comms[k], streams[k]);
            }
            if (e != ncclSuccess) {
              std::fprintf(stderr, "culua-baseline: %s: %s\n", op.c_str(), api.error_string(e));
              throw Failure{};
            }
          }
          const ncclResult_t e = api.group_end();
          if (e != ncclSuccess) {
            std::fprintf(stderr, "culua-baseline: ncclGroupEnd: %s\n", api.error_string(e));
            throw Failure{};
          }
        };
        for (int i = 0; i < warmup; ++i) round();
        const int reps = total >= (size_t{256} << 20) ? std::max(1, iters / 4) : iters;
        for (int d = 0; d < n; ++d) {
          check(cudaSetDevice(d), "cudaSetDevice");
          check(cudaEventRecord(start[static_cast<size_t>(d)], streams[static_cast<size_t>(d)]),
                "cudaEventRecord");
        }
        for (int i = 0; i < reps; ++i) round();
        double ms = 0;
        for (int d = 0; d < n; ++d) {
          const auto k = static_cast<size_t>(d);
          check(cudaSetDevice(d), "cudaSetDevice");
          check(cudaEventRecord(stop[k], streams[k]), "cudaEventRecord");
        }
        for (int d = 0; d < n; ++d) {
          const auto k = static_cast<size_t>(d);
          check(cudaEventSynchronize(stop[k]), "cudaEventSynchronize");
          float e = 0;
          check(cudaEventElapsedTime(&e, start[k], stop[k]), "cudaEventElapsedTime");
          ms = std::max(ms, static_cast<double>(e));
        }
        const double seconds = ms / 1e3 / reps;
        const double algbw = static_cast<double>(total) / seconds / 1e9;
        std::printf(
            "{\"op\":\"%s\",\"bytes\":%zu,\"gpus\":%d,\"iters\":%d,\"time_us\":%.3f,"
            "\"algbw_GBps\":%.4f,\"busbw_GBps\":%.4f,\"nccl\":%d}\n",
            op.c_str(), total, n, reps, seconds * 1e6, algbw, algbw * bus_factor(op, n), version);
        std::fflush(stdout);
        for (int d = 0; d < n; ++d) {
          const auto k = static_cast<size_t>(d);
          check(cudaSetDevice(d), "cudaSetDevice");
          check(cudaFree(in[k]), "cudaFree");
          check(cudaFree(out[k]), "cudaFree");
        }
      }
    }
    for (auto c : comms) api.comm_destroy(c);
  } catch (const Failure&) {
    return 1;
  }
  return 0;
}

}  // namespace culua_baseline
