// NVRTC, loaded on first use (dlopen of libnvrtc.so.13): culua starts without it, and a machine
// whose toolkit lacks it can run everything except run-time compiled kernels.
#pragma once

#include <nvrtc.h>

#include <string>

namespace culua::detail::cuda {

struct NvrtcApi {
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) num_supported_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) supported_archs = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcAddNameExpression) add_name_expression = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
  decltype(&::nvrtcGetLoweredName) get_lowered_name = nullptr;
  std::string library;  // the file it was loaded from, links resolved
};

// The library's entry points; loads libnvrtc.so.13 on the first call (the loader's search, then
// $CUDA_HOME, $CUDA_PATH and the toolkit's folders: toolkit_library_candidates). Throws
// Error(Unsupported) "run-time compiled kernels need NVRTC (libnvrtc.so.13): not found (tried
// ...)" when it cannot be loaded.
const NvrtcApi& nvrtc_api();

}  // namespace culua::detail::cuda
