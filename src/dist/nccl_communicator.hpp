// The NCCL communicator behind dist/collectives.hpp (built with the CUDA backend only).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dist/collectives.hpp"

namespace culua::detail::dist {

// "2.28.3" (loads the library).
std::string nccl_version_string();
// The bytes of a new ncclUniqueId.
std::string nccl_unique_id();
// The communicators of Communicator::local and ::rank_of, arguments already checked.
std::shared_ptr<Communicator> make_nccl_local(Runtime& rt, const std::vector<int>& devices,
                                              const CommOptions& options);
std::shared_ptr<Communicator> make_nccl_rank(Runtime& rt, const std::string& id, int nranks,
                                             int rank, int device, const CommOptions& options);

}  // namespace culua::detail::dist
