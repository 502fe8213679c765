// The host executor (core/backend/backend.hpp HostExecutor): math on host arrays by the built-in
// kernels' element functors, on the calling thread.
#pragma once

#include <memory>

#include "core/backend/backend.hpp"

namespace culua::detail::kernels::host {

// One shared, stateless executor.
std::shared_ptr<HostExecutor> executor();

}  // namespace culua::detail::kernels::host
