// The backend factory the front ends call (CLI, embedding API, stock-Lua module, tools): it is
// the one place that knows every backend. Core only sees the Backend interface and the factory
// function in RuntimeOptions.
#pragma once

#include "core/runtime/runtime.hpp"

namespace culua::detail::backends {

// Makes the backend `options` ask for: Auto is $CULUA_BACKEND, else CUDA when a device is usable,
// else the host backend. Throws Error(Unsupported) when CUDA is asked for and cannot be had.
std::shared_ptr<Backend> make(const RuntimeOptions& options);

// `options` with the engines filled in: make_backend (the factory above) and host_executor (the
// built-in kernels on the host pool).
RuntimeOptions engines(RuntimeOptions options = {});
// The same for the default options on `backend`.
RuntimeOptions engines(BackendKind backend);

// Reads $CULUA_HOST_THREADS (the host pool's size, used by host-array math on either backend) now,
// so that a front end names a bad value before anything runs; throws Error(Value) naming it.
void check_environment();

// True when this build has the CUDA backend.
bool have_cuda();

}  // namespace culua::detail::backends
