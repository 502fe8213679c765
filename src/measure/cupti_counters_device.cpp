// The hardware counters' plumbing: CUPTI's profiler entry points, the CUDA driver's functions, the
// error for a failed CUPTI call, and the device's checks before a measurement (the current
// context, the profiler's initialization, support, the chip's name, counter availability).
#if defined(CULUA_HAVE_CUPTI)

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/shared_library.hpp"
#include "fmt/format.h"
#include "measure/cupti_counters_internal.hpp"

namespace culua::detail::measure::cupti_counters {

// A throwing initializer (CUPTI absent, or too old to have a symbol) leaves the static unset: the
// next call tries again.
const Api& api() {
  static const Api a;
  return a;
}

namespace {

// The driver's functions this needs. culua's CUDA backend has libcuda loaded already; NOLOAD finds
// that copy (and fails rather than loading a second driver when it is absent).
struct Driver {
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
};

Driver load_driver() {
  const SharedLibrary lib = SharedLibrary::open_optional(
      "the CUDA driver (libcuda.so.1)", {"libcuda.so.1"}, SharedLibrary::Binding::AlreadyLoaded);
  if (!lib.loaded()) {
    fail(ErrorKind::Unsupported,
         "hardware counters: the CUDA driver (libcuda.so.1) is not loaded in this process");
  }
  Driver d;
  lib.resolve("cuCtxGetCurrent", d.ctx_get_current);
  lib.resolve("cuCtxGetDevice", d.ctx_get_device);
  lib.resolve("cuDeviceGet", d.device_get);
  lib.resolve("cuDeviceGetName", d.device_get_name);
  return d;  // the library stays open: the driver stays loaded for the life of the process
}

const Driver& driver() {
  static const Driver d = load_driver();
  return d;
}

}  // namespace

std::string Target::text() const {
  std::string detail = name;
  if (!chip.empty()) detail += (detail.empty() ? "" : ", ") + chip;
  if (detail.empty()) return fmt::format("device {}", ordinal);
  return fmt::format("device {} ({})", ordinal, detail);
}

[[noreturn]] void fail_cupti(CUptiResult r, const char* function, const Target& t) {
  const std::string text = cupti_result_text(static_cast<int>(r));
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      fail(ErrorKind::Unsupported,
           "hardware counters: no permission to read the GPU's performance counters "
           "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): {}",
           cupti_privileges_advice());
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      fail(ErrorKind::Unsupported,
           "hardware counters: {} is a virtual GPU whose hypervisor does not allow reading its "
           "performance counters ({}: {})",
           t.text(), function, text);
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      fail(ErrorKind::Unsupported,
           "hardware counters: the performance counters of {} are in use by another profiler "
           "(Nsight Compute or Nsight Systems, DCGM's profiling metrics, or another CUPTI client "
           "in this process) ({}: {}); measure without it",
           t.text(), function, text);
    case CUPTI_ERROR_NOT_INITIALIZED:
      fail(ErrorKind::Unsupported,
           "hardware counters: CUPTI's profiler could not start on {} ({}: {}): another profiler "
           "may hold it (Nsight Compute or Nsight Systems, another CUPTI client in this process), "
           "or the driver is older than this CUPTI needs",
           t.text(), function, text);
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      fail(ErrorKind::Unsupported,
           "hardware counters: this CUPTI does not know the chip of {} ({}: {}); a newer CUPTI "
           "may",
           t.text(), function, text);
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      fail(ErrorKind::Unsupported,
           "hardware counters: {} does not support CUPTI's range profiler ({}: {})", t.text(),
           function, text);
    default:
      fail(ErrorKind::Device, "hardware counters: {}: {}", function, text);
  }
}

CUcontext current_context(Target& t, CUdevice& dev) {
  const Driver& d = driver();
  CUcontext ctx = nullptr;
  if (d.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) {
    fail(ErrorKind::Device,
         "hardware counters: no CUDA context is current on the calling thread (device {})",
         t.ordinal);
  }
  CUdevice wanted = 0;
  if (d.device_get(&wanted, t.ordinal) != CUDA_SUCCESS) {
    fail(ErrorKind::Value, "hardware counters: there is no CUDA device {}", t.ordinal);
  }
  if (d.ctx_get_device(&dev) != CUDA_SUCCESS || dev != wanted) {
    fail(ErrorKind::Device,
         "hardware counters: the calling thread's current CUDA context is not on device {}",
         t.ordinal);
  }
  char name[256] = {};
  if (d.device_get_name(name, static_cast<int>(sizeof(name) - 1), dev) == CUDA_SUCCESS) {
    t.name = name;
  }
  return ctx;
}

void initialize_profiler(const Api& a, const Target& t) {
  static bool initialized = false;
  if (initialized) return;
  auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(a.initialize, p, t);
  initialized = true;
}

void require_supported_device(const Api& a, const Target& t, CUdevice dev) {
  auto p = params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = dev;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(a.device_supported, p, t);
  if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED &&
      p.isSupported != CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    return;
  }
  auto bad = [](CUpti_Profiler_Support_Level l) {
    return l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ||
           l == CUPTI_PROFILER_CONFIGURATION_DISABLED;
  };
  std::string why;
  auto add = [&why](const char* reason) { why += (why.empty() ? "" : "; ") + std::string(reason); };
  if (bad(p.architecture)) add("its architecture has no range profiler (Turing or later needed)");
  if (bad(p.sli)) add("SLI is on");
  if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    add("it is a virtual GPU whose hypervisor has profiling turned off");
  } else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) {
    add("it is a virtual GPU without profiling support");
  }
  if (bad(p.confidentialCompute)) add("confidential computing is on");
  if (bad(p.cmp)) add("it is a crypto mining processor (CMP)");
  if (bad(p.wsl)) add("WSL does not support it");
  fail(ErrorKind::Unsupported, "hardware counters: {} cannot be profiled: {}", t.text(),
       why.empty() ? std::string("CUPTI reports it unsupported") : why);
}

std::string chip_name(const Api& a, const Target& t) {
  auto p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<size_t>(t.ordinal);
  check(a.chip_name, p, t);
  if (!p.pChipName || !*p.pChipName) {
    fail(ErrorKind::Device, "hardware counters: cuptiDeviceGetChipName gave no name for {}",
         t.text());
  }
  return p.pChipName;
}

std::vector<uint8_t> counter_availability(const Api& a, const Target& t, CUcontext ctx) {
  auto p = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  check(a.counter_availability, p, t);  // no buffer: the size
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  if (image.empty()) return image;
  p.pCounterAvailabilityImage = image.data();
  check(a.counter_availability, p, t);
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

}  // namespace culua::detail::measure::cupti_counters

#endif
