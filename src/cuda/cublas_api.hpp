// cuBLAS loaded on first use (dlopen), not at start-up: linking libcublas makes every culua
// process load cuBLAS and cuBLASLt and run their initializers, about 70 ms and 200 MB, even
// scripts that never multiply a matrix.
#pragma once

#include <cublas_v2.h>

namespace culua::detail::cuda {

// The computeType overloads (cublasComputeType_t, not the legacy cudaDataType).
using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                cublasOperation_t, int, int, int, const void*,
                                                const void*, cudaDataType, int, long long,
                                                const void*, cudaDataType, int, long long,
                                                const void*, void*, cudaDataType, int, long long,
                                                int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedEx64 = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t,
                                                  cublasOperation_t, int64_t, int64_t, int64_t,
                                                  const void*, const void*, cudaDataType, int64_t,
                                                  long long, const void*, cudaDataType, int64_t,
                                                  long long, const void*, void*, cudaDataType,
                                                  int64_t, long long, int64_t, cublasComputeType_t,
                                                  cublasGemmAlgo_t);

using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void*, const void*, cudaDataType, int, const void*,
                                  cudaDataType, int, const void*, void*, cudaDataType, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode;
  decltype(&cublasSetMathMode) set_math_mode;
  GemmEx gemm;  // one product: the entry point (and kernel choice) of a C++ program's cublasGemmEx
  GemmStridedBatchedEx gemm_strided_batched;
  GemmStridedBatchedEx64 gemm_strided_batched_64;
  decltype(&cublasDotEx) dot;
  decltype(&cublasDotEx_64) dot_64;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

// The library's entry points; loads libcublas.so.13 on the first call (the loader's search, then
// the toolkit's folders: toolkit_library_candidates). Throws Error(Unsupported) "matmul and dot
// need cuBLAS (libcublas.so.13): not found (tried ...)" when it cannot be loaded.
const CublasApi& cublas_api();

}  // namespace culua::detail::cuda
