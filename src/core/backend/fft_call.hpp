// The description of a batch of 1-D FFTs for the backends (cuFFT, kissfft). core/ops/fft.cpp builds
// it: contiguous rows, the transform along each row, no scaling (the core scales afterwards).
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"

namespace culua::detail {

enum class FftKind : uint8_t {
  C2C,  // complex to complex, forward (exp(-2 pi i jk/n)) or inverse (exp(+...), unscaled)
  R2C,  // real to the n/2+1 non-negative frequencies, forward
  C2R,  // n/2+1 Hermitian frequencies to n real values, inverse (unscaled)
};

struct FftCall {
  FftKind kind = FftKind::C2C;
  DType real = DType::F32;  // the precision: F32 (complex rows c64) or F64 (c128)
  bool inverse = false;     // C2C only
  int64_t n = 0;            // the transform's length (the real length for R2C and C2R), > 0
  int64_t batch = 0;        // rows, > 0
  // Rows of n complex (C2C), n real (R2C) or n/2+1 complex (C2R) values. A C2R input is a scratch
  // copy: cuFFT may overwrite it.
  void* in = nullptr;
  // Rows of n complex (C2C), n/2+1 complex (R2C) or n real (C2R) values.
  void* out = nullptr;

  int64_t in_row() const { return kind == FftKind::C2R ? n / 2 + 1 : n; }
  int64_t out_row() const { return kind == FftKind::R2C ? n / 2 + 1 : n; }
  DType in_dtype() const { return kind == FftKind::R2C ? real : complex_of(real); }
  DType out_dtype() const { return kind == FftKind::C2R ? real : complex_of(real); }
  static DType complex_of(DType r) { return r == DType::F64 ? DType::C128 : DType::C64; }
  const char* name() const {
    return kind == FftKind::R2C   ? "rfft"
           : kind == FftKind::C2R ? "irfft"
           : inverse              ? "ifft"
                                  : "fft";
  }
};

}  // namespace culua::detail
