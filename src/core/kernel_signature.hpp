// Kernel declarations in CUDA source text, and the parameter types of a kernel from their C++
// spelling. Run-time compiled kernels (cu.compile) check every argument against these; this file
// knows nothing of CUDA or Lua, so all of it is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/scalar.hpp"

namespace culua::detail::rtc {

// A __global__ function found in source text.
struct KernelDecl {
  std::string name;  // qualified by its namespaces: "ns::scale"
  bool extern_c = false;
  bool is_template = false;
  std::string template_params;           // the text between `template <` and `>`, trimmed
  std::vector<std::string> param_names;  // "" for an unnamed parameter
  std::vector<std::string>
      param_types;  // the type as written, trimmed ("const float* __restrict__")
  int line = 0;     // 1-based line of the kernel's name
};

// Every __global__ function declared or defined in `source`, in order, each name once (a
// declaration followed by its definition counts once; overloads are listed separately). Comments,
// string and character literals and preprocessor lines are skipped; `extern "C"` applies to one
// declaration or to an `extern "C" { ... }` block; `namespace a { namespace b {` and `namespace
// a::b {` qualify names; attributes such as __launch_bounds__(256) and default arguments are
// skipped.
std::vector<KernelDecl> scan_kernels(std::string_view source);

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

// Splits at top-level commas (not inside <>, (), [] or {}); trims each piece; "" gives {}.
std::vector<std::string> split_top_level(std::string_view list);

// The parameter types of a demangled function name ("void scale<float, 3>(float*, float, int)",
// "saxpy(float, float const*)") or of a function pointer type ("void (*)(float, int)"): the
// pieces of the last top-level parenthesized list. "(void)" and "()" give {}. nullopt when the
// text has no parameter list.
std::optional<std::vector<std::string>> demangled_parameters(std::string_view demangled);

// abi::__cxa_demangle of a symbol; "" when it is not a mangled C++ name (an extern "C" kernel).
std::string demangle(const std::string& symbol);

// The single template argument of a demangled name "probe<void (*)(float, int)>" ->
// "void (*)(float, int)"; nullopt when there is none.
std::optional<std::string> template_argument(std::string_view demangled);

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
