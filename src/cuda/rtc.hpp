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

// Loads `binary` into the current context, which must be `device`'s. With `switch_device`
// (several GPUs) each launch first makes `device` current when it is not.
std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device, bool switch_device,
                                       std::shared_ptr<Health> health);

}  // namespace culua::detail::cuda
