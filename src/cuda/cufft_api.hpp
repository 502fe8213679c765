// cuFFT loaded on first use (dlopen), as cuBLAS is (cublas_api.hpp): never linked, so that only
// scripts that call cu.fft load it.
#pragma once

#include <cufft.h>

namespace culua::detail::cuda {

using MakePlanMany64 = cufftResult (*)(cufftHandle, int, long long*, long long*, long long,
                                       long long, long long*, long long, long long, cufftType,
                                       long long, size_t*);

struct CufftApi {
  decltype(&cufftCreate) create;
  decltype(&cufftDestroy) destroy;
  decltype(&cufftSetAutoAllocation) set_auto_allocation;
  MakePlanMany64 make_plan_many_64;
  decltype(&cufftSetWorkArea) set_work_area;
  decltype(&cufftSetStream) set_stream;
  decltype(&cufftExecC2C) exec_c2c;
  decltype(&cufftExecZ2Z) exec_z2z;
  decltype(&cufftExecR2C) exec_r2c;
  decltype(&cufftExecD2Z) exec_d2z;
  decltype(&cufftExecC2R) exec_c2r;
  decltype(&cufftExecZ2D) exec_z2d;
  decltype(&cufftGetVersion) get_version;
};

// The library's entry points; loads libcufft.so.12 on the first call (the loader's search, then
// the toolkit's folders: toolkit_library_candidates). Throws Error(Unsupported) "cu.fft needs
// cuFFT (libcufft.so.12): not found (tried ...)" when it cannot be loaded.
const CufftApi& cufft_api();

// cuFFT's name for a status ("CUFFT_ALLOC_FAILED").
const char* cufft_status_name(cufftResult r);

}  // namespace culua::detail::cuda
