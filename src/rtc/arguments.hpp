// Arguments of run-time compiled kernels: which arrays a pointer parameter takes, and scalar
// values encoded exactly into the bytes of a parameter. Knows nothing of CUDA or Lua.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/model/dtype.hpp"
#include "core/model/scalar.hpp"
#include "rtc/type_parser.hpp"

namespace culua::detail::rtc {

// Pointer parameters: may an array of dtype `t` be passed? void* takes any; float* takes f32;
// char* and unsigned char* take i8, u8 and bool; float2* takes f32 and c64, double2* f64 and
// c128; float4* takes f32 (the address must be 16-byte aligned, checked by the caller).
bool pointer_accepts(const ParamType& p, DType t);
// The same as a bit mask: bit t is set when dtype t is taken (0 for non-pointers).
uint32_t accepted_mask(const ParamType& p);
// The dtypes a pointer parameter takes, for messages: "f32 or c64", "any dtype".
std::string accepted_dtypes(const ParamType& p);

// Writes `v` converted to the scalar parameter type `p` into `out` (p.size bytes), exactly:
//  - integer parameters take integers in range and floats with an integral value in range
//    (2.0 -> 2); 2.5, nan, out-of-range values, booleans and complex values throw;
//  - float parameters take floats (rounded to nearest as C++ does for double -> float; finite
//    values beyond the type's range throw) and integers the type holds exactly (16777217 into
//    float throws);
//  - bool takes booleans and the integers 0 and 1;
//  - complex (float2, double2) takes cu.complex values and real numbers (imaginary part 0), each
//    component converted as for floats.
// Throws Error(Value) or Error(Type); the message starts with `what` ("argument 3 (n: int)").
void encode_param(const ParamType& p, const Scalar& v, void* out, std::string_view what);

}  // namespace culua::detail::rtc
