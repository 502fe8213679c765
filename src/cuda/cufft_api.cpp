#include "cuda/cufft_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/base/error.hpp"

namespace culua::detail::cuda {

namespace {

constexpr const char* kLibraries[] = {"libcufft.so.12", "/usr/local/cuda/lib64/libcufft.so.12"};

template <class F>
void resolve(void* lib, const char* symbol, F& out) {
  void* p = dlsym(lib, symbol);
  if (!p) fail(ErrorKind::Unsupported, "cuFFT has no symbol {}: {}", symbol, dlerror());
  out = reinterpret_cast<F>(p);
}

CufftApi load() {
  void* lib = nullptr;
  std::string errors;
  for (const char* name : kLibraries) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!lib) {
    fail(ErrorKind::Unsupported, "cannot load cuFFT (libcufft.so.12; cu.fft needs it): {}", errors);
  }
  CufftApi api{};
  resolve(lib, "cufftCreate", api.create);
  resolve(lib, "cufftDestroy", api.destroy);
  resolve(lib, "cufftSetAutoAllocation", api.set_auto_allocation);
  resolve(lib, "cufftMakePlanMany64", api.make_plan_many_64);
  resolve(lib, "cufftSetWorkArea", api.set_work_area);
  resolve(lib, "cufftSetStream", api.set_stream);
  resolve(lib, "cufftExecC2C", api.exec_c2c);
  resolve(lib, "cufftExecZ2Z", api.exec_z2z);
  resolve(lib, "cufftExecR2C", api.exec_r2c);
  resolve(lib, "cufftExecD2Z", api.exec_d2z);
  resolve(lib, "cufftExecC2R", api.exec_c2r);
  resolve(lib, "cufftExecZ2D", api.exec_z2d);
  resolve(lib, "cufftGetVersion", api.get_version);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CufftApi& cufft_api() {
  static std::mutex m;
  static CufftApi api{};
  static bool loaded = false;
  std::lock_guard lock(m);
  if (!loaded) {
    api = load();
    loaded = true;
  }
  return api;
}

const char* cufft_status_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS:
      return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
      return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
      return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE:
      return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
      return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
      return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
      return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
      return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE:
      return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
      return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
      return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
      return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
      return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
      return "CUFFT_NOT_SUPPORTED";
    default:
      return "an unknown cuFFT status";
  }
}

}  // namespace culua::detail::cuda
