#include "cuda/nvlink.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <mutex>

namespace culua::detail::cuda {

namespace {

// The few NVML declarations needed, so that nvml.h is not required to build.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kP2PCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2PStatusOk = 0;    // NVML_P2P_STATUS_OK

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*p2p_status)(NvmlDevice, NvmlDevice, int, int*) = nullptr;
};

// Loaded once per process and kept for its lifetime (never shut down or closed: nothing runs in
// static destructors).
const NvmlApi* nvml() {
  static NvmlApi api;
  static bool usable = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    api.init = reinterpret_cast<decltype(api.init)>(dlsym(lib, "nvmlInit_v2"));
    api.handle_by_pci_bus_id = reinterpret_cast<decltype(api.handle_by_pci_bus_id)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    api.p2p_status =
        reinterpret_cast<decltype(api.p2p_status)>(dlsym(lib, "nvmlDeviceGetP2PStatus"));
    if (!api.init || !api.handle_by_pci_bus_id || !api.p2p_status || api.init() != kNvmlSuccess) {
      dlclose(lib);
      return;
    }
    usable = true;
  });
  return usable ? &api : nullptr;
}

// NVML numbers devices its own way: CUDA's device is found by its PCI bus id.
NvmlDevice nvml_device(const NvmlApi& api, int cuda_device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  NvmlDevice d = nullptr;
  return api.handle_by_pci_bus_id(bus, &d) == kNvmlSuccess ? d : nullptr;
}

}  // namespace

std::optional<bool> nvlink_between(int device_a, int device_b) {
  const NvmlApi* api = nvml();
  if (!api) return std::nullopt;
  NvmlDevice a = nvml_device(*api, device_a);
  NvmlDevice b = nvml_device(*api, device_b);
  if (!a || !b) return std::nullopt;
  int status = -1;
  if (api->p2p_status(a, b, kP2PCapsNvlink, &status) != kNvmlSuccess) return std::nullopt;
  return status == kP2PStatusOk;
}

}  // namespace culua::detail::cuda
