#include "measure/nvml.hpp"

#include <dlfcn.h>

#include <mutex>

namespace culua::detail::measure {

namespace {

// The few NVML declarations needed, so that nvml.h is not required to build.
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*clock_reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*max_clock_info)(NvmlDevice, int, unsigned*) = nullptr;
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

// Loaded once per process and kept for its lifetime (never shut down or closed: nothing runs in
// static destructors).
const NvmlApi* nvml() {
  static NvmlApi api;
  static bool usable = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    bind(lib, api.init, "nvmlInit_v2");
    bind(lib, api.handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(lib, api.clock_info, "nvmlDeviceGetClockInfo");
    bind(lib, api.clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    bind(lib, api.max_clock_info, "nvmlDeviceGetMaxClockInfo");
    if (!api.clock_reasons)
      bind(lib, api.clock_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!api.init || !api.clock_info || api.init() != kNvmlSuccess) {
      dlclose(lib);
      return;
    }
    usable = true;
  });
  return usable ? &api : nullptr;
}

}  // namespace

std::vector<std::string> clock_reason_names(uint64_t reasons) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {clock_reason::kGpuIdle, "gpu_idle"},
      {clock_reason::kApplicationsClocksSetting, "applications_clocks_setting"},
      {clock_reason::kSwPowerCap, "sw_power_cap"},
      {clock_reason::kHwSlowdown, "hw_slowdown"},
      {clock_reason::kSyncBoost, "sync_boost"},
      {clock_reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
      {clock_reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
      {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {clock_reason::kDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) names.emplace_back(name);
  }
  if (reasons & ~known) names.emplace_back("other");
  return names;
}

std::optional<GpuMonitor> GpuMonitor::for_pci_bus_id(const std::string& bus_id) {
  const NvmlApi* api = nvml();
  if (!api || bus_id.empty() || !api->handle_by_pci_bus_id) return std::nullopt;
  NvmlDevice device = nullptr;
  if (api->handle_by_pci_bus_id(bus_id.c_str(), &device) != kNvmlSuccess) return std::nullopt;
  return GpuMonitor(device);
}

std::optional<unsigned> GpuMonitor::sm_clock_mhz() const {
  const NvmlApi* api = nvml();
  unsigned mhz = 0;
  if (!api || api->clock_info(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return std::nullopt;
  return mhz;
}

std::optional<unsigned> GpuMonitor::max_sm_clock_mhz() const {
  const NvmlApi* api = nvml();
  unsigned mhz = 0;
  if (!api || !api->max_clock_info ||
      api->max_clock_info(device_, kNvmlClockSm, &mhz) != kNvmlSuccess)
    return std::nullopt;
  return mhz;
}

std::optional<uint64_t> GpuMonitor::clock_reasons() const {
  const NvmlApi* api = nvml();
  unsigned long long reasons = 0;
  if (!api || !api->clock_reasons || api->clock_reasons(device_, &reasons) != kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(reasons);
}

}  // namespace culua::detail::measure
