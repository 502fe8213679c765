#include "cuda/cuda_check.hpp"

#include "core/runtime/capture.hpp"

#include <algorithm>
#include <cstring>

#include "core/base/error.hpp"
#include "cuda/driver_api.hpp"

namespace culua::detail::cuda {

RelaxedCaptureMode::RelaxedCaptureMode() {
  if (!Capture::active()) return;
  mode_ = cudaStreamCaptureModeRelaxed;
  active_ = cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess;
  if (!active_) cudaGetLastError();
}

RelaxedCaptureMode::~RelaxedCaptureMode() {
  if (active_) cudaThreadExchangeStreamCaptureMode(&mode_);
}

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

void Health::copy_site(const char* site, uint64_t version) {
  const size_t n = std::min(std::strlen(site), sizeof last_site - 1);
  std::memcpy(last_site, site, n);
  last_site[n] = '\0';
  last_site_version = version;
}

void Health::check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the runtime stays usable
  raise(static_cast<int>(e), cudaGetErrorName(e), cudaGetErrorString(e), call, file, line);
}

void Health::check_driver(int code, const char* call, const char* file, int line) {
  if (code == 0) return;
  const char* name = nullptr;
  const char* description = nullptr;
  driver_error_strings(code, &name, &description);
  raise(code, name, description, call, file, line);
}

void Health::raise(int code, const char* name, const char* description, const char* call,
                   const char* file, int line) {
  const char* base = file;
  for (const char* p = file; *p; ++p) {
    if (*p == '/') base = p + 1;
  }
  if (code == cudaErrorMemoryAllocation) {
    fail(ErrorKind::OutOfMemory, "{} failed: {}", call, description);
  }
  switch (code) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorStreamCaptureWrongThread:
    case cudaErrorCapturedEvent:
      fail(ErrorKind::Capture,
           "{} cannot be captured into a graph: CUDA error {} ({}) [{}:{}]; the capture ends with "
           "this error",
           call, name, description, base, line);
    default:
      break;
  }
  std::string msg =
      fmt::format("CUDA error {} ({}) in {} [{}:{}]", name, description, call, base, line);
  if (is_sticky(static_cast<cudaError_t>(code))) {
    if (last_site[0]) {
      msg += fmt::format("; the last operation queued was {}", last_site);
    } else {
      msg += fmt::format("; the last operation queued was '{}'", last_op.load());
    }
    {
      std::lock_guard lock(m);
      if (!poisoned.load()) message = msg;
    }
    poisoned.store(true);
    fail(ErrorKind::Fatal, "{}; the CUDA context is now unusable: restart culua", msg);
  }
  fail(ErrorKind::Device, "{}", msg);
}

}  // namespace culua::detail::cuda
