// What bench/baseline.cu and bench/baseline_suite.cu share: the empty kernels' source and their
// NVRTC compilation, the driver API functions (resolved through the runtime, so that the program
// links no libcuda and starts on a machine without a GPU), and the small helpers.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <nvrtc.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace culua_baseline {

// The same kernels scripts/bench/launch.lua compiles with cu.compile (docs/performance.md).
inline constexpr const char* kLaunchSource = R"(extern "C" __global__ void empty0() {}
extern "C" __global__ void empty4(float* a, const float* b, float c, int n) {}
extern "C" __global__ void empty8(float* a, const float* b, float c, int n, float* d, const float* e, double f, long long g) {}
)";

// Compiles kLaunchSource with NVRTC for compute capability major.minor into `cubin`; returns ""
// or what failed.
std::string compile_empty_kernels(int major, int minor, std::vector<char>& cubin);

// The driver API functions the program calls, resolved with cudaGetDriverEntryPointByVersion as
// culua resolves them (src/cuda/driver_api.cpp).
struct Driver {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
};
// Resolves the functions (once; needs the CUDA runtime initialized): "" or what failed.
std::string load_driver(Driver& out);

// cuBLAS and NVRTC, loaded on first use with dlopen as culua loads them (src/cuda/cublas_api.cpp,
// src/cuda/nvrtc_api.cpp): linking them would add their start-up (libcublasLt's static
// constructors: about 0.1 s) to every run of the program, first-kernel's wall time included.
struct Cublas {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  // The exported cublasGemmEx (cublas_api.h also has an inline C++ overload taking the compute
  // type as a cudaDataType).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  decltype(&::cublasGetStatusName) status_name = nullptr;
  decltype(&::cublasGetProperty) get_property = nullptr;
};
struct Nvrtc {
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
};
// cuFFT, loaded on first use as culua loads it (src/cuda/cufft_api.cpp).
struct Cufft {
  decltype(&::cufftCreate) create = nullptr;
  decltype(&::cufftDestroy) destroy = nullptr;
  decltype(&::cufftMakePlanMany64) make_plan_many_64 = nullptr;
  decltype(&::cufftSetStream) set_stream = nullptr;
  decltype(&::cufftExecC2C) exec_c2c = nullptr;
  decltype(&::cufftGetVersion) get_version = nullptr;
};
// The loaded functions, or nullptr with what failed in *error.
const Cublas* load_cublas(std::string* error);
const Cufft* load_cufft(std::string* error);
const Nvrtc* load_nvrtc(std::string* error);

// A failed CUDA call inside a measurement (reported as the measurement's error record), and the
// check that throws it naming `what` and the error.
struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_cuda(cudaError_t e, const char* what);

// "2G", "512M", "1048576" -> bytes; 0 when unreadable.
size_t parse_bytes(const char* s);
double now_s();
double median(std::vector<double> v);

// culua-baseline suite [options]: docs/performance.md. Returns the exit status.
int suite(int argc, char** argv);
// culua-baseline rk4 [--n N] [--steps S] [--reps R]: the native floors of the RK4 loop of
// scripts/device_resident_loop.lua (bench/baseline_rk4.cu), one JSON record per version.
int rk4(int argc, char** argv);
// culua-baseline first-kernel: create the context, run one kernel, synchronize, exit.
int first_kernel();
// The suite's usage text.
extern const char* const kSuiteUsage;

}  // namespace culua_baseline
