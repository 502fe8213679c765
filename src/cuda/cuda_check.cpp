#include "cuda/cuda_check.hpp"

#include "core/error.hpp"

namespace culua::cuda {

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorExternalDevice:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

void Health::check_usable() const {
  if (poisoned.load(std::memory_order_relaxed)) {
    fail(ErrorKind::Fatal, "the CUDA context is unusable after an earlier fatal error: {}",
         poison_message());
  }
}

std::string Health::poison_message() const {
  std::lock_guard lock(m);
  return message;
}

void Health::check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the runtime stays usable
  const char* base = file;
  for (const char* p = file; *p; ++p) {
    if (*p == '/') base = p + 1;
  }
  if (e == cudaErrorMemoryAllocation) {
    fail(ErrorKind::OutOfMemory, "{} failed: {}", call, cudaGetErrorString(e));
  }
  std::string msg = fmt::format("CUDA error {} ({}) in {} [{}:{}]", cudaGetErrorName(e),
                                cudaGetErrorString(e), call, base, line);
  if (is_sticky(e)) {
    msg += fmt::format("; the last operation queued was '{}'", last_op.load());
    {
      std::lock_guard lock(m);
      if (!poisoned.load()) message = msg;
    }
    poisoned.store(true);
    fail(ErrorKind::Fatal, "{}; the CUDA context is now unusable: restart culua", msg);
  }
  fail(ErrorKind::Device, "{}", msg);
}

}  // namespace culua::cuda
