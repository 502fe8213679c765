// cuBLAS's entry points, resolved from libcublas.so.13 on first use.
#include "cuda/cublas_api.hpp"

#include "core/base/shared_library.hpp"

namespace culua::detail::cuda {

namespace {

CublasApi load() {
  const SharedLibrary lib = SharedLibrary::open(
      "cuBLAS (libcublas.so.13)", toolkit_library_candidates("libcublas.so.13"),
      "matmul and dot need", "install the CUDA toolkit's cuBLAS, or set CUDA_HOME to the toolkit");
  CublasApi api{};
  lib.resolve("cublasCreate_v2", api.create);
  lib.resolve("cublasDestroy_v2", api.destroy);
  lib.resolve("cublasSetStream_v2", api.set_stream);
  lib.resolve("cublasSetWorkspace_v2", api.set_workspace);
  lib.resolve("cublasSetPointerMode_v2", api.set_pointer_mode);
  lib.resolve("cublasSetMathMode", api.set_math_mode);
  lib.resolve("cublasGemmEx", api.gemm);
  lib.resolve("cublasGemmStridedBatchedEx", api.gemm_strided_batched);
  lib.resolve("cublasGemmStridedBatchedEx_64", api.gemm_strided_batched_64);
  lib.resolve("cublasDotEx", api.dot);
  lib.resolve("cublasDotEx_64", api.dot_64);
  lib.resolve("cublasGetStatusName", api.status_name);
  lib.resolve("cublasGetStatusString", api.status_string);
  return api;
}

}  // namespace

const CublasApi& cublas_api() {
  // Thread-safe; a load that throws is tried again at the next call.
  static const CublasApi api = load();
  return api;
}

}  // namespace culua::detail::cuda
