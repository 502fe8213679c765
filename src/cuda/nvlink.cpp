// Whether two CUDA devices are joined by NVLink, asked of NVML's peer-to-peer status.
#include "cuda/nvlink.hpp"

#include <cuda_runtime.h>

#include "core/base/nvml_library.hpp"

namespace culua::detail::cuda {

namespace {

constexpr int kP2PCapsNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2PStatusOk = 0;    // NVML_P2P_STATUS_OK

using P2PStatus = nvml::Return (*)(nvml::Device, nvml::Device, int, int*);

// Resolved once per process; null when NVML is unavailable.
P2PStatus p2p_status() {
  static const P2PStatus f = [] {
    P2PStatus s = nullptr;
    nvml::library().find("nvmlDeviceGetP2PStatus", s);
    return s;
  }();
  return f;
}

nvml::Device nvml_device(int cuda_device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return nvml::device_by_pci_bus_id(bus);
}

}  // namespace

std::optional<bool> nvlink_between(int device_a, int device_b) {
  const P2PStatus status_of = p2p_status();
  if (!status_of) return std::nullopt;
  nvml::Device a = nvml_device(device_a);
  nvml::Device b = nvml_device(device_b);
  if (!a || !b) return std::nullopt;
  int status = -1;
  if (status_of(a, b, kP2PCapsNvlink, &status) != nvml::kSuccess) return std::nullopt;
  return status == kP2PStatusOk;
}

}  // namespace culua::detail::cuda
