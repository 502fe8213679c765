// Text templates with named placeholders (rtc/text_template.hpp): values inside lines and as
// blocks of lines, the built-in ${next_line}, every strictness rule; and one whole generated
// cu.elementwise kernel, whose text keys the on-disk compile cache.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "rtc/templates.hpp"
#include "rtc/text_template.hpp"

using namespace culua::detail;
using rtc::fill;
using rtc::fill_into;

namespace {

std::string error_of(std::string_view text, std::initializer_list<rtc::TemplateArg> args) {
  try {
    fill(text, args);
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("text template: values inside lines, numbers, repeated names", "[rtc][text_template]") {
  CHECK(fill("int ${name} = ${value}; // ${name}\n", {{"name", "x"}, {"value", 42}}) ==
        "int x = 42; // x\n");
  CHECK(fill("${a}${b}", {{"a", std::string("1")}, {"b", int64_t{-2}}}) == "1-2");
  CHECK(fill("no placeholders\n", {}) == "no placeholders\n");
  CHECK(fill("$x {y} $ {", {}) == "$x {y} $ {");
  // A value is inserted as it is: a placeholder inside it is text.
  CHECK(fill("${code}", {{"code", "s = \"${x}\""}}) == "s = \"${x}\"");
}

TEST_CASE("text template: a placeholder alone on its line is a block of lines",
          "[rtc][text_template]") {
  const std::string_view text = "{\n${lines}\n}\n";
  CHECK(fill(text, {{"lines", "a;\nb;\n"}}) == "{\na;\nb;\n}\n");
  CHECK(fill(text, {{"lines", ""}}) == "{\n}\n");  // the line disappears
  CHECK_THAT(error_of(text, {{"lines", "a;"}}),
             Catch::Contains("the block ${lines} needs a value that is empty or ends with a "
                             "newline"));
  // Not alone on its line: inside the line, where a newline is refused.
  CHECK(fill("  ${x}\n", {{"x", ""}}) == "  \n");
  CHECK(fill("${x};\n", {{"x", "a"}}) == "a;\n");
  CHECK_THAT(error_of("f(${x});\n", {{"x", "a\nb"}}),
             Catch::Contains("${x} inside a line needs a value without newlines"));
  // At the template's start a placeholder begins a line only where the output does.
  std::string out = "a";
  fill_into(out, "${x}\nb\n", {{"x", "1"}});
  CHECK(out == "a1\nb\n");
  out = "a\n";
  fill_into(out, "${x}\nb\n", {{"x", "1\n"}});
  CHECK(out == "a\n1\nb\n");
}

TEST_CASE("text template: ${next_line} numbers the line after it in the whole output",
          "[rtc][text_template]") {
  std::string out = "one\ntwo\n";
  fill_into(out, "#line ${next_line} \"f.cu\"\nx\n#line ${next_line} \"f.cu\"\n", {});
  CHECK(out == "one\ntwo\n#line 4 \"f.cu\"\nx\n#line 6 \"f.cu\"\n");
  // Lines of a block value count.
  CHECK(fill("${code}\n#line ${next_line}\n", {{"code", "a\nb\n"}}) == "a\nb\n#line 4\n");
  CHECK_THAT(error_of("${next_line}", {{"next_line", 1}}),
             Catch::Contains("'next_line' cannot name a value"));
}

TEST_CASE("text template: missing, unused, repeated and malformed names fail",
          "[rtc][text_template]") {
  CHECK_THAT(error_of("int ${x};\n", {}), Catch::Contains("no value for ${x}"));
  CHECK_THAT(error_of("int ${x};\n", {}), Catch::Contains("in the line 'int ${x};'"));
  CHECK_THAT(error_of("int x;\n", {{"x", "1"}}),
             Catch::Contains("no placeholder uses the value 'x'"));
  CHECK_THAT(error_of("${x}", {{"x", "1"}, {"x", "2"}}),
             Catch::Contains("the value 'x' is given twice"));
  CHECK_THAT(error_of("${1x}", {}), Catch::Contains("'${1x}' is not a placeholder"));
  CHECK_THAT(error_of("${a b}", {}), Catch::Contains("'${a b}' is not a placeholder"));
  CHECK_THAT(error_of("${}", {}), Catch::Contains("'${}' is not a placeholder"));
  CHECK_THAT(error_of("x ${y", {}), Catch::Contains("'${' without its '}'"));
  CHECK_THAT(error_of("${x}", {{"x y", "1"}}), Catch::Contains("'x y' cannot name a value"));
  // A failure leaves the output as it was.
  std::string out = "kept\n";
  CHECK_THROWS_AS(fill_into(out, "a\n${missing}\n", {}), std::logic_error);
  CHECK(out == "kept\n");
}

TEST_CASE("text template: a whole cu.elementwise kernel", "[rtc][text_template]") {
  // The generated text keys the compile cache: a change here recompiles every user's kernels, so
  // it is made on purpose only.
  const rtc::TemplateSignature sig = rtc::parse_template_signature("f32 x -> f32 y", false);
  rtc::ElementwiseSpec spec;
  spec.operands = {rtc::OperandSpec{DType::F32}, rtc::OperandSpec{DType::F32}};
  CHECK(rtc::elementwise_source(sig, spec, "y = 2 * x", "") ==
        R"(typedef long long culua_index;
template <class T, int N> struct alignas(sizeof(T) * N) culua_vec { T v[N]; };
template <class T> __device__ __forceinline__ T culua_value(const T& v) { return v; }
template <class T, class V> __device__ __forceinline__ void culua_store(T& d, const V& v) { d = static_cast<T>(v); }
__device__ __forceinline__ void culua_body(const culua_index i, const culua_index n, const float x, float& y) {
#line 1 "body"
y = 2 * x
;
}
#line 11 "culua_elementwise.cu"
extern "C" __global__ void culua_elementwise(void* culua_v_x_p, void* culua_v_y_p, culua_index n) {
const float* const culua_v_x = static_cast<const float*>(culua_v_x_p);
float* const culua_v_y = static_cast<float*>(culua_v_y_p);
const culua_index culua_stride = (culua_index)gridDim.x * blockDim.x;
const culua_index culua_first = (culua_index)blockIdx.x * blockDim.x + threadIdx.x;
for (culua_index culua_i = culua_first; culua_i < n; culua_i += culua_stride) {
float culua_v_y_v{};
culua_body(culua_i, n, culua_value(culua_v_x[culua_i]), culua_v_y_v);
culua_store(culua_v_y[culua_i], culua_v_y_v);
}
}
)");
}
