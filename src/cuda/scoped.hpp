// Scoped CUDA state: owning handles and the device scope.
//
// DeviceScope makes a device current for its lifetime and gives the calling thread back the
// context it had (none included): culua runs on the application's threads when embedded, and an
// application on a host with several GPUs must find its current device as it left it. It works on
// the driver's current context, not through cudaSetDevice: restoring "no context" through the
// runtime would create a context on device 0 (cudaSetDevice initializes the device's context), and
// a driver-API application's own context is restored exactly. Under a scope the runtime API uses
// the scoped device's primary context, the one cudaSetDevice would have made current.
//
// Every backend call that needs a context opens one (a launch, an allocation, a stream or event
// operation, a release): when the device is already current that costs one cuCtxGetCurrent.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <new>

#include "core/base/unique_handle.hpp"

struct cublasContext;  // cublasHandle_t is cublasContext*

namespace culua::detail::cuda {
using detail::UniqueHandle;

struct Health;

// A program that owns its threads (the culua CLI) lets scopes leave the device they made
// current: the next call on that device then changes nothing, and a launch costs no context switch
// back and forth. Embedded (the default), every scope gives the caller its context back.
void keep_device_current(bool keep) noexcept;

// The primary context of `device`, retained on first use and kept for the process (as the CUDA
// runtime keeps it). Throws Error(Device) when the device or the driver cannot give it.
CUcontext primary_context(int device);

class DeviceScope {
 public:
  // Makes `device` current; a failure throws through `health` (naming the driver call).
  DeviceScope(int device, Health& health);
  // For release paths (destructors, deallocation): never throws; ok() says whether `device` is
  // current, and nothing is to be released on it when it is not.
  DeviceScope(int device, std::nothrow_t) noexcept;
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  bool ok() const noexcept { return ok_; }

 private:
  CUcontext previous_ = nullptr;
  bool changed_ = false;
  bool ok_ = false;
};

// Release functors of the owning handles. Each makes its device current (a release on a thread
// without a current context would otherwise make the runtime create device 0's), releases in
// relaxed capture mode (a graph may be captured on this thread) and ignores a failure.
struct DestroyStream {
  int device = 0;
  void operator()(cudaStream_t s) const noexcept;
};
struct DestroyEvent {
  int device = 0;
  void operator()(cudaEvent_t e) const noexcept;
};
struct UnloadModule {
  int device = 0;
  void operator()(CUmodule m) const noexcept;
};
struct DestroyGraph {
  int device = 0;
  void operator()(cudaGraph_t g) const noexcept;
};
struct DestroyGraphExec {
  int device = 0;
  void operator()(cudaGraphExec_t e) const noexcept;
};
// For pools culua created (cudaMemPoolCreate): a device's default pool is never destroyed.
struct DestroyMemPool {
  int device = 0;
  void operator()(cudaMemPool_t p) const noexcept;
};
struct FreePinned {  // cudaHostAlloc'd memory; cudaFreeHost waits for the device
  int device = 0;
  void operator()(void* p) const noexcept;
};
struct DestroyCublas {
  int device = 0;
  void operator()(cublasContext* h) const noexcept;
};

using UniqueStream = UniqueHandle<cudaStream_t, DestroyStream>;
using UniqueEvent = UniqueHandle<cudaEvent_t, DestroyEvent>;
using UniqueModule = UniqueHandle<CUmodule, UnloadModule>;
using UniqueGraph = UniqueHandle<cudaGraph_t, DestroyGraph>;
using UniqueGraphExec = UniqueHandle<cudaGraphExec_t, DestroyGraphExec>;
using UniqueMemPool = UniqueHandle<cudaMemPool_t, DestroyMemPool>;
using UniquePinned = UniqueHandle<void*, FreePinned>;
using UniqueCublas = UniqueHandle<cublasContext*, DestroyCublas>;

}  // namespace culua::detail::cuda
