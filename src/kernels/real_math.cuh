// Real math on float and double for the elementwise operations (namespace rm): one name for both
// types, forwarding to the C library's float and double functions on the host and to CUDA's on
// the device. The CUDA and host libraries differ in the last bits of transcendental functions;
// + - * / and sqrt are correctly rounded on both. Part of the fused kernels' NVRTC prelude, so it
// includes nothing but <cmath> and culua's numeric header.
#pragma once

#include <cmath>

#include "core/model/numeric.hpp"

namespace culua::detail::kernels::rm {

// fn(float) calls ::fnf and fn(double) calls ::fn; CULUA_REAL_BINARY the same for two operands.
#define CULUA_REAL_UNARY(fn)            \
  CULUA_HD inline float fn(float x) {   \
    return ::fn##f(x);                  \
  }                                     \
  CULUA_HD inline double fn(double x) { \
    return ::fn(x);                     \
  }
#define CULUA_REAL_BINARY(fn)                     \
  CULUA_HD inline float fn(float x, float y) {    \
    return ::fn##f(x, y);                         \
  }                                               \
  CULUA_HD inline double fn(double x, double y) { \
    return ::fn(x, y);                            \
  }
CULUA_REAL_UNARY(exp)
CULUA_REAL_UNARY(log)
CULUA_REAL_UNARY(sqrt)
CULUA_REAL_UNARY(sin)
CULUA_REAL_UNARY(cos)
CULUA_REAL_UNARY(tanh)
CULUA_REAL_UNARY(sinh)
CULUA_REAL_UNARY(cosh)
CULUA_REAL_UNARY(tan)
CULUA_REAL_UNARY(log1p)
CULUA_REAL_BINARY(pow)
CULUA_REAL_BINARY(atan2)  // atan2(y, x)
CULUA_REAL_BINARY(hypot)
CULUA_REAL_UNARY(fabs)
CULUA_REAL_UNARY(floor)
CULUA_REAL_BINARY(fmod)
CULUA_REAL_BINARY(copysign)
CULUA_REAL_UNARY(acos)
CULUA_REAL_UNARY(acosh)
CULUA_REAL_UNARY(asin)
CULUA_REAL_UNARY(asinh)
CULUA_REAL_UNARY(atan)
CULUA_REAL_UNARY(atanh)
CULUA_REAL_UNARY(expm1)
CULUA_REAL_UNARY(log2)
CULUA_REAL_UNARY(log10)
CULUA_REAL_UNARY(ceil)
CULUA_REAL_UNARY(trunc)
CULUA_REAL_UNARY(rint)
#undef CULUA_REAL_UNARY
#undef CULUA_REAL_BINARY

}  // namespace culua::detail::kernels::rm
