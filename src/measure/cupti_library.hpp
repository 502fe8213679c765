// CUPTI (libcupti.so.13), loaded at run time: from the loader's search path, the toolkit (lib64,
// extras/CUPTI/lib64), or NVIDIA's nvidia-cuda-cupti wheel; CULUA_CUPTI_LIBRARY names the file.
// Only compiled with the CUDA toolkit's headers (CULUA_HAVE_CUPTI).
#pragma once

#include <string>

#include "core/base/shared_library.hpp"

namespace culua::detail::measure {

// The library, loaded on first use; throws Error(Unsupported) "<purpose> CUPTI ...: not found
// (tried ...)" when absent. Thread-safe.
const SharedLibrary& cupti_library(const char* purpose = "profiling needs");

// A CUPTI function by name (throws when the library or the symbol is missing).
template <class F>
F cupti_function(const char* symbol, const char* purpose = "profiling needs") {
  return cupti_library(purpose).resolve<F>(symbol);
}

// CUPTI's text for a result code ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), or the number.
std::string cupti_result_text(int result);

// The advice for CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: counters need the driver's permission.
const char* cupti_privileges_advice();

}  // namespace culua::detail::measure
