// SM clock and clock-throttle readings through NVML. libnvidia-ml.so.1 is opened with dlopen on
// first use and never linked, so culua runs where NVML is absent (host builds, containers without
// the driver's libraries): every reading is then empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace culua::detail::measure {

// Throttle ("clocks event") reason bits, as nvml.h defines them.
namespace clock_reason {
inline constexpr uint64_t kGpuIdle = 0x1;
inline constexpr uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kSwPowerCap = 0x4;
inline constexpr uint64_t kHwSlowdown = 0x8;
inline constexpr uint64_t kSyncBoost = 0x10;
inline constexpr uint64_t kSwThermalSlowdown = 0x20;
inline constexpr uint64_t kHwThermalSlowdown = 0x40;
inline constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kDisplayClockSetting = 0x100;
// The reasons that mean the GPU ran slower than it would have: power capping, thermal and
// hardware slowdowns. Idle, application-clock and display settings and sync boost are not.
inline constexpr uint64_t kThrottling =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_reason

// Names of the reason bits set in `reasons` ("sw_power_cap", "hw_thermal_slowdown", ...).
std::vector<std::string> clock_reason_names(uint64_t reasons);

// One GPU as NVML sees it.
class GpuMonitor {
 public:
  // The NVML device at PCI bus id `bus_id` (DeviceInfo::pci_bus_id: matched by bus id, so that
  // CUDA_VISIBLE_DEVICES cannot mix devices up); nullopt when NVML or the device is unavailable.
  static std::optional<GpuMonitor> for_pci_bus_id(const std::string& bus_id);

  std::optional<unsigned> sm_clock_mhz() const;
  std::optional<unsigned> max_sm_clock_mhz() const;  // the highest SM clock (boost), MHz
  // The current clock event (throttle) reasons, all bits; nullopt when NVML cannot say.
  std::optional<uint64_t> clock_reasons() const;

 private:
  explicit GpuMonitor(void* device) : device_(device) {}
  void* device_;  // nvmlDevice_t
};

}  // namespace culua::detail::measure
