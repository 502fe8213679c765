// Whether two CUDA devices are joined by NVLink (directly or through NVSwitch), asked of NVML
// (libnvidia-ml.so.1, loaded with dlopen on first use; never required).
#pragma once

#include <optional>

namespace culua::detail::cuda {

// True or false as NVML reports it; nullopt when NVML is absent or cannot tell.
std::optional<bool> nvlink_between(int device_a, int device_b);

}  // namespace culua::detail::cuda
