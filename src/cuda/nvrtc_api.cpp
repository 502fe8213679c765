// NVRTC's entry points, resolved from libnvrtc.so.13 on first use.
#include "cuda/nvrtc_api.hpp"

#include "core/base/shared_library.hpp"

namespace culua::detail::cuda {

namespace {

NvrtcApi load() {
  const SharedLibrary lib = SharedLibrary::open(
      "NVRTC (libnvrtc.so.13)", toolkit_library_candidates("libnvrtc.so.13"),
      "run-time compiled kernels need", "install the CUDA toolkit's NVRTC, or set CUDA_HOME");
  NvrtcApi api;
  lib.resolve("nvrtcGetErrorString", api.get_error_string);
  lib.resolve("nvrtcVersion", api.version);
  lib.resolve("nvrtcGetNumSupportedArchs", api.num_supported_archs);
  lib.resolve("nvrtcGetSupportedArchs", api.supported_archs);
  lib.resolve("nvrtcCreateProgram", api.create_program);
  lib.resolve("nvrtcDestroyProgram", api.destroy_program);
  lib.resolve("nvrtcAddNameExpression", api.add_name_expression);
  lib.resolve("nvrtcCompileProgram", api.compile_program);
  lib.resolve("nvrtcGetProgramLogSize", api.get_program_log_size);
  lib.resolve("nvrtcGetProgramLog", api.get_program_log);
  lib.resolve("nvrtcGetCUBINSize", api.get_cubin_size);
  lib.resolve("nvrtcGetCUBIN", api.get_cubin);
  lib.resolve("nvrtcGetPTXSize", api.get_ptx_size);
  lib.resolve("nvrtcGetPTX", api.get_ptx);
  lib.resolve("nvrtcGetLoweredName", api.get_lowered_name);
  api.library = lib.file();
  return api;
}

}  // namespace

const NvrtcApi& nvrtc_api() {
  // Thread-safe; a load that throws is tried again at the next call.
  static const NvrtcApi api = load();
  return api;
}

}  // namespace culua::detail::cuda
