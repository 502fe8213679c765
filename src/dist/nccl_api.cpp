#include "dist/nccl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/base/error.hpp"

namespace culua::detail::dist {

namespace {

#ifndef CULUA_CUDA_LIBRARY_DIR
#define CULUA_CUDA_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

// After the default search: the toolkit culua was built with (its library folder and the sibling
// lib/, where some toolkits keep NCCL), then /usr/local/cuda's.
constexpr const char* kToolkitFolders[] = {CULUA_CUDA_LIBRARY_DIR, CULUA_CUDA_LIBRARY_DIR "/../lib",
                                           "/usr/local/cuda/lib64", "/usr/local/cuda/lib"};

template <class F>
void resolve(void* lib, const char* symbol, F& out) {
  void* p = dlsym(lib, symbol);
  if (!p) fail(ErrorKind::Unsupported, "NCCL has no symbol {}: {}", symbol, dlerror());
  out = reinterpret_cast<F>(p);
}

}  // namespace

std::vector<std::string> nccl_candidates() {
  if (const char* env = std::getenv("CULUA_NCCL_LIBRARY"); env && *env) return {env};
  std::vector<std::string> names{"libnccl.so.2"};
  for (const char* folder : kToolkitFolders) names.push_back(std::string(folder) + "/libnccl.so.2");
  return names;
}

NcclApi load_nccl(const std::vector<std::string>& candidates) {
  void* lib = nullptr;
  std::string tried, loaded;
  for (const std::string& name : candidates) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      loaded = name;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (!lib) {
    fail(ErrorKind::Unsupported,
         "cu.nccl needs libnccl.so.2 (NCCL): not found in {} (set CULUA_NCCL_LIBRARY to its file)",
         tried);
  }
  NcclApi api{};
  resolve(lib, "ncclGetVersion", api.get_version);
  resolve(lib, "ncclGetUniqueId", api.get_unique_id);
  resolve(lib, "ncclCommInitRankConfig", api.comm_init_rank_config);
  resolve(lib, "ncclCommInitAll", api.comm_init_all);
  resolve(lib, "ncclCommDestroy", api.comm_destroy);
  resolve(lib, "ncclCommAbort", api.comm_abort);
  resolve(lib, "ncclCommGetAsyncError", api.comm_get_async_error);
  resolve(lib, "ncclGetErrorString", api.get_error_string);
  resolve(lib, "ncclGetLastError", api.get_last_error);
  resolve(lib, "ncclGroupStart", api.group_start);
  resolve(lib, "ncclGroupEnd", api.group_end);
  resolve(lib, "ncclAllReduce", api.all_reduce);
  resolve(lib, "ncclReduce", api.reduce);
  resolve(lib, "ncclBroadcast", api.broadcast);
  resolve(lib, "ncclAllGather", api.all_gather);
  resolve(lib, "ncclReduceScatter", api.reduce_scatter);
  resolve(lib, "ncclSend", api.send);
  resolve(lib, "ncclRecv", api.recv);
  api.path = loaded;
  return api;  // the library stays loaded for the life of the process
}

const NcclApi& nccl_api() {
  static std::mutex m;
  static NcclApi api{};
  static bool loaded = false;
  std::lock_guard lock(m);
  if (!loaded) {
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    api = load_nccl(nccl_candidates());
    loaded = true;
  }
  return api;
}

}  // namespace culua::detail::dist
