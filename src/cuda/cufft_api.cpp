// cuFFT's entry points, resolved from libcufft.so.12 on first use, and its status names.
#include "cuda/cufft_api.hpp"

#include "core/base/shared_library.hpp"

namespace culua::detail::cuda {

namespace {

CufftApi load() {
  const SharedLibrary lib = SharedLibrary::open(
      "cuFFT (libcufft.so.12)", toolkit_library_candidates("libcufft.so.12"), "cu.fft needs",
      "install the CUDA toolkit's cuFFT, or set CUDA_HOME to the toolkit");
  CufftApi api{};
  lib.resolve("cufftCreate", api.create);
  lib.resolve("cufftDestroy", api.destroy);
  lib.resolve("cufftSetAutoAllocation", api.set_auto_allocation);
  lib.resolve("cufftMakePlanMany64", api.make_plan_many_64);
  lib.resolve("cufftSetWorkArea", api.set_work_area);
  lib.resolve("cufftSetStream", api.set_stream);
  lib.resolve("cufftExecC2C", api.exec_c2c);
  lib.resolve("cufftExecZ2Z", api.exec_z2z);
  lib.resolve("cufftExecR2C", api.exec_r2c);
  lib.resolve("cufftExecD2Z", api.exec_d2z);
  lib.resolve("cufftExecC2R", api.exec_c2r);
  lib.resolve("cufftExecZ2D", api.exec_z2d);
  lib.resolve("cufftGetVersion", api.get_version);
  return api;
}

}  // namespace

const CufftApi& cufft_api() {
  // Thread-safe; a load that throws is tried again at the next call.
  static const CufftApi api = load();
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
