// SM clocks and clock-event reasons read through NVML (core/base/nvml_library.hpp).
#include "measure/nvml.hpp"

#include <optional>

#include "core/base/nvml_library.hpp"

namespace culua::detail::measure {

namespace {

constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

// The readings' functions; clock_info is needed, the others are absent from some drivers.
struct NvmlApi {
  nvml::Return (*clock_info)(nvml::Device, int, unsigned*) = nullptr;
  nvml::Return (*clock_reasons)(nvml::Device, unsigned long long*) = nullptr;
  nvml::Return (*max_clock_info)(nvml::Device, int, unsigned*) = nullptr;
};

// Resolved once per process; null when NVML is unavailable.
const NvmlApi* nvml_api() {
  static const std::optional<NvmlApi> api = []() -> std::optional<NvmlApi> {
    const SharedLibrary& lib = nvml::library();
    NvmlApi a;
    if (!lib.find("nvmlDeviceGetClockInfo", a.clock_info)) return std::nullopt;
    lib.find("nvmlDeviceGetMaxClockInfo", a.max_clock_info);
    if (!lib.find("nvmlDeviceGetCurrentClocksEventReasons", a.clock_reasons)) {
      lib.find("nvmlDeviceGetCurrentClocksThrottleReasons", a.clock_reasons);
    }
    return a;
  }();
  return api ? &*api : nullptr;
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
  if (!nvml_api()) return std::nullopt;
  nvml::Device device = nvml::device_by_pci_bus_id(bus_id);
  if (!device) return std::nullopt;
  return GpuMonitor(device);
}

std::optional<unsigned> GpuMonitor::sm_clock_mhz() const {
  const NvmlApi* api = nvml_api();
  unsigned mhz = 0;
  if (!api || api->clock_info(device_, kNvmlClockSm, &mhz) != nvml::kSuccess) return std::nullopt;
  return mhz;
}

std::optional<unsigned> GpuMonitor::max_sm_clock_mhz() const {
  const NvmlApi* api = nvml_api();
  unsigned mhz = 0;
  if (!api || !api->max_clock_info ||
      api->max_clock_info(device_, kNvmlClockSm, &mhz) != nvml::kSuccess)
    return std::nullopt;
  return mhz;
}

std::optional<uint64_t> GpuMonitor::clock_reasons() const {
  const NvmlApi* api = nvml_api();
  unsigned long long reasons = 0;
  if (!api || !api->clock_reasons || api->clock_reasons(device_, &reasons) != nvml::kSuccess) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(reasons);
}

}  // namespace culua::detail::measure
