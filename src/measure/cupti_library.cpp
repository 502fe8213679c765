#include "measure/cupti_library.hpp"

#if defined(CULUA_HAVE_CUPTI)

#include <cupti.h>

#include <mutex>

#include "core/base/error.hpp"
#include "fmt/format.h"

namespace culua::detail::measure {

const SharedLibrary& cupti_library(const char* purpose) {
  static std::mutex m;
  static SharedLibrary lib;
  std::lock_guard lock(m);
  if (!lib.loaded()) {
    lib = SharedLibrary::open(
        "CUPTI (libcupti.so.13)",
        toolkit_library_candidates("libcupti.so.13", "CULUA_CUPTI_LIBRARY", "cuda_cupti"),
        std::string(purpose),
        "install the CUDA toolkit's CUPTI or the nvidia-cuda-cupti wheel, or set "
        "CULUA_CUPTI_LIBRARY to the file");
  }
  return lib;
}

std::string cupti_result_text(int result) {
  using GetResultString = CUptiResult (*)(CUptiResult, const char**);
  const char* text = nullptr;
  try {
    auto f = cupti_function<GetResultString>("cuptiGetResultString");
    if (f(static_cast<CUptiResult>(result), &text) == CUPTI_SUCCESS && text) return text;
  } catch (const Error&) {
  }
  return fmt::format("CUPTI error {}", result);
}

const char* cupti_privileges_advice() {
  return "the driver allows GPU performance counters to administrators only "
         "(NVreg_RestrictProfilingToAdminUsers=1, the default). Run as root (or with "
         "CAP_SYS_ADMIN), or allow every user: put 'options nvidia "
         "NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/nvidia-profiling.conf and "
         "reload the driver (or reboot); in a container, start it with --cap-add=SYS_ADMIN. See "
         "https://developer.nvidia.com/ERR_NVGPUCTRPERM. Activity tracing (cu.profile, --profile) "
         "needs no such permission";
}

}  // namespace culua::detail::measure

#endif
