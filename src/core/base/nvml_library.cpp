// NVML's one loader: libnvidia-ml.so.1 opened and initialized once per process.
#include "core/base/nvml_library.hpp"

#include <mutex>
#include <utility>

namespace culua::detail::nvml {

const SharedLibrary& library() {
  static SharedLibrary lib;
  static std::once_flag once;
  std::call_once(once, [] {
    SharedLibrary opened =
        SharedLibrary::open_optional("NVML (libnvidia-ml.so.1)", {"libnvidia-ml.so.1"});
    Return (*init)() = nullptr;
    if (opened.find("nvmlInit_v2", init) && init() == kSuccess) lib = std::move(opened);
  });
  return lib;
}

Device device_by_pci_bus_id(const std::string& bus_id) {
  Return (*by_bus_id)(const char*, Device*) = nullptr;
  if (bus_id.empty() || !library().find("nvmlDeviceGetHandleByPciBusId_v2", by_bus_id)) {
    return nullptr;
  }
  Device d = nullptr;
  return by_bus_id(bus_id.c_str(), &d) == kSuccess ? d : nullptr;
}

}  // namespace culua::detail::nvml
