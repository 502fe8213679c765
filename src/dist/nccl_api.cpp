// NCCL's entry points, resolved from libnccl.so.2 on first use.
#include "dist/nccl_api.hpp"

#include <cstdlib>

#include "core/base/shared_library.hpp"

namespace culua::detail::dist {

std::vector<std::string> nccl_candidates() {
  return toolkit_library_candidates("libnccl.so.2", "CULUA_NCCL_LIBRARY");
}

NcclApi load_nccl(const std::vector<std::string>& candidates) {
  const SharedLibrary lib = SharedLibrary::open("NCCL (libnccl.so.2)", candidates, "cu.nccl needs",
                                                "set CULUA_NCCL_LIBRARY to its file");
  NcclApi api{};
  lib.resolve("ncclGetVersion", api.get_version);
  lib.resolve("ncclGetUniqueId", api.get_unique_id);
  lib.resolve("ncclCommInitRankConfig", api.comm_init_rank_config);
  lib.resolve("ncclCommInitAll", api.comm_init_all);
  lib.resolve("ncclCommDestroy", api.comm_destroy);
  lib.resolve("ncclCommAbort", api.comm_abort);
  lib.resolve("ncclCommGetAsyncError", api.comm_get_async_error);
  lib.resolve("ncclGetErrorString", api.get_error_string);
  lib.resolve("ncclGetLastError", api.get_last_error);
  lib.resolve("ncclGroupStart", api.group_start);
  lib.resolve("ncclGroupEnd", api.group_end);
  lib.resolve("ncclAllReduce", api.all_reduce);
  lib.resolve("ncclReduce", api.reduce);
  lib.resolve("ncclBroadcast", api.broadcast);
  lib.resolve("ncclAllGather", api.all_gather);
  lib.resolve("ncclReduceScatter", api.reduce_scatter);
  lib.resolve("ncclSend", api.send);
  lib.resolve("ncclRecv", api.recv);
  api.path = lib.path();
  return api;
}

const NcclApi& nccl_api() {
  // Thread-safe; a load that throws is tried again at the next call (the environment may have
  // changed).
  static const NcclApi api = [] {
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    return load_nccl(nccl_candidates());
  }();
  return api;
}

}  // namespace culua::detail::dist
