// Discrete Fourier transforms (cu.fft): numpy.fft's functions on device arrays, computed by the
// backend's FFT (cuFFT, kissfft) as batches of 1-D transforms along one axis at a time. Axes are
// 0-based here; the bindings translate Lua's 1-based ones.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

enum class FftNorm : uint8_t { Backward, Ortho, Forward };

enum class FftFunction : uint8_t { Fft, Ifft, Rfft, Irfft, Hfft, Ihfft };

// The precision a transform of `t` computes in: f32 for f16, bf16, f32 and c64; f64 otherwise.
// Throws Error(Type) for complex input to the real-input transforms (rfft, ihfft).
DType fft_real_type(FftFunction f, DType t);

// One of fft, ifft, rfft, irfft, hfft, ihfft along `axis` (0-based, checked by the caller), with
// n points (n < 0: numpy's default; the input is cropped or zero-padded to the length the
// transform takes). The result is a new contiguous array.
Array fft1(Runtime& rt, FftFunction f, const Array& a, int axis, int64_t n, FftNorm norm,
           Stream* stream = nullptr);

// fftn/ifftn/rfftn/irfftn over `axes` (0-based, distinct) with the lengths `sizes` (-1: numpy's
// default for that axis; the same count as axes).
Array fftn(Runtime& rt, FftFunction f, const Array& a, const std::vector<int>& axes,
           const std::vector<int64_t>& sizes, FftNorm norm, Stream* stream = nullptr);

// fftshift / ifftshift over `axes` (0-based): a roll by n/2 (fftshift) or -(n/2) along each.
Array fftshift(Runtime& rt, const Array& a, const std::vector<int>& axes, bool inverse,
               Stream* stream = nullptr);

// numpy's fftfreq(n, d) and rfftfreq(n, d) as a new device array of `dtype` (f32 or f64), on the
// current device.
Array fftfreq(Runtime& rt, int64_t n, double d, bool real_input, DType dtype,
              Stream* stream = nullptr);

}  // namespace culua::detail
