// The CUDA driver API functions culua calls directly (modules of run-time compiled kernels and
// their launches, the current context of cuda/scoped.hpp's DeviceScope), resolved through the
// runtime's cudaGetDriverEntryPointByVersion: nothing links against libcuda, and cuLaunchKernel is
// called without the runtime's extra layer.
#pragma once

#include <cuda.h>

namespace culua::detail::cuda {

struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&::cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&::cuFuncGetParamInfo) func_get_param_info = nullptr;  // null on drivers before 12.4
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy_max_active_blocks = nullptr;
};

// Resolved on first use (later calls take no lock: the device scope calls this on every launch);
// throws Error(Unsupported) when the driver lacks a required function.
const DriverApi& driver_api();

// Name and description of a CUresult, also when the driver cannot be reached.
void driver_error_strings(int code, const char** name, const char** description);

}  // namespace culua::detail::cuda
