// The host backend's FFTs: kissfft's C++ template (kissfft.hh, libkissfft-dev), in float or
// double, the rows of a batch split across the host pool. Lengths with a prime factor above 61 go
// through Bluestein's algorithm over power-of-two kissfft transforms (kissfft alone costs O(n p)
// for a prime factor p). Real transforms run as complex ones.
#pragma once

#include <cstddef>

namespace culua::detail {
struct FftCall;
}  // namespace culua::detail

namespace culua::detail::host {

// Throws Error(Unsupported) naming libkissfft-dev when this build has no kissfft.
void check_host_fft();
// Runs the whole call on the calling thread and the host pool.
void host_fft(const FftCall& c);
// The most host memory host_fft keeps while it runs (core/base/scratch.hpp): its plan and a copy of
// it, with a row's work buffers, per range running at once.
size_t host_fft_scratch_bytes(const FftCall& c);

}  // namespace culua::detail::host
