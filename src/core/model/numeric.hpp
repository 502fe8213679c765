// Element types and value conversions shared by the core, the host kernels and the CUDA kernels.
// Everything here compiles as host code (g++) and as device code (nvcc), so that both backends
// compute bit-identical results from one definition.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define CULUA_HD __host__ __device__
#else
#define CULUA_HD
#endif

namespace culua::detail {

CULUA_HD inline uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

CULUA_HD inline float float_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
#endif
}

// Rounds a double to the nearest small binary float with E exponent and M mantissa bits (ties to
// even), directly from the double so that no intermediate rounding happens.
template <int E, int M>
CULUA_HD inline uint16_t encode_small_float(double x) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr int emin = 1 - bias;
  constexpr uint16_t exp_all_ones = static_cast<uint16_t>(((1 << E) - 1) << M);
  const uint64_t b = bits_of(x);
  const uint16_t sign = static_cast<uint16_t>((b >> 63) << (E + M));
  const uint64_t biased = (b >> 52) & 0x7FF;
  const uint64_t man = b & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {
    return static_cast<uint16_t>(sign | exp_all_ones | (man ? (1u << (M - 1)) : 0u));
  }
  if (biased == 0) return sign;  // zero, or a double subnormal: far below any small float
  int e = static_cast<int>(biased) - 1023;
  if (e < emin) {
    // Subnormal result: value = k * 2^(emin - M); scaling by a power of two is exact.
    const double k = rint(ldexp(fabs(x), M - emin));
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(k));
  }
  const uint64_t full = (uint64_t{1} << 52) | man;
  constexpr int shift = 52 - M;
  uint64_t q = full >> shift;
  const uint64_t rem = full & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  if (q >> (M + 1)) {
    q >>= 1;
    ++e;
  }
  if (e > bias) return static_cast<uint16_t>(sign | exp_all_ones);
  return static_cast<uint16_t>(sign | (static_cast<uint16_t>(e + bias) << M) |
                               static_cast<uint16_t>(q & ((1u << M) - 1)));
}

// A double rounded to the nearest float (ties to even), defined for every double: a plain
// static_cast of a finite value beyond float's range is undefined behaviour in C++. Values from
// FLT_MAX + half an ulp up give infinity (that midpoint ties to even, away from the odd FLT_MAX),
// as IEEE 754, numpy and the GPU's cvt.rn.f32.f64 do; those just above FLT_MAX still give FLT_MAX;
// NaN stays NaN.
CULUA_HD inline float narrow_to_float(double x) {
#if defined(__CUDA_ARCH__)
  return __double2float_rn(x);
#else
  constexpr double overflow = 0x1.ffffffp127;  // (2^25 - 1) * 2^103
  if (x >= overflow) return std::numeric_limits<float>::infinity();
  if (x <= -overflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(x);
#endif
}

// Rounds an integer to `bits` significant bits (ties to even), so that the result converts to a
// double exactly: int64 values past 2^53 would otherwise round twice on their way to a small float.
CULUA_HD inline double round_to_significand(int64_t x, int bits) {
  const uint64_t m = x < 0 ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  int top = 63;
  while (top > 0 && !(m >> top)) --top;
  if (top < bits) return static_cast<double>(x);
  const int shift = top + 1 - bits;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  const double r = ldexp(static_cast<double>(q), shift);
  return x < 0 ? -r : r;
}

// The same for an unsigned 64-bit integer (u64 values from 2^63 up).
CULUA_HD inline double round_to_significand(uint64_t m, int bits) {
  int top = 63;
  while (top > 0 && !(m >> top)) --top;
  if (top < bits) return static_cast<double>(m);
  const int shift = top + 1 - bits;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  return ldexp(static_cast<double>(q), shift);
}

#if defined(__CUDACC__)
// The NaN path of the device's conversions from float to the small floats: a call, so that no
// conversion site holds a copy of the encoder (from_double), and the common path stays a branch
// around it (inlined as a few operations, the fix-up was computed and selected for every element:
// an f16 add ran at 3.7 instead of 4.0 TB/s on the H200).
// A float NaN as from_double encodes it: its sign, all exponent bits, the quiet bit (`quiet_nan`:
// the exponent and quiet bits of the format).
__device__ __noinline__ inline uint16_t nan_to_small_float(float x, uint32_t quiet_nan) {
  return static_cast<uint16_t>(((__float_as_uint(x) >> 16) & 0x8000u) | quiet_nan);
}
#endif

// IEEE 754 binary16.
struct half {
  static constexpr int kSignificand = 11;
  uint16_t bits;
  CULUA_HD static half from_double(double x) { return half{encode_small_float<5, 10>(x)}; }
  // The same rounding as from_double(x) (a float converts to double exactly), with the GPU's
  // conversion instruction on the device; NaN keeps from_double's encoding on both backends.
  CULUA_HD static half from_float(float x) {
#if defined(__CUDA_ARCH__)
    if (x == x) {
      uint16_t b;
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(x));
      return half{b};
    }
    return half{nan_to_small_float(x, 0x7E00u)};
#else
    return from_double(static_cast<double>(x));
#endif
  }
  CULUA_HD float to_float() const {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));  // exact, as below
    if (f == f) return f;
#endif
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exp = (bits >> 10) & 0x1Fu;
    const uint32_t man = bits & 0x3FFu;
    if (exp == 0x1F) return float_from_bits(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
      const float v = static_cast<float>(man) * (1.0f / 16777216.0f);  // man * 2^-24, exact
      return sign ? -v : v;
    }
    return float_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  }
};

// bfloat16: the upper half of a binary32.
struct bfloat16 {
  static constexpr int kSignificand = 8;
  uint16_t bits;
  CULUA_HD static bfloat16 from_double(double x) { return bfloat16{encode_small_float<8, 7>(x)}; }
  CULUA_HD static bfloat16 from_float(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (x == x) {
      uint16_t b;
      asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(x));
      return bfloat16{b};
    }
    return bfloat16{nan_to_small_float(x, 0x7FC0u)};
#else
    return from_double(static_cast<double>(x));
#endif
  }
  CULUA_HD float to_float() const {
    return float_from_bits(static_cast<uint32_t>(bits) << 16);
  }
};

template <class T>
struct alignas(2 * sizeof(T)) complex {
  T re;
  T im;
};
using complex64 = complex<float>;
using complex128 = complex<double>;

template <class T>
struct is_complex_element : std::false_type {};
template <class T>
struct is_complex_element<complex<T>> : std::true_type {};
template <class T>
struct is_small_float : std::bool_constant<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>> {
};

// Float to integer conversion defined the same on both backends: NaN gives 0, values beyond the
// range saturate, others truncate toward zero (what CUDA's cvt.rzi.sat does).
template <class I>
CULUA_HD inline I saturate_to_int(double x) {
  if (x != x) return I{0};
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (x <= lo) return std::numeric_limits<I>::min();
  if (x >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(x);
}

// Widens any real element to the type that holds it exactly for conversion purposes.
template <class From>
CULUA_HD inline auto real_value(From x) {
  if constexpr (is_small_float<From>::value) {
    return x.to_float();
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<int32_t>(x);
  } else {
    return x;
  }
}

// The one conversion rule between element types (astype, copies between dtypes, fills).
template <class To, class From>
CULUA_HD inline To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_element<From>::value) {
    if constexpr (is_complex_element<To>::value) {
      using T = decltype(To{}.re);
      return To{convert<T>(x.re), convert<T>(x.im)};
    } else if constexpr (std::is_same_v<To, bool>) {
      return x.re != 0 || x.im != 0;
    } else {
      return convert<To>(x.re);
    }
  } else if constexpr (is_complex_element<To>::value) {
    using T = decltype(To{}.re);
    return To{convert<T>(x), T{0}};
  } else if constexpr (std::is_same_v<To, bool>) {
    return real_value(x) != 0;
  } else if constexpr (is_small_float<To>::value) {
    if constexpr (std::is_same_v<From, int64_t> || std::is_same_v<From, uint64_t>) {
      return To::from_double(round_to_significand(x, To::kSignificand));
    } else if constexpr (std::is_same_v<From, float>) {
      return To::from_float(x);
    } else {
      return To::from_double(static_cast<double>(real_value(x)));
    }
  } else if constexpr (std::is_integral_v<To>) {
    const auto v = real_value(x);
    if constexpr (std::is_floating_point_v<decltype(v)>) {
      return saturate_to_int<To>(static_cast<double>(v));
    } else {
      return static_cast<To>(v);
    }
  } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) {
    return narrow_to_float(x);
  } else {
    return static_cast<To>(real_value(x));
  }
}

}  // namespace culua::detail
