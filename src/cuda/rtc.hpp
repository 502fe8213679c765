// Run-time compilation through NVRTC (with the persistent cache) and modules loaded through the
// driver API.
#pragma once

#include <memory>

#include "core/backend.hpp"
#include "core/rtc_types.hpp"
#include "cuda/cuda_check.hpp"

namespace culua::detail::cuda {

// Compiles for `device` (its architecture: a cubin, or PTX when NVRTC is older than the GPU).
// Compile errors throw Error(Value) whose message holds NVRTC's log.
RtcBinary compile(const RtcRequest& request, const DeviceInfo& device);

// Loads `binary` into `device`'s context, which the caller has made current. The module and its
// kernels make `device` current for each of their calls (a launch: see cuda/scoped.hpp).
std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device,
                                       std::shared_ptr<Health> health);

}  // namespace culua::detail::cuda
