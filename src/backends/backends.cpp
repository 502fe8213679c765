#include "backends/backends.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "core/base/error.hpp"
#include "host/host_backend.hpp"
#include "kernels/host_executor.hpp"
#include "kernels/host_pool.hpp"
#if defined(CULUA_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#include "cuda/scoped.hpp"
#endif

namespace culua::detail::backends {

std::shared_ptr<Backend> make(const RuntimeOptions& options) {
  BackendKind k = options.backend;
  if (k == BackendKind::Auto) {
    if (const char* env = std::getenv("CULUA_BACKEND"); env && *env) k = parse_backend(env);
  }
#if defined(CULUA_HAVE_CUDA)
  std::string why;
  if (k == BackendKind::Auto)
    k = cuda::device_available(&why) ? BackendKind::Cuda : BackendKind::Host;
  if (k == BackendKind::Cuda) {
    if (!cuda::device_available(&why)) {
      fail(ErrorKind::Unsupported,
           "the CUDA backend was requested but no CUDA device is usable: {}", why);
    }
    cuda::keep_device_current(options.owns_threads);
    return cuda::make_backend();
  }
#else
  if (k == BackendKind::Cuda) {
    fail(ErrorKind::Unsupported,
         "the CUDA backend was requested but this culua was built without the CUDA toolkit");
  }
#endif
  uint64_t limit = options.host_memory_limit;
  if (!limit) limit = host_memory_limit_from_environment();
  return host::make_backend(host::HostOptions{limit, host::host_devices_from_environment()});
}

void check_environment() {
  kernels::host::pool_threads();
}

RuntimeOptions engines(RuntimeOptions options) {
  options.make_backend = make;
  options.host_executor = kernels::host::executor();
  return options;
}

RuntimeOptions engines(BackendKind backend) {
  RuntimeOptions options;
  options.backend = backend;
  return engines(std::move(options));
}

bool have_cuda() {
#if defined(CULUA_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

}  // namespace culua::detail::backends
