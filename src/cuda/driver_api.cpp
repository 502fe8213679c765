#include "cuda/driver_api.hpp"

#include <cuda_runtime.h>

#include <atomic>

#include "core/base/error.hpp"

namespace culua::detail::cuda {

namespace {

template <class F>
void resolve(const char* symbol, F& out, bool required) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || !p) {
    cudaGetLastError();
    if (required) {
      fail(ErrorKind::Unsupported, "the CUDA driver has no {}: {}", symbol,
           e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found");
    }
    out = nullptr;
    return;
  }
  out = reinterpret_cast<F>(p);
}

DriverApi load() {
  DriverApi api;
  resolve("cuGetErrorName", api.get_error_name, true);
  resolve("cuGetErrorString", api.get_error_string, true);
  resolve("cuDriverGetVersion", api.driver_get_version, true);
  resolve("cuInit", api.init, true);
  resolve("cuDeviceGet", api.device_get, true);
  resolve("cuDevicePrimaryCtxRetain", api.primary_ctx_retain, true);
  resolve("cuCtxGetCurrent", api.ctx_get_current, true);
  resolve("cuCtxSetCurrent", api.ctx_set_current, true);
  resolve("cuModuleLoadData", api.module_load_data, true);
  resolve("cuModuleUnload", api.module_unload, true);
  resolve("cuModuleGetFunction", api.module_get_function, true);
  resolve("cuFuncGetAttribute", api.func_get_attribute, true);
  resolve("cuFuncSetAttribute", api.func_set_attribute, true);
  resolve("cuFuncGetParamInfo", api.func_get_param_info, false);
  resolve("cuLaunchKernel", api.launch_kernel, true);
  resolve("cuOccupancyMaxActiveBlocksPerMultiprocessor", api.occupancy_max_active_blocks, true);
  return api;
}

// Set once the functions are resolved: error strings are looked up only then.
std::atomic<const DriverApi*> g_loaded{nullptr};

}  // namespace

const DriverApi& driver_api() {
  // A throwing initializer leaves the static unset: the next call tries again.
  static const DriverApi api = load();
  if (!g_loaded.load(std::memory_order_relaxed)) g_loaded.store(&api, std::memory_order_release);
  return api;
}

void driver_error_strings(int code, const char** name, const char** description) {
  *name = "CUDA_ERROR_UNKNOWN";
  *description = "unknown driver error";
  const DriverApi* api = g_loaded.load(std::memory_order_acquire);
  if (!api) return;
  const char* n = nullptr;
  const char* d = nullptr;
  if (api->get_error_name(static_cast<CUresult>(code), &n) == CUDA_SUCCESS && n) *name = n;
  if (api->get_error_string(static_cast<CUresult>(code), &d) == CUDA_SUCCESS && d) *description = d;
}

}  // namespace culua::detail::cuda
