#include "cuda/scoped.hpp"

#include <array>
#include <atomic>
#include <exception>
#include <mutex>

#include "core/base/error.hpp"
#include "cuda/cublas_api.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/driver_api.hpp"

namespace culua::detail::cuda {

namespace {

constexpr int kMaxDevices = 256;
std::array<std::atomic<CUcontext>, kMaxDevices> g_contexts{};
std::mutex g_retain_mutex;
std::atomic<bool> g_keep_current{false};
// In keep mode (a program that owns its threads), the context a scope left current on this
// thread: while it is the target, a scope needs no driver call at all.
thread_local CUcontext t_kept = nullptr;

// The primary context without throwing: null when the device or the driver cannot give it (*code
// says why, 0 when the driver API itself could not be loaded).
CUcontext find_primary_context(int device, int* code) noexcept {
  *code = 0;
  if (device < 0 || device >= kMaxDevices) {
    *code = CUDA_ERROR_INVALID_DEVICE;
    return nullptr;
  }
  if (CUcontext c = g_contexts[static_cast<size_t>(device)].load(std::memory_order_acquire)) {
    return c;
  }
  const DriverApi* api = nullptr;
  try {
    api = &driver_api();
  } catch (const std::exception&) {
    return nullptr;
  }
  std::lock_guard lock(g_retain_mutex);
  std::atomic<CUcontext>& slot = g_contexts[static_cast<size_t>(device)];
  if (CUcontext c = slot.load(std::memory_order_acquire)) return c;
  CUdevice dev = 0;
  CUcontext c = nullptr;
  CUresult r = api->init(0);
  if (r == CUDA_SUCCESS) r = api->device_get(&dev, device);
  if (r == CUDA_SUCCESS) r = api->primary_ctx_retain(&c, dev);
  if (r != CUDA_SUCCESS) {
    *code = r;
    return nullptr;
  }
  slot.store(c, std::memory_order_release);
  return c;
}

}  // namespace

CUcontext primary_context(int device) {
  int code = 0;
  if (CUcontext c = find_primary_context(device, &code)) return c;
  if (code == 0) driver_api();  // throws why the driver API cannot be used
  const char* name = nullptr;
  const char* description = nullptr;
  driver_error_strings(code, &name, &description);
  fail(ErrorKind::Device, "the context of CUDA device {} cannot be made current: {} ({})", device,
       name, description);
}

DeviceScope::DeviceScope(int device, Health& health) {
  const CUcontext target = primary_context(device);
  const bool keep = g_keep_current.load(std::memory_order_relaxed);
  if (keep && t_kept == target) {
    ok_ = true;
    return;
  }
  const DriverApi& api = driver_api();
  CULUA_CU_CHECK(health, api.ctx_get_current(&previous_));
  if (previous_ != target) {
    CULUA_CU_CHECK(health, api.ctx_set_current(target));
    changed_ = true;
  }
  if (keep) t_kept = target;
  ok_ = true;
}

DeviceScope::DeviceScope(int device, std::nothrow_t) noexcept {
  int code = 0;
  const CUcontext target = find_primary_context(device, &code);
  if (!target) return;
  const bool keep = g_keep_current.load(std::memory_order_relaxed);
  if (keep && t_kept == target) {
    ok_ = true;
    return;
  }
  const DriverApi& api = driver_api();  // loaded: the context was found through it
  if (api.ctx_get_current(&previous_) != CUDA_SUCCESS) return;
  if (previous_ != target) {
    if (api.ctx_set_current(target) != CUDA_SUCCESS) return;
    changed_ = true;
  }
  if (keep) t_kept = target;
  ok_ = true;
}

DeviceScope::~DeviceScope() {
  if (changed_ && !g_keep_current.load(std::memory_order_relaxed)) {
    driver_api().ctx_set_current(previous_);
  }
}

void keep_device_current(bool keep) noexcept {
  g_keep_current.store(keep, std::memory_order_relaxed);
}

namespace {

// Releases `h` with `destroy` on `device` in relaxed capture mode; a failure is cleared and
// otherwise ignored.
template <class F>
void release_on(int device, F&& destroy) noexcept {
  const DeviceScope scope(device, std::nothrow);
  if (!scope.ok()) return;  // the context is gone: nothing can be released
  const RelaxedCaptureMode relaxed;
  destroy();
  cudaGetLastError();
}

}  // namespace

void DestroyStream::operator()(cudaStream_t s) const noexcept {
  release_on(device, [&] { cudaStreamDestroy(s); });
}

void DestroyEvent::operator()(cudaEvent_t e) const noexcept {
  release_on(device, [&] { cudaEventDestroy(e); });
}

void UnloadModule::operator()(CUmodule m) const noexcept {
  release_on(device, [&] { driver_api().module_unload(m); });
}

void DestroyGraph::operator()(cudaGraph_t g) const noexcept {
  release_on(device, [&] { cudaGraphDestroy(g); });
}

void DestroyGraphExec::operator()(cudaGraphExec_t e) const noexcept {
  release_on(device, [&] { cudaGraphExecDestroy(e); });
}

void DestroyMemPool::operator()(cudaMemPool_t p) const noexcept {
  release_on(device, [&] { cudaMemPoolDestroy(p); });
}

void FreePinned::operator()(void* p) const noexcept {
  release_on(device, [&] { cudaFreeHost(p); });
}

// A handle exists only where cuBLAS was loaded: cublas_api() does not throw here.
void DestroyCublas::operator()(cublasContext* h) const noexcept {
  release_on(device, [&] { cublas_api().destroy(h); });
}

}  // namespace culua::detail::cuda
