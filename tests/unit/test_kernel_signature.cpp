// The kernel declaration scanner, parameter type parsing (source and demangler spellings), the
// pointer dtype tables and the exact encoding of scalar kernel arguments.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/model/numeric.hpp"
#include "helpers.hpp"
#include "rtc/arguments.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/type_parser.hpp"

using namespace culua::detail;
using namespace culua::detail::rtc;

namespace {

using Strings = std::vector<std::string>;

const KernelDecl* find_kernel(const std::vector<KernelDecl>& ks, const std::string& name) {
  for (const KernelDecl& k : ks) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Strings names_of(const std::vector<KernelDecl>& ks) {
  Strings out;
  for (const KernelDecl& k : ks) out.push_back(k.name);
  return out;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The bytes encode_param writes for `spelling`; the buffer is pre-filled so that writing too
// much shows up.
std::vector<unsigned char> encoded(const std::string& spelling, const Scalar& v) {
  const ParamType p = parse_type(spelling);
  REQUIRE(p.kind != ParamKind::Unsupported);
  unsigned char buf[24];
  std::memset(buf, 0xAB, sizeof buf);
  encode_param(p, v, buf, "argument 1 (x: " + spelling + ")");
  for (size_t k = p.size; k < sizeof buf; ++k) REQUIRE(buf[k] == 0xAB);
  return std::vector<unsigned char>(buf, buf + p.size);
}

template <class T>
std::vector<unsigned char> bytes_of(T v) {
  std::vector<unsigned char> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  return out;
}

template <class T>
T encoded_as(const std::string& spelling, const Scalar& v) {
  const std::vector<unsigned char> b = encoded(spelling, v);
  REQUIRE(b.size() == sizeof(T));
  T out;
  std::memcpy(&out, b.data(), sizeof out);
  return out;
}

std::string encode_message(const std::string& spelling, const Scalar& v,
                           const std::string& what = "argument 3 (n: int)") {
  const ParamType p = parse_type(spelling);
  unsigned char buf[24];
  return test::error_message_of([&] { encode_param(p, v, buf, what); });
}

ErrorKind encode_error(const std::string& spelling, const Scalar& v) {
  const ParamType p = parse_type(spelling);
  unsigned char buf[24];
  return test::error_kind_of([&] { encode_param(p, v, buf, "argument 1"); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// scan_kernels

TEST_CASE("scan_kernels: extern \"C\" saxpy with named parameters and its line",
          "[kernel_signature]") {
  const char* src = R"(#include <cuda_fp16.h>

extern "C" __global__ void saxpy(float a, const float* __restrict__ x,
                                 float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(ks.size() == 1);
  const KernelDecl& k = ks[0];
  CHECK(k.name == "saxpy");
  CHECK(k.extern_c);
  CHECK_FALSE(k.is_template);
  CHECK(k.template_params.empty());
  CHECK(k.line == 3);
  CHECK(k.param_names == Strings{"a", "x", "y", "n"});
  CHECK(k.param_types ==
        Strings{"float", "const float* __restrict__", "float* __restrict__", "int"});
}

TEST_CASE("scan_kernels: templates, with nested angle brackets", "[kernel_signature]") {
  const char* src = R"(
template <typename T, int N>
__global__ void scale(T* data, T factor, int n) {}

template <typename T, template <class> class Alloc = std::allocator, bool B = (3 > 2)>
__global__ void nested(T* p) {}

template <class T> __global__ void one_line(T v) {}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(names_of(ks) == Strings{"scale", "nested", "one_line"});
  CHECK(ks[0].is_template);
  CHECK(ks[0].template_params == "typename T, int N");
  CHECK(ks[0].param_types == Strings{"T*", "T", "int"});
  CHECK(ks[0].param_names == Strings{"data", "factor", "n"});
  CHECK(ks[0].line == 3);
  CHECK_FALSE(ks[0].extern_c);
  CHECK(ks[1].template_params ==
        "typename T, template <class> class Alloc = std::allocator, bool B = (3 > 2)");
  CHECK(ks[1].param_types == Strings{"T*"});
  CHECK(ks[2].is_template);
  CHECK(ks[2].template_params == "class T");
  CHECK(ks[2].param_names == Strings{"v"});
  CHECK(ks[2].param_types == Strings{"T"});
}

TEST_CASE("scan_kernels: explicit instantiations and specializations add no kernel",
          "[kernel_signature]") {
  const char* src = R"(
template <class T> __global__ void fill(T* p, T v, int n) {}
template __global__ void fill<float>(float*, float, int);
template <> __global__ void fill<double>(double* p, double v, int n) {}
extern template __global__ void fill<int>(int*, int, int);
__global__ void after(int n) {}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(names_of(ks) == Strings{"fill", "after"});
  CHECK(ks[0].param_types == Strings{"T*", "T", "int"});
}

TEST_CASE("scan_kernels: namespaces qualify names, anonymous ones do not", "[kernel_signature]") {
  const char* src = R"(
namespace a {
__global__ void k1(int) {}
namespace b {
__global__ void k2(int) {}
}  // namespace b
__global__ void k3(int) {}
}
namespace c::d {
__global__ void k4(int) {}
}
namespace {
__global__ void k5(int) {}
namespace e { __global__ void k6(int) {} }
}
namespace f { inline namespace v1 { __global__ void k7(int) {} } }
namespace g = a::b;
using namespace a;
struct S { int x; void method() { if (x) { x = 1; } } };
__global__ void k8(int) {}
namespace a { __global__ void k9(int); }
__global__ void a :: k9(int n) {}
__global__ void a::k10(std :: size_t n) {}
)";
  const auto ks = scan_kernels(src);
  CHECK(names_of(ks) == Strings{"a::k1", "a::b::k2", "a::k3", "c::d::k4", "k5", "e::k6",
                                "f::v1::k7", "k8", "a::k9", "a::k10"});
  CHECK(find_kernel(ks, "a::k9")->param_names == Strings{"n"});
  CHECK(find_kernel(ks, "a::k10")->param_types == Strings{"std::size_t"});
}

TEST_CASE("scan_kernels: extern \"C\" blocks, and extern \"C++\" inside them",
          "[kernel_signature]") {
  const char* src = R"(
extern "C" {
__global__ void c1(float* p) {}
namespace n { __global__ void c2(float* p) {} }
extern "C++" { __global__ void cpp1(float* p) {} }
__global__ void c3(float* p) {}
}
__global__ void cpp2(float* p) {}
extern "C" __global__ void c4(float* p);
extern "C++" __global__ void cpp3(float* p) {}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(names_of(ks) == Strings{"c1", "n::c2", "cpp1", "c3", "cpp2", "c4", "cpp3"});
  CHECK(find_kernel(ks, "c1")->extern_c);
  CHECK(find_kernel(ks, "n::c2")->extern_c);
  CHECK_FALSE(find_kernel(ks, "cpp1")->extern_c);
  CHECK(find_kernel(ks, "c3")->extern_c);
  CHECK_FALSE(find_kernel(ks, "cpp2")->extern_c);
  CHECK(find_kernel(ks, "c4")->extern_c);
  CHECK_FALSE(find_kernel(ks, "cpp3")->extern_c);
}

TEST_CASE("scan_kernels: comments, strings, characters and preprocessor lines are skipped",
          "[kernel_signature]") {
  const char* src = R"SRC(
// __global__ void in_line_comment(int) {}
/* __global__ void in_block_comment(int) {}
   __global__ void still_in_comment(int) {} */
// a comment continued \
__global__ void spliced_comment(int) {}
#define KERNEL(name) __global__ void name(int n)
#define LONG_MACRO \
  __global__ void in_macro(int) {}
#if 0 /* __global__ void in_directive_comment(int) {}
*/
#endif
#include "__global__ void in_include(int).h"
const char* s = "__global__ void in_string(int) {}";
const char* e = "escaped \" __global__ void in_escaped_string(int) {}";
const char* r = R"(
__global__ void in_raw_string(int) {}
)";
const char* rd = R"delim( )" __global__ void in_delimited_raw(int) {} )delim";
const char* u = u8"__global__ void in_u8_string(int)";
char q = '"';
int sep = 1'000'000;
__global__ void real_one(int n) {}
)SRC";
  const auto ks = scan_kernels(src);
  REQUIRE(names_of(ks) == Strings{"real_one"});
  CHECK(ks[0].line == 23);
}

TEST_CASE("scan_kernels: attributes and specifiers around the name", "[kernel_signature]") {
  const char* src = R"(
__global__ void __launch_bounds__(256, 2) lb1(float* p) {}
__launch_bounds__(128) __global__ void lb2(float* p) {}
static __global__ void st(float* p) {}
inline __global__ void in(float* p) {}
__global__ __noinline__ void ni(float* p) {}
static __forceinline__ __global__ void fi(float* p) {}
void __global__ vg(float* p) {}
__global__ void __launch_bounds__(MAX_THREADS(4), (1 + 1)) lb3(float* p) {}
[[nodiscard]] __global__ void attr([[maybe_unused]] float* p) {}
__global__ void __attribute__((noinline)) gattr(float* p) {}
)";
  const auto ks = scan_kernels(src);
  CHECK(names_of(ks) ==
        Strings{"lb1", "lb2", "st", "in", "ni", "fi", "vg", "lb3", "attr", "gattr"});
  for (const KernelDecl& k : ks) {
    CHECK(k.param_names.size() == 1);
    CHECK(k.param_names.back() == "p");
  }
}

TEST_CASE("scan_kernels: multi-line declarations, default arguments, unnamed and void parameters",
          "[kernel_signature]") {
  const char* src = R"(
__global__ void
multi_line(
    const float*
        x,   // the input
    float* /* the output */ y,
    unsigned
    int n)
{
}
__global__ void defaults(int n = 4, float s = f(1, 2), int m = sizeof(int)) {}
__global__ void unnamed(float*, unsigned int, const T, long long, std::size_t, struct Foo) {}
__global__ void none(void) {}
__global__ void empty() {}
__global__ void arrays(float a[], int b[4]) {}
__global__ void fptr(void (*callback)(int, float), int) {}
__global__ void refs(float& r, const int& c) {}
__global__ void tmpl_arg(Pair<int, float> p, int n) {}
__global__ void param_attr([[maybe_unused]] float* p, const __grid_constant__ Params q) {}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(ks.size() == 10);
  const KernelDecl* k = find_kernel(ks, "multi_line");
  REQUIRE(k != nullptr);
  CHECK(k->line == 3);
  CHECK(k->param_types == Strings{"const float*", "float*", "unsigned int"});
  CHECK(k->param_names == Strings{"x", "y", "n"});

  k = find_kernel(ks, "defaults");
  CHECK(k->param_types == Strings{"int", "float", "int"});
  CHECK(k->param_names == Strings{"n", "s", "m"});

  k = find_kernel(ks, "unnamed");
  CHECK(k->param_types ==
        Strings{"float*", "unsigned int", "const T", "long long", "std::size_t", "struct Foo"});
  CHECK(k->param_names == Strings{"", "", "", "", "", ""});

  CHECK(find_kernel(ks, "none")->param_types.empty());
  CHECK(find_kernel(ks, "none")->param_names.empty());
  CHECK(find_kernel(ks, "empty")->param_types.empty());

  k = find_kernel(ks, "arrays");
  CHECK(k->param_types == Strings{"float[]", "int[4]"});
  CHECK(k->param_names == Strings{"a", "b"});

  k = find_kernel(ks, "fptr");
  CHECK(k->param_types == Strings{"void (*)(int, float)", "int"});
  CHECK(k->param_names == Strings{"callback", ""});

  k = find_kernel(ks, "refs");
  CHECK(k->param_types == Strings{"float&", "const int&"});
  CHECK(k->param_names == Strings{"r", "c"});

  k = find_kernel(ks, "tmpl_arg");
  CHECK(k->param_types == Strings{"Pair<int, float>", "int"});
  CHECK(k->param_names == Strings{"p", "n"});

  k = find_kernel(ks, "param_attr");
  CHECK(k->param_types == Strings{"float*", "const __grid_constant__ Params"});
  CHECK(k->param_names == Strings{"p", "q"});
}

TEST_CASE("scan_kernels: a declaration then its definition count once, overloads twice",
          "[kernel_signature]") {
  const char* src = R"(
__global__ void k(float*, const float *, int);
__global__ void other(int n);

__global__ void k(float* out, const float* in, int n) {
}

__global__ void over(float* p) {}
__global__ void over(double* p) {}
extern "C" __global__ void linked(int);
__global__ void linked(int n) {}
)";
  const auto ks = scan_kernels(src);
  REQUIRE(names_of(ks) == Strings{"k", "other", "over", "over", "linked"});
  CHECK(ks[0].line == 2);
  CHECK(ks[0].param_names == Strings{"out", "in", "n"});
  CHECK(ks[0].param_types == Strings{"float*", "const float *", "int"});
  CHECK(ks[2].param_types == Strings{"float*"});
  CHECK(ks[3].param_types == Strings{"double*"});
  CHECK(ks[4].extern_c);
  CHECK(ks[4].param_names == Strings{"n"});
}

TEST_CASE("scan_kernels: device functions, host code and malformed text", "[kernel_signature]") {
  CHECK(scan_kernels("").empty());
  CHECK(scan_kernels("__device__ float sq(float x) { return x * x; }").empty());
  CHECK(scan_kernels("__global__").empty());
  CHECK(scan_kernels("__global__ void").empty());
  CHECK(scan_kernels("__global__ void broken(int n").empty());
  CHECK(scan_kernels("/* unterminated __global__ void f(int)").empty());
  CHECK(scan_kernels("const char* s = \"unterminated __global__ void f(int)").empty());
  CHECK(scan_kernels("}}} __global__ void after_stray_braces(int) {}")[0].name ==
        "after_stray_braces");
  const auto ks = scan_kernels(
      "__device__ int g = 3;\r\n__global__ void crlf(int n)\r\n{ }\r\n__global__ void two() {}");
  REQUIRE(names_of(ks) == Strings{"crlf", "two"});
  CHECK(ks[0].line == 2);
  CHECK(ks[1].line == 4);
}

// ---------------------------------------------------------------------------------------------
// split_top_level, demangled_parameters, demangle, template_argument

TEST_CASE("split_top_level", "[kernel_signature]") {
  CHECK(split_top_level("").empty());
  CHECK(split_top_level("   ").empty());
  CHECK(split_top_level("int") == Strings{"int"});
  CHECK(split_top_level(" float* ,  int , double ") == Strings{"float*", "int", "double"});
  CHECK(split_top_level("pair<int, float>, void (*)(int, int), a[f(1, 2)], {1, 2}") ==
        Strings{"pair<int, float>", "void (*)(int, int)", "a[f(1, 2)]", "{1, 2}"});
  CHECK(split_top_level("a<b<c, d>>, e") == Strings{"a<b<c, d>>", "e"});
}

TEST_CASE("demangle and demangled_parameters on real symbols", "[kernel_signature]") {
  CHECK(demangle("_Z5scaleIfLi3EEvPT_S0_i") == "void scale<float, 3>(float*, float, int)");
  CHECK(demangle("saxpy") == "");
  CHECK(demangle("i") == "");  // a type code, not a function name
  CHECK(demangle("_Z") == "");
  CHECK(demangle("_Zgarbage!") == "");
  CHECK(demangle("_ZN2ns1kEPfi") == "ns::k(float*, int)");

  const std::string plain = demangle("_Z5plainPKdP13__nv_bfloat16bcalt");
  CHECK(plain ==
        "plain(double const*, __nv_bfloat16*, bool, char, signed char, long, unsigned short)");
  CHECK(demangled_parameters(plain) == Strings{"double const*", "__nv_bfloat16*", "bool", "char",
                                               "signed char", "long", "unsigned short"});

  CHECK(demangled_parameters("void scale<float, 3>(float*, float, int)") ==
        Strings{"float*", "float", "int"});
  CHECK(demangled_parameters("saxpy(float, float const*)") == Strings{"float", "float const*"});
  CHECK(demangled_parameters("k()") == Strings{});
  CHECK(demangled_parameters("k(void)") == Strings{});
  CHECK(demangled_parameters("void (*)(float, int)") == Strings{"float", "int"});
  CHECK(demangled_parameters("(anonymous namespace)::k(int, float*)") == Strings{"int", "float*"});
  CHECK(demangled_parameters("void k<(3>2)>(int)") == Strings{"int"});
  CHECK_FALSE(demangled_parameters("saxpy").has_value());
  CHECK_FALSE(demangled_parameters("").has_value());
}

TEST_CASE("the signature probe: template argument, then the function pointer's parameters",
          "[kernel_signature]") {
  const std::string probe = demangle("_Z21culua_signature_probeIPFvfPKfPfm6__half6float2yEEvT_");
  const std::string fptr =
      "void (*)(float, float const*, float*, unsigned long, __half, float2, unsigned long long)";
  REQUIRE(probe == "void culua_signature_probe<" + fptr + ">(" + fptr + ")");
  const auto arg = template_argument(probe);
  REQUIRE(arg.has_value());
  CHECK(*arg == fptr);
  const auto params = demangled_parameters(*arg);
  REQUIRE(params.has_value());
  CHECK(*params == Strings{"float", "float const*", "float*", "unsigned long", "__half", "float2",
                           "unsigned long long"});

  // Each parses to what the kernel takes.
  std::vector<ParamKind> kinds;
  for (const std::string& p : *params) kinds.push_back(parse_type(p).kind);
  CHECK(kinds == std::vector<ParamKind>{ParamKind::Float, ParamKind::Pointer, ParamKind::Pointer,
                                        ParamKind::Unsigned, ParamKind::Float, ParamKind::Complex,
                                        ParamKind::Unsigned});
  // The whole probe's parameter is the function pointer itself.
  CHECK(demangled_parameters(probe) == Strings{fptr});
}

TEST_CASE("template_argument", "[kernel_signature]") {
  CHECK(template_argument("probe<void (*)(float, int)>") == "void (*)(float, int)");
  CHECK(template_argument("probe<int>(int)") == "int");
  CHECK(template_argument("ns::probe<pair<int, float> >(int)") == "pair<int, float>");
  CHECK(template_argument("probe<(1>2)>") == "(1>2)");
  CHECK_FALSE(template_argument("probe(int)").has_value());
  CHECK_FALSE(template_argument("void scale<float, 3>(float*, float, int)").has_value());
  CHECK_FALSE(template_argument("probe<>()").has_value());
  CHECK_FALSE(template_argument("").has_value());
}

// ---------------------------------------------------------------------------------------------
// parse_type

namespace {

struct ScalarCase {
  const char* spelling;
  ParamKind kind;
  int size;
};

}  // namespace

TEST_CASE("parse_type: scalar spellings of the demangler and of source", "[kernel_signature]") {
  const ScalarCase cases[] = {
      {"char", ParamKind::Signed, 1},
      {"signed char", ParamKind::Signed, 1},
      {"unsigned char", ParamKind::Unsigned, 1},
      {"char unsigned", ParamKind::Unsigned, 1},
      {"short", ParamKind::Signed, 2},
      {"short int", ParamKind::Signed, 2},
      {"signed short", ParamKind::Signed, 2},
      {"unsigned short", ParamKind::Unsigned, 2},
      {"unsigned short int", ParamKind::Unsigned, 2},
      {"int", ParamKind::Signed, 4},
      {"signed", ParamKind::Signed, 4},
      {"signed int", ParamKind::Signed, 4},
      {"unsigned", ParamKind::Unsigned, 4},
      {"unsigned int", ParamKind::Unsigned, 4},
      {"long", ParamKind::Signed, 8},
      {"long int", ParamKind::Signed, 8},
      {"unsigned long", ParamKind::Unsigned, 8},
      {"long unsigned int", ParamKind::Unsigned, 8},
      {"long long", ParamKind::Signed, 8},
      {"long long int", ParamKind::Signed, 8},
      {"unsigned long long", ParamKind::Unsigned, 8},
      {"unsigned long long int", ParamKind::Unsigned, 8},
      {"int8_t", ParamKind::Signed, 1},
      {"uint8_t", ParamKind::Unsigned, 1},
      {"int16_t", ParamKind::Signed, 2},
      {"uint16_t", ParamKind::Unsigned, 2},
      {"int32_t", ParamKind::Signed, 4},
      {"std::int32_t", ParamKind::Signed, 4},
      {"::uint32_t", ParamKind::Unsigned, 4},
      {"int64_t", ParamKind::Signed, 8},
      {"uint64_t", ParamKind::Unsigned, 8},
      {"size_t", ParamKind::Unsigned, 8},
      {"std::size_t", ParamKind::Unsigned, 8},
      {"ptrdiff_t", ParamKind::Signed, 8},
      {"intptr_t", ParamKind::Signed, 8},
      {"uintptr_t", ParamKind::Unsigned, 8},
      {"bool", ParamKind::Bool, 1},
      {"float", ParamKind::Float, 4},
      {"double", ParamKind::Float, 8},
      {"__half", ParamKind::Float, 2},
      {"half", ParamKind::Float, 2},
      {"__nv_bfloat16", ParamKind::Float, 2},
      {"nv_bfloat16", ParamKind::Float, 2},
      {"float2", ParamKind::Complex, 8},
      {"cuFloatComplex", ParamKind::Complex, 8},
      {"cuComplex", ParamKind::Complex, 8},
      {"double2", ParamKind::Complex, 16},
      {"cuDoubleComplex", ParamKind::Complex, 16},
      {"const int", ParamKind::Signed, 4},
      {"int const", ParamKind::Signed, 4},
      {"volatile unsigned", ParamKind::Unsigned, 4},
      {"const __grid_constant__ float", ParamKind::Float, 4},
  };
  for (const ScalarCase& c : cases) {
    INFO(c.spelling);
    const ParamType p = parse_type(c.spelling);
    CHECK(p.kind == c.kind);
    CHECK(int(p.size) == c.size);
    CHECK(int(p.align) == c.size);
    CHECK(p.unsupported.empty());
  }
  CHECK(parse_type("float").format == FloatFormat::Single);
  CHECK(parse_type("double").format == FloatFormat::Double);
  CHECK(parse_type("__half").format == FloatFormat::Half);
  CHECK(parse_type("nv_bfloat16").format == FloatFormat::BFloat16);
  CHECK(parse_type("float2").format == FloatFormat::Single);
  CHECK(parse_type("cuDoubleComplex").format == FloatFormat::Double);
}

TEST_CASE("parse_type: spellings are whitespace-normalized", "[kernel_signature]") {
  CHECK(parse_type("  float   const  *  ").spelling == "float const*");
  CHECK(parse_type("const float * __restrict__").spelling == "const float* __restrict__");
  CHECK(parse_type("float*const").spelling == "float* const");
  CHECK(parse_type("unsigned\n long").spelling == "unsigned long");
  CHECK(parse_type("void(*)(float,int)").spelling == "void (*)(float, int)");
  CHECK(parse_type("std :: size_t").spelling == "std::size_t");
}

TEST_CASE("parse_type: pointers and what they point to", "[kernel_signature]") {
  struct Case {
    const char* spelling;
    DType element;
    int vector;
    int align;
    bool is_const;
  };
  const Case cases[] = {
      {"float*", DType::F32, 1, 4, false},
      {"float const*", DType::F32, 1, 4, true},
      {"const float* __restrict__", DType::F32, 1, 4, true},
      {"float* const", DType::F32, 1, 4, false},
      {"double const*", DType::F64, 1, 8, true},
      {"__half*", DType::F16, 1, 2, false},
      {"half const*", DType::F16, 1, 2, true},
      {"__nv_bfloat16*", DType::BF16, 1, 2, false},
      {"char*", DType::I8, 1, 1, false},
      {"signed char*", DType::I8, 1, 1, false},
      {"unsigned char*", DType::U8, 1, 1, false},
      {"short*", DType::I16, 1, 2, false},
      {"int*", DType::I32, 1, 4, false},
      {"int const*", DType::I32, 1, 4, true},
      {"unsigned int*", DType::U32, 1, 4, false},
      {"unsigned*", DType::U32, 1, 4, false},
      {"long*", DType::I64, 1, 8, false},
      {"long long*", DType::I64, 1, 8, false},
      {"int8_t*", DType::I8, 1, 1, false},
      {"uint8_t*", DType::U8, 1, 1, false},
      {"int16_t*", DType::I16, 1, 2, false},
      {"std::int32_t*", DType::I32, 1, 4, false},
      {"uint32_t*", DType::U32, 1, 4, false},
      {"int64_t*", DType::I64, 1, 8, false},
      {"ptrdiff_t*", DType::I64, 1, 8, false},
      {"bool*", DType::Bool, 1, 1, false},
      // u16 and u64.
      {"unsigned short*", DType::U16, 1, 2, false},
      {"uint16_t const*", DType::U16, 1, 2, true},
      {"unsigned long*", DType::U64, 1, 8, false},
      {"unsigned long long const*", DType::U64, 1, 8, true},
      {"uint64_t*", DType::U64, 1, 8, false},
      {"size_t*", DType::U64, 1, 8, false},
      {"ushort2*", DType::U16, 2, 4, false},
      {"ulonglong2*", DType::U64, 2, 16, false},
      {"float[]", DType::F32, 1, 4, false},
      {"const int[4]", DType::I32, 1, 4, true},
      {"float2*", DType::F32, 2, 8, false},
      {"cuFloatComplex const*", DType::F32, 2, 8, true},
      {"double2*", DType::F64, 2, 16, false},
      {"cuDoubleComplex*", DType::F64, 2, 16, false},
      // CUDA's vector types and their alignments.
      {"char1*", DType::I8, 1, 1, false},
      {"char2*", DType::I8, 2, 2, false},
      {"char3*", DType::I8, 3, 1, false},
      {"char4*", DType::I8, 4, 4, false},
      {"uchar4*", DType::U8, 4, 4, false},
      {"short2*", DType::I16, 2, 4, false},
      {"short3*", DType::I16, 3, 2, false},
      {"short4*", DType::I16, 4, 8, false},
      {"int1*", DType::I32, 1, 4, false},
      {"int2*", DType::I32, 2, 8, false},
      {"int3*", DType::I32, 3, 4, false},
      {"int4*", DType::I32, 4, 16, false},
      {"uint2*", DType::U32, 2, 8, false},
      {"uint4 const*", DType::U32, 4, 16, true},
      {"long2*", DType::I64, 2, 16, false},
      {"long3*", DType::I64, 3, 8, false},
      {"long4*", DType::I64, 4, 32, false},
      {"longlong2*", DType::I64, 2, 16, false},
      {"longlong4*", DType::I64, 4, 32, false},
      {"float1*", DType::F32, 1, 4, false},
      {"float3*", DType::F32, 3, 4, false},
      {"float4*", DType::F32, 4, 16, false},
      {"double1*", DType::F64, 1, 8, false},
      {"double3*", DType::F64, 3, 8, false},
      {"double4*", DType::F64, 4, 32, false},
      {"double4_16a*", DType::F64, 4, 16, false},
      {"double4_32a*", DType::F64, 4, 32, false},
      {"longlong4_16a*", DType::I64, 4, 16, false},
  };
  for (const Case& c : cases) {
    INFO(c.spelling);
    const ParamType p = parse_type(c.spelling);
    REQUIRE(p.kind == ParamKind::Pointer);
    CHECK(int(p.size) == 8);
    CHECK(int(p.align) == 8);
    CHECK_FALSE(p.pointee_void);
    CHECK(p.element == c.element);
    CHECK(p.vector == c.vector);
    CHECK(int(p.pointee_align) == c.align);
    CHECK(p.pointee_const == c.is_const);
  }
  for (const char* s : {"void*", "void const*", "const void* __restrict__", "volatile void*"}) {
    INFO(s);
    const ParamType p = parse_type(s);
    REQUIRE(p.kind == ParamKind::Pointer);
    CHECK(p.pointee_void);
    CHECK(int(p.pointee_align) == 1);
  }
  CHECK(parse_type("void const*").pointee_const);
  CHECK_FALSE(parse_type("void*").pointee_const);
}

TEST_CASE("parse_type: unsupported types say why", "[kernel_signature]") {
  struct Case {
    const char* spelling;
    const char* reason;  // a part of the reason
  };
  const Case cases[] = {
      {"struct Foo", "struct parameters are not supported: pass the fields as separate parameters"},
      {"Foo", "'Foo' is not a type culua knows; struct parameters are not supported"},
      {"T", "'T' is not a type culua knows"},
      {"Foo*", "'Foo' is not a type culua knows: declare the parameter as void*"},
      {"struct Foo*", "pointers to structs are not supported: declare the parameter as void*"},
      {"std::complex<float>*", "'std::complex<float>' is not a type culua knows"},
      {"float&", "reference parameters are not supported"},
      {"int const&", "reference parameters are not supported"},
      {"float&&", "reference parameters are not supported"},
      {"void (*)(int)", "function pointer parameters are not supported"},
      {"void (*)(float, float const*, float*, unsigned long, __half, float2, unsigned long long)",
       "function pointer parameters are not supported"},
      {"float (*)[4]", "pointers to arrays are not supported"},
      {"float**", "pointers to pointers are not supported"},
      {"float*[]", "pointers to pointers are not supported"},
      {"int[2][3]", "multi-dimensional array parameters are not supported"},
      {"float4", "vector types by value are not supported"},
      {"int2", "vector types by value are not supported"},
      {"void", "void is not a parameter type"},
      {"long double", "long double is not supported"},
      {"...", "variadic"},
      {"", "empty"},
      {"float int", "is not a valid type"},
      {"unsigned float", "is not a valid type"},
      {"long short", "is not a valid type"},
      {"long long long", "is not a valid type"},
      {"signed unsigned", "is not a valid type"},
      {"unsigned size_t", "is not a valid type"},
      {"float x", "is not a valid type"},
      {"const", "is not a valid type"},
      {"float* int", "is not a valid type"},
  };
  for (const Case& c : cases) {
    INFO(c.spelling);
    const ParamType p = parse_type(c.spelling);
    CHECK(p.kind == ParamKind::Unsupported);
    CHECK_THAT(p.unsupported, Catch::Contains(c.reason));
    CHECK(int(p.size) == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// pointer_accepts, accepted_dtypes

TEST_CASE("pointer_accepts and accepted_dtypes", "[kernel_signature]") {
  constexpr DType kAll[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                            DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                            DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};
  struct Case {
    const char* spelling;
    std::vector<DType> accepted;
    const char* text;
  };
  const Case cases[] = {
      {"float*", {DType::F32}, "f32"},
      {"float const*", {DType::F32}, "f32"},
      {"double*", {DType::F64}, "f64"},
      {"__half*", {DType::F16}, "f16"},
      {"__nv_bfloat16*", {DType::BF16}, "bf16"},
      {"char*", {DType::I8, DType::U8, DType::Bool}, "i8, u8 or bool"},
      {"signed char*", {DType::I8, DType::U8, DType::Bool}, "i8, u8 or bool"},
      {"unsigned char const*", {DType::I8, DType::U8, DType::Bool}, "i8, u8 or bool"},
      {"short*", {DType::I16}, "i16"},
      {"int*", {DType::I32}, "i32"},
      {"unsigned int*", {DType::U32}, "u32"},
      {"unsigned short*", {DType::U16}, "u16"},
      {"uint64_t const*", {DType::U64}, "u64"},
      {"long*", {DType::I64}, "i64"},
      {"long long*", {DType::I64}, "i64"},
      {"bool*", {DType::Bool}, "bool"},
      {"float2*", {DType::F32, DType::C64}, "f32 or c64"},
      {"cuFloatComplex*", {DType::F32, DType::C64}, "f32 or c64"},
      {"double2*", {DType::F64, DType::C128}, "f64 or c128"},
      {"cuDoubleComplex*", {DType::F64, DType::C128}, "f64 or c128"},
      {"float4*", {DType::F32}, "f32"},
      {"double4*", {DType::F64}, "f64"},
      {"int4*", {DType::I32}, "i32"},
      {"char4*", {DType::I8}, "i8"},
      {"uchar2*", {DType::U8}, "u8"},
      {"void*",
       {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::I16, DType::I32,
        DType::I64, DType::U8, DType::U32, DType::Bool, DType::C64, DType::C128, DType::U16,
        DType::U64},
       "any dtype"},
  };
  for (const Case& c : cases) {
    INFO(c.spelling);
    const ParamType p = parse_type(c.spelling);
    REQUIRE(p.kind == ParamKind::Pointer);
    for (DType t : kAll) {
      INFO(name(t));
      const bool expected = std::find(c.accepted.begin(), c.accepted.end(), t) != c.accepted.end();
      CHECK(pointer_accepts(p, t) == expected);
    }
    CHECK(accepted_dtypes(p) == c.text);
  }
  for (const char* s : {"float", "int", "float2", "unsigned short", "Foo"}) {
    INFO(s);
    const ParamType p = parse_type(s);
    for (DType t : kAll) CHECK_FALSE(pointer_accepts(p, t));
    CHECK(accepted_dtypes(p).empty());
  }
}

// ---------------------------------------------------------------------------------------------
// encode_param

TEST_CASE("encode_param: signed integers, exact at the edges", "[kernel_signature]") {
  CHECK(encoded_as<int32_t>("int", Scalar::integer(2147483647)) == 2147483647);
  CHECK(encoded_as<int32_t>("int", Scalar::integer(-2147483648LL)) == INT32_MIN);
  CHECK(encoded_as<int32_t>("int", Scalar::real(2.0)) == 2);
  CHECK(encoded_as<int32_t>("int", Scalar::real(-0.0)) == 0);
  CHECK(encoded_as<int32_t>("int", Scalar::real(2147483647.0)) == 2147483647);
  CHECK(encoded_as<int32_t>("int", Scalar::real(-2147483648.0)) == INT32_MIN);
  CHECK(encoded("int", Scalar::integer(-2)) == bytes_of<int32_t>(-2));
  CHECK(encode_error("int", Scalar::integer(2147483648LL)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::integer(-2147483649LL)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(2147483648.0)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(-2147483649.0)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(2.5)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(kNaN)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(kInf)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::real(-kInf)) == ErrorKind::Value);
  CHECK(encode_error("int", Scalar::boolean(true)) == ErrorKind::Type);
  CHECK(encode_error("int", Scalar::complex(1, 0)) == ErrorKind::Type);

  CHECK(encoded_as<int8_t>("char", Scalar::integer(127)) == 127);
  CHECK(encoded_as<int8_t>("signed char", Scalar::integer(-128)) == -128);
  CHECK(encode_error("signed char", Scalar::integer(128)) == ErrorKind::Value);
  CHECK(encode_error("char", Scalar::integer(-129)) == ErrorKind::Value);
  CHECK(encoded_as<int16_t>("short", Scalar::integer(-32768)) == -32768);
  CHECK(encoded_as<int16_t>("int16_t", Scalar::real(32767.0)) == 32767);
  CHECK(encode_error("short", Scalar::integer(32768)) == ErrorKind::Value);

  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  CHECK(encoded_as<int64_t>("long", Scalar::integer(hi)) == hi);
  CHECK(encoded_as<int64_t>("long long", Scalar::integer(lo)) == lo);
  CHECK(encoded_as<int64_t>("int64_t", Scalar::real(-9223372036854775808.0)) == lo);
  CHECK(encoded_as<int64_t>("long", Scalar::real(9223372036854774784.0)) ==
        9223372036854774784LL);  // the largest double below 2^63
  CHECK(encode_error("long", Scalar::real(9223372036854775808.0)) == ErrorKind::Value);
  CHECK(encoded("long", Scalar::integer(-1)) == bytes_of<int64_t>(-1));
}

TEST_CASE("encode_param: unsigned integers, exact at the edges", "[kernel_signature]") {
  CHECK(encoded_as<uint8_t>("unsigned char", Scalar::integer(255)) == 255);
  CHECK(encode_error("unsigned char", Scalar::integer(256)) == ErrorKind::Value);
  CHECK(encode_error("unsigned char", Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encoded_as<uint16_t>("unsigned short", Scalar::integer(65535)) == 65535);
  CHECK(encode_error("unsigned short", Scalar::integer(65536)) == ErrorKind::Value);
  CHECK(encoded_as<uint32_t>("unsigned", Scalar::integer(4294967295LL)) == 4294967295u);
  CHECK(encoded_as<uint32_t>("unsigned int", Scalar::real(4294967295.0)) == 4294967295u);
  CHECK(encode_error("unsigned int", Scalar::integer(4294967296LL)) == ErrorKind::Value);
  CHECK(encode_error("unsigned int", Scalar::real(4294967296.0)) == ErrorKind::Value);
  CHECK(encode_error("unsigned int", Scalar::real(-1.0)) == ErrorKind::Value);
  CHECK(encoded_as<uint32_t>("unsigned int", Scalar::real(-0.0)) == 0u);

  // 64-bit: Lua integers reach 2^63 - 1; floats reach just below 2^64.
  CHECK(encoded_as<uint64_t>("unsigned long", Scalar::integer(INT64_MAX)) == uint64_t(INT64_MAX));
  CHECK(encode_error("unsigned long long", Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encoded_as<uint64_t>("size_t", Scalar::real(18446744073709549568.0)) ==
        18446744073709549568ull);  // the largest double below 2^64
  CHECK(encoded_as<uint64_t>("uint64_t", Scalar::real(9223372036854775808.0)) ==
        9223372036854775808ull);
  CHECK(encode_error("unsigned long", Scalar::real(18446744073709551616.0)) == ErrorKind::Value);
  CHECK(encode_error("unsigned long", Scalar::real(0.5)) == ErrorKind::Value);
  CHECK(encode_error("unsigned long", Scalar::boolean(false)) == ErrorKind::Type);
  // a u64 element from 2^63 up (an exact Scalar): only a 64-bit unsigned parameter takes it
  CHECK(encoded_as<uint64_t>("uint64_t", Scalar::unsigned_integer(UINT64_MAX)) == UINT64_MAX);
  CHECK(encode_error("long long", Scalar::unsigned_integer(UINT64_MAX)) == ErrorKind::Value);
  CHECK(encode_error("unsigned int", Scalar::unsigned_integer(uint64_t{1} << 63)) ==
        ErrorKind::Value);
}

TEST_CASE("encode_param: single precision", "[kernel_signature]") {
  CHECK(encoded("float", Scalar::real(1.5)) == bytes_of(1.5f));
  CHECK(encoded("float", Scalar::real(0.1)) == bytes_of(0.1f));  // rounded to nearest
  CHECK(encoded("float", Scalar::real(-0.0)) == bytes_of(-0.0f));
  CHECK(encoded("float", Scalar::integer(16777216)) == bytes_of(16777216.0f));
  CHECK(encoded("float", Scalar::integer(-16777216)) == bytes_of(-16777216.0f));
  CHECK(encoded("float", Scalar::integer(1LL << 62)) == bytes_of(std::ldexp(1.0f, 62)));
  CHECK(encoded("float", Scalar::integer(INT64_MIN)) == bytes_of(std::ldexp(-1.0f, 63)));
  CHECK(encode_error("float", Scalar::integer(16777217)) == ErrorKind::Value);
  CHECK(encode_error("float", Scalar::integer(INT64_MAX)) == ErrorKind::Value);

  const float fmax = std::numeric_limits<float>::max();
  CHECK(encoded("float", Scalar::real(3.4028234663852886e38)) == bytes_of(fmax));
  CHECK(encoded("float", Scalar::real(-3.4028234663852886e38)) == bytes_of(-fmax));
  // Above FLT_MAX but rounding down to it.
  const double below_midpoint = std::nextafter(std::ldexp(std::ldexp(1.0, 25) - 1, 103), 0.0);
  CHECK(encoded("float", Scalar::real(below_midpoint)) == bytes_of(fmax));
  CHECK(encode_error("float", Scalar::real(std::ldexp(std::ldexp(1.0, 25) - 1, 103))) ==
        ErrorKind::Value);
  CHECK(encode_error("float", Scalar::real(3.5e38)) == ErrorKind::Value);
  CHECK(encode_error("float", Scalar::real(-1e39)) == ErrorKind::Value);
  CHECK(encode_error("float", Scalar::real(1e300)) == ErrorKind::Value);
  // Underflow is rounding, not an error.
  CHECK(encoded("float", Scalar::real(1e-50)) == bytes_of(0.0f));
  CHECK(encoded("float", Scalar::real(1e-40)) == bytes_of(static_cast<float>(1e-40)));

  CHECK(encoded("float", Scalar::real(kInf)) == bytes_of(std::numeric_limits<float>::infinity()));
  CHECK(encoded("float", Scalar::real(-kInf)) == bytes_of(-std::numeric_limits<float>::infinity()));
  CHECK(std::isnan(encoded_as<float>("float", Scalar::real(kNaN))));
  CHECK(encode_error("float", Scalar::boolean(true)) == ErrorKind::Type);
  CHECK(encode_error("float", Scalar::complex(1, 2)) == ErrorKind::Type);
}

TEST_CASE("encode_param: double precision", "[kernel_signature]") {
  CHECK(encoded("double", Scalar::real(0.1)) == bytes_of(0.1));
  CHECK(encoded("double", Scalar::real(1e308)) == bytes_of(1e308));
  CHECK(encoded("double", Scalar::real(kInf)) == bytes_of(kInf));
  CHECK(std::isnan(encoded_as<double>("double", Scalar::real(kNaN))));
  CHECK(encoded("double", Scalar::integer(1LL << 53)) == bytes_of(9007199254740992.0));
  CHECK(encoded("double", Scalar::integer(-(1LL << 53))) == bytes_of(-9007199254740992.0));
  CHECK(encoded("double", Scalar::integer((1LL << 53) + 2)) == bytes_of(9007199254740994.0));
  CHECK(encode_error("double", Scalar::integer((1LL << 53) + 1)) == ErrorKind::Value);
  CHECK(encoded("double", Scalar::integer(INT64_MIN)) == bytes_of(-9223372036854775808.0));
  CHECK(encode_error("double", Scalar::integer(INT64_MAX)) == ErrorKind::Value);
  CHECK(encode_error("double", Scalar::complex(0, 1)) == ErrorKind::Type);
}

TEST_CASE("encode_param: half and bfloat16 round once, from the double", "[kernel_signature]") {
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(1.0)) == 0x3C00);
  CHECK(encoded_as<uint16_t>("half", Scalar::real(-2.0)) == 0xC000);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(65504.0)) == 0x7BFF);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(65519.99)) == 0x7BFF);   // rounds down
  CHECK(encode_error("__half", Scalar::real(65520.0)) == ErrorKind::Value);  // rounds to inf
  CHECK(encode_error("__half", Scalar::real(-1e6)) == ErrorKind::Value);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(kInf)) == 0x7C00);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(-kInf)) == 0xFC00);
  CHECK((encoded_as<uint16_t>("__half", Scalar::real(kNaN)) & 0x7C00) == 0x7C00);
  CHECK((encoded_as<uint16_t>("__half", Scalar::real(kNaN)) & 0x03FF) != 0);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(std::ldexp(1.0, -24))) == 0x0001);
  // A value just above a midpoint: via float it would first round to the midpoint, then to even.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(x)) == 0x3C01);
  CHECK(encoded_as<uint16_t>("__half", Scalar::real(x)) == half::from_double(x).bits);

  CHECK(encoded_as<uint16_t>("__half", Scalar::integer(2048)) == 0x6800);
  CHECK(encoded_as<uint16_t>("__half", Scalar::integer(65504)) == 0x7BFF);
  CHECK(encoded_as<uint16_t>("__half", Scalar::integer(-65504)) == 0xFBFF);
  CHECK(encode_error("__half", Scalar::integer(2049)) == ErrorKind::Value);
  CHECK(encode_error("__half", Scalar::integer(65536)) == ErrorKind::Value);

  CHECK(encoded_as<uint16_t>("__nv_bfloat16", Scalar::real(1.0)) == 0x3F80);
  CHECK(encoded_as<uint16_t>("nv_bfloat16", Scalar::real(3.0e38)) ==
        bfloat16::from_double(3.0e38).bits);
  CHECK(encode_error("__nv_bfloat16", Scalar::real(3.4e38)) == ErrorKind::Value);
  CHECK(encoded_as<uint16_t>("__nv_bfloat16", Scalar::real(kInf)) == 0x7F80);
  CHECK(encoded_as<uint16_t>("__nv_bfloat16", Scalar::integer(256)) == 0x4380);
  CHECK(encoded_as<uint16_t>("__nv_bfloat16", Scalar::integer(INT64_MIN)) ==
        bfloat16::from_double(-9223372036854775808.0).bits);
  CHECK(encode_error("__nv_bfloat16", Scalar::integer(257)) == ErrorKind::Value);
  CHECK(encode_error("__half", Scalar::boolean(false)) == ErrorKind::Type);
}

TEST_CASE("encode_param: bool", "[kernel_signature]") {
  CHECK(encoded("bool", Scalar::boolean(true)) == std::vector<unsigned char>{1});
  CHECK(encoded("bool", Scalar::boolean(false)) == std::vector<unsigned char>{0});
  CHECK(encoded("bool", Scalar::integer(1)) == std::vector<unsigned char>{1});
  CHECK(encoded("bool", Scalar::integer(0)) == std::vector<unsigned char>{0});
  CHECK(encoded("bool", Scalar::real(1.0)) == std::vector<unsigned char>{1});
  CHECK(encode_error("bool", Scalar::integer(2)) == ErrorKind::Value);
  CHECK(encode_error("bool", Scalar::integer(-1)) == ErrorKind::Value);
  CHECK(encode_error("bool", Scalar::real(0.5)) == ErrorKind::Value);
  CHECK(encode_error("bool", Scalar::real(kNaN)) == ErrorKind::Value);
  CHECK(encode_error("bool", Scalar::complex(1, 0)) == ErrorKind::Type);
}

TEST_CASE("encode_param: complex (float2, double2)", "[kernel_signature]") {
  struct F2 {
    float re, im;
  };
  struct D2 {
    double re, im;
  };
  auto f2 = [](float re, float im) {
    std::vector<unsigned char> out = bytes_of(re);
    const std::vector<unsigned char> b = bytes_of(im);
    out.insert(out.end(), b.begin(), b.end());
    return out;
  };
  auto d2 = [](double re, double im) {
    std::vector<unsigned char> out = bytes_of(re);
    const std::vector<unsigned char> b = bytes_of(im);
    out.insert(out.end(), b.begin(), b.end());
    return out;
  };
  static_assert(sizeof(F2) == 8 && sizeof(D2) == 16);
  CHECK(encoded("float2", Scalar::complex(1.5, -2.25)) == f2(1.5f, -2.25f));
  CHECK(encoded("cuFloatComplex", Scalar::complex(0.1, 0.2)) == f2(0.1f, 0.2f));
  CHECK(encoded("float2", Scalar::real(3.0)) == f2(3.0f, 0.0f));
  CHECK(encoded("float2", Scalar::integer(16777216)) == f2(16777216.0f, 0.0f));
  CHECK(encode_error("float2", Scalar::integer(16777217)) == ErrorKind::Value);
  CHECK(encode_error("float2", Scalar::complex(1, 1e39)) == ErrorKind::Value);
  CHECK(encode_error("float2", Scalar::complex(-1e39, 0)) == ErrorKind::Value);
  CHECK(encoded("float2", Scalar::complex(kInf, -kInf)) ==
        f2(std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()));
  CHECK(encoded("double2", Scalar::complex(0.1, -1e300)) == d2(0.1, -1e300));
  CHECK(encoded("cuDoubleComplex", Scalar::real(-0.5)) == d2(-0.5, 0.0));
  CHECK(encoded("double2", Scalar::integer(1LL << 53)) == d2(9007199254740992.0, 0.0));
  CHECK(encode_error("double2", Scalar::integer((1LL << 53) + 1)) == ErrorKind::Value);
  CHECK(encode_error("double2", Scalar::boolean(true)) == ErrorKind::Type);
}

TEST_CASE("encode_param: messages start with `what` and name the expected type",
          "[kernel_signature]") {
  CHECK(encode_message("int", Scalar::real(2.5)) ==
        "argument 3 (n: int) must be an integer, got 2.5");
  CHECK(encode_message("int", Scalar::integer(2147483648LL)) ==
        "argument 3 (n: int): 2147483648 is out of range for int (-2147483648 to 2147483647)");
  CHECK(encode_message("unsigned char", Scalar::integer(-1), "argument 1 (b: unsigned char)") ==
        "argument 1 (b: unsigned char): -1 is out of range for unsigned char (0 to 255)");
  CHECK(encode_message("unsigned long", Scalar::real(1.8446744073709552e19),
                       "argument 1 (k: unsigned long)") ==
        "argument 1 (k: unsigned long): 1.8446744073709552e+19 is out of range for unsigned long "
        "(0 to 18446744073709551615)");
  CHECK(encode_message("int", Scalar::boolean(true)) ==
        "argument 3 (n: int) must be an integer, got true");
  CHECK(encode_message("int", Scalar::real(kNaN)) ==
        "argument 3 (n: int) must be an integer, got nan");
  CHECK(encode_message("float", Scalar::real(1e39), "argument 2 (a: float)") ==
        "argument 2 (a: float): 1e+39 overflows float");
  CHECK(encode_message("float", Scalar::integer(16777217), "argument 2 (a: float)") ==
        "argument 2 (a: float): 16777217 is not exactly representable as float");
  CHECK(encode_message("float", Scalar::complex(1, 2), "argument 2 (a: float)") ==
        "argument 2 (a: float) must be a real number, got 1+2j");
  CHECK(encode_message("__half", Scalar::integer(70000), "argument 2 (h: __half)") ==
        "argument 2 (h: __half): 70000 overflows __half");
  CHECK(encode_message("bool", Scalar::integer(2), "argument 4 (flag: bool)") ==
        "argument 4 (flag: bool) must be true, false, 0 or 1, got 2");
  CHECK(encode_message("float2", Scalar::complex(1, 1e39), "argument 1 (z: float2)") ==
        "argument 1 (z: float2): 1+1e+39j overflows float2");
  CHECK(encode_message("float*", Scalar::real(1), "argument 1 (x: float*)") ==
        "argument 1 (x: float*) must be an array, got 1");
  CHECK_THAT(encode_message("Foo", Scalar::integer(1), "argument 1 (s: Foo)"),
             Catch::StartsWith("argument 1 (s: Foo): 'Foo' is not a type culua knows"));
  CHECK(encode_error("Foo", Scalar::integer(1)) == ErrorKind::Unsupported);
  CHECK(encode_error("float*", Scalar::integer(1)) == ErrorKind::Type);
}

TEST_CASE("every prefix of a source scans, and every piece of a type parses",
          "[kernel_signature]") {
  const std::string src = R"SRC(#include <cuda_fp16.h>
#define N 4 /* a
  comment */
namespace ns { namespace {
template <typename T, int K = (N > 2)>
__global__ void __launch_bounds__(256) tk(const T* __restrict__ in, T* out, int n = 3) {
  const char* s = "}{)(\"";  char c = '}';  auto r = R"x(})x";
}
} }
extern "C" { __global__ void ck(void (*f)(int), float2 z, unsigned long long m, Foo<int, 2> q); }
__global__ void ok(float x[], const __half* h, struct S s, int& bad, ...) {}
)SRC";
  const auto full = scan_kernels(src);
  REQUIRE(names_of(full) == Strings{"ns::tk", "ck", "ok"});
  CHECK(full[0].param_types == Strings{"const T* __restrict__", "T*", "int"});
  CHECK(full[1].param_types ==
        Strings{"void (*)(int)", "float2", "unsigned long long", "Foo<int, 2>"});
  CHECK(full[2].param_types == Strings{"float[]", "const __half*", "struct S", "int&", "..."});
  CHECK(full[2].param_names == Strings{"x", "h", "s", "bad", ""});
  for (size_t n = 0; n <= src.size(); ++n) {
    const auto ks = scan_kernels(std::string_view(src).substr(0, n));
    CHECK(ks.size() <= full.size());
  }
  for (const KernelDecl& k : full) {
    for (const std::string& t : k.param_types) {
      for (size_t b = 0; b < t.size(); ++b) {
        for (size_t e = b; e <= t.size(); ++e) {
          const ParamType p = parse_type(t.substr(b, e - b));
          CHECK((p.kind == ParamKind::Unsupported) == !p.unsupported.empty());
        }
      }
      const auto pieces = split_top_level(t);
      (void)demangled_parameters(t);
      (void)template_argument(t);
      CHECK(!pieces.empty());
    }
  }
}
