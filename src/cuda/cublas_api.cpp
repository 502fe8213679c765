#include "cuda/cublas_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "core/base/error.hpp"

namespace culua::detail::cuda {

namespace {

constexpr const char* kLibraries[] = {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13"};

template <class F>
void resolve(void* lib, const char* symbol, F& out) {
  void* p = dlsym(lib, symbol);
  if (!p) fail(ErrorKind::Unsupported, "cuBLAS has no symbol {}: {}", symbol, dlerror());
  out = reinterpret_cast<F>(p);
}

CublasApi load() {
  void* lib = nullptr;
  std::string errors;
  for (const char* name : kLibraries) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!lib) fail(ErrorKind::Unsupported, "cannot load cuBLAS (matmul and dot need it): {}", errors);
  CublasApi api{};
  resolve(lib, "cublasCreate_v2", api.create);
  resolve(lib, "cublasDestroy_v2", api.destroy);
  resolve(lib, "cublasSetStream_v2", api.set_stream);
  resolve(lib, "cublasSetWorkspace_v2", api.set_workspace);
  resolve(lib, "cublasSetPointerMode_v2", api.set_pointer_mode);
  resolve(lib, "cublasSetMathMode", api.set_math_mode);
  resolve(lib, "cublasGemmEx", api.gemm);
  resolve(lib, "cublasGemmStridedBatchedEx", api.gemm_strided_batched);
  resolve(lib, "cublasGemmStridedBatchedEx_64", api.gemm_strided_batched_64);
  resolve(lib, "cublasDotEx", api.dot);
  resolve(lib, "cublasDotEx_64", api.dot_64);
  resolve(lib, "cublasGetStatusName", api.status_name);
  resolve(lib, "cublasGetStatusString", api.status_string);
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CublasApi& cublas_api() {
  static std::mutex m;
  static CublasApi api{};
  static bool loaded = false;
  std::lock_guard lock(m);
  if (!loaded) {
    api = load();
    loaded = true;
  }
  return api;
}

}  // namespace culua::detail::cuda
