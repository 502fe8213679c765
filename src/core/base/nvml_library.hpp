// NVML (libnvidia-ml.so.1, the driver's management library), loaded at run time and never
// required: where it is absent or fails to start, every reading made through it is empty. The few
// NVML declarations its users need are here, so that nvml.h is not required to build; each user
// resolves the functions it calls (SharedLibrary::find).
#pragma once

#include <string>

#include "core/base/shared_library.hpp"

namespace culua::detail::nvml {

using Return = int;    // nvmlReturn_t
using Device = void*;  // nvmlDevice_t
inline constexpr Return kSuccess = 0;

// The library, opened and initialized (nvmlInit_v2) by the first call and kept for the life of
// the process (never shut down: nothing runs in static destructors). Empty (loaded() false) when
// it is absent or its initialization fails. Thread-safe.
const SharedLibrary& library();

// The device at PCI bus id `bus_id` (as CUDA gives it: NVML numbers devices its own way, and
// CUDA_VISIBLE_DEVICES renumbers CUDA's); null when NVML or the device is unavailable.
Device device_by_pci_bus_id(const std::string& bus_id);

}  // namespace culua::detail::nvml
