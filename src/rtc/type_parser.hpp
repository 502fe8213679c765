// The parameter types of run-time compiled kernels, from their C++ spelling: the demangler's and
// what people write in source. Knows nothing of CUDA or Lua.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/model/dtype.hpp"

namespace culua::detail::rtc {

enum class ParamKind : uint8_t { Pointer, Signed, Unsigned, Float, Bool, Complex, Unsupported };
enum class FloatFormat : uint8_t { Half, BFloat16, Single, Double };

struct ParamType {
  ParamKind kind = ParamKind::Unsupported;
  std::string spelling;  // as given, whitespace normalized: "float const*", "unsigned long"
  uint8_t size = 0;      // bytes of the parameter value (8 for pointers)
  uint8_t align = 0;     // its alignment
  FloatFormat format = FloatFormat::Single;  // Float, and the components of Complex
  // Pointers: what they point to.
  bool pointee_const = false;
  bool pointee_void = false;   // void*: any array
  DType element = DType::F32;  // the element dtype (for float4*: F32)
  int vector = 1;              // elements per pointee: float4* -> 4, float* -> 1
  uint8_t pointee_align = 1;   // alignment the address must have (float4*: 16)
  // Unsupported: why, as a sentence fragment ("struct parameters are not supported ...").
  std::string unsupported;
};

// Parses one parameter type. Accepts the demangler's canonical spellings ("float const*",
// "unsigned long long", "__half", "float2", "void (*)(int)") and what people write in source
// ("const float* __restrict__", "size_t", "uint32_t", "half", "cuFloatComplex", "struct Foo*").
// Top-level const, volatile and __restrict__ are ignored. A name it does not know (a struct, a
// user typedef, a template parameter) gives kind Unsupported with a reason.
//   float double __half half __nv_bfloat16 nv_bfloat16 bool char signed/unsigned char short int
//   long, long long (all signed/unsigned spellings), size_t ptrdiff_t intN_t uintN_t
//   float2 double2 cuFloatComplex cuDoubleComplex cuComplex: Complex by value
//   pointers to any of these, to void, and to the CUDA vector types
//   (char|uchar|short|ushort|int|uint|long|ulong|longlong|ulonglong|float|double)(1|2|3|4):
//   Pointer with `element` and `vector` set. Pointers to types without a dtype (unsigned short*,
//   unsigned long*) and pointers to pointers are Unsupported.
ParamType parse_type(std::string_view spelling);

}  // namespace culua::detail::rtc
