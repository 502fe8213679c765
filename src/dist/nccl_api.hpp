// NCCL loaded on first use (dlopen), as cuBLAS is (cuda/cublas_api.hpp): most scripts never use a
// collective, and a machine without NCCL still runs everything else. <nccl.h> gives the types
// only; every function is resolved with dlsym.
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

namespace culua::detail::dist {

struct NcclApi {
  decltype(&ncclGetVersion) get_version;
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRankConfig) comm_init_rank_config;
  decltype(&ncclCommInitAll) comm_init_all;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclCommAbort) comm_abort;
  decltype(&ncclCommGetAsyncError) comm_get_async_error;
  decltype(&ncclGetErrorString) get_error_string;
  decltype(&ncclGetLastError) get_last_error;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclReduce) reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduceScatter) reduce_scatter;
  decltype(&ncclSend) send;
  decltype(&ncclRecv) recv;
  std::string path;  // the file that was loaded
};

// The files tried, in order: $CULUA_NCCL_LIBRARY alone when set; otherwise libnccl.so.2 by the
// default search (the engine's run path, LD_LIBRARY_PATH), then the lib64 and lib folders of
// $CUDA_HOME, $CUDA_PATH, the CUDA toolkit culua was built with and /usr/local/cuda
// (toolkit_library_candidates).
std::vector<std::string> nccl_candidates();

// The library's entry points; loads it on the first call and, before that, sets
// NCCL_NVLS_ENABLE=0 unless the environment sets it (NVLink multicast stays off). Throws
// Error(Unsupported) "cu.nccl needs NCCL (libnccl.so.2): not found (tried ...) (set
// CULUA_NCCL_LIBRARY to its file)" when it cannot be loaded. A failed load is retried at the next
// call (the environment may have changed).
const NcclApi& nccl_api();

// Loads the library from `candidates` (no caching): what nccl_api() does, for tests.
NcclApi load_nccl(const std::vector<std::string>& candidates);

}  // namespace culua::detail::dist
