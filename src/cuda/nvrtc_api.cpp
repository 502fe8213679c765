#include "cuda/nvrtc_api.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/base/error.hpp"

namespace culua::detail::cuda {

namespace {

template <class F>
void resolve(void* lib, const char* symbol, F& out) {
  void* p = dlsym(lib, symbol);
  if (!p) fail(ErrorKind::Unsupported, "NVRTC has no symbol {}", symbol);
  out = reinterpret_cast<F>(p);
}

NvrtcApi load() {
  std::vector<std::string> candidates = {"libnvrtc.so.13"};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(var); home && *home) {
      candidates.push_back(std::string(home) + "/lib64/libnvrtc.so.13");
    }
  }
  candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so.13");
  void* lib = nullptr;
  std::string errors;
  std::string loaded;
  for (const std::string& name : candidates) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      loaded = name;
      break;
    }
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e ? e : name.c_str());
  }
  if (!lib) {
    fail(ErrorKind::Unsupported,
         "cannot load NVRTC, which run-time compiled kernels need (install the CUDA toolkit's "
         "NVRTC or set CUDA_HOME): {}",
         errors);
  }
  NvrtcApi api;
  resolve(lib, "nvrtcGetErrorString", api.get_error_string);
  resolve(lib, "nvrtcVersion", api.version);
  resolve(lib, "nvrtcGetNumSupportedArchs", api.num_supported_archs);
  resolve(lib, "nvrtcGetSupportedArchs", api.supported_archs);
  resolve(lib, "nvrtcCreateProgram", api.create_program);
  resolve(lib, "nvrtcDestroyProgram", api.destroy_program);
  resolve(lib, "nvrtcAddNameExpression", api.add_name_expression);
  resolve(lib, "nvrtcCompileProgram", api.compile_program);
  resolve(lib, "nvrtcGetProgramLogSize", api.get_program_log_size);
  resolve(lib, "nvrtcGetProgramLog", api.get_program_log);
  resolve(lib, "nvrtcGetCUBINSize", api.get_cubin_size);
  resolve(lib, "nvrtcGetCUBIN", api.get_cubin);
  resolve(lib, "nvrtcGetPTXSize", api.get_ptx_size);
  resolve(lib, "nvrtcGetPTX", api.get_ptx);
  resolve(lib, "nvrtcGetLoweredName", api.get_lowered_name);
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api.version), &info) && info.dli_fname) {
    char resolved[PATH_MAX];
    loaded = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
  }
  api.library = loaded;
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const NvrtcApi& nvrtc_api() {
  static std::mutex m;
  static NvrtcApi api;
  static bool loaded = false;
  std::lock_guard lock(m);
  if (!loaded) {
    api = load();
    loaded = true;
  }
  return api;
}

}  // namespace culua::detail::cuda
