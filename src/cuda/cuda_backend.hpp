// The CUDA backend: one memory pool per device (cudaMallocFromPoolAsync with the release
// threshold at its maximum, so steady-state allocation never reaches the driver), pinned host
// memory through a reuse pool, non-blocking streams with priorities, and the built-in kernels.
#pragma once

#include <memory>
#include <string>

#include "core/backend/backend.hpp"
#include "cuda/cufft.hpp"

namespace culua::detail::cuda {

// True when a CUDA device and a driver are present; otherwise `why` says what is missing.
// Initializes the driver, but creates no context.
bool device_available(std::string* why);

std::shared_ptr<Backend> make_backend();

// For tests of the error model: launches a kernel that writes through an invalid address.
void launch_fault(Backend& backend, Stream& s);

// For tests of cuFFT's plan cache: its size, hits and misses so far.
FftPlanStats fft_plan_stats(Backend& backend);

}  // namespace culua::detail::cuda
