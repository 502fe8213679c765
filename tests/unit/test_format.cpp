// format_array: numpy-like text of arrays.
#include "helpers.hpp"

#include <sstream>

#include "core/ops/format.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

Array host_array_f32(Runtime& rt, const std::vector<float>& v, Location loc = Location::Device) {
  Array a = empty(rt, Shape{static_cast<int64_t>(v.size())}, DType::F32, loc);
  write_raw(rt, a, v);
  return a;
}

}  // namespace

TEST_CASE("format_array: small 2-D f32 array", "[format]") {
  Runtime rt(host_options());
  Array a = arange(rt, Scalar::integer(0), Scalar::integer(6), Scalar::integer(1), DType::F32);
  Array m = view_as(a, Shape{2, 3});
  CHECK(format_array(rt, m) ==
        "cu.array([[0., 1., 2.],\n"
        "          [3., 4., 5.]], shape={2,3}, dtype=f32, device)");
  // A transposed view prints its logical order.
  CHECK(format_array(rt, m.with_layout(m.layout().transpose(0, 1))) ==
        "cu.array([[0., 3.],\n"
        "          [1., 4.],\n"
        "          [2., 5.]], shape={3,2}, dtype=f32, device)");
  // Decimal points are aligned, as numpy does.
  CHECK(format_array(rt, host_array_f32(rt, {0.5f, -1.25f, 3.0f}, Location::Pageable)) ==
        "cu.array([ 0.5 , -1.25,  3.  ], shape={3}, dtype=f32, pageable)");
  // Magnitudes far apart: scientific notation, as numpy does.
  CHECK(format_array(rt, host_array_f32(rt, {0.1f, 1e20f})) ==
        "cu.array([1.e-01, 1.e+20], shape={2}, dtype=f32, device)");
}

TEST_CASE("format_array: special float values", "[format]") {
  Runtime rt(host_options());
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(format_array(rt, host_array_f32(rt, {std::nanf(""), inf, -inf, 1.0f})) ==
        "cu.array([ nan,  inf, -inf,   1.], shape={4}, dtype=f32, device)");
  Array d = full(rt, Shape{2}, DType::F64, Scalar::real(1.0 / 3));
  CHECK(format_array(rt, d) == "cu.array([0.33333333, 0.33333333], shape={2}, dtype=f64, device)");
  Array f = full(rt, Shape{1}, DType::F32, Scalar::real(0.1));
  CHECK(format_array(rt, f) == "cu.array([0.1], shape={1}, dtype=f32, device)");
  Array bf = full(rt, Shape{1}, DType::F64, Scalar::real(0.1));
  CHECK(format_array(rt, bf) == "cu.array([0.1], shape={1}, dtype=f64, device)");
  Array h = full(rt, Shape{2}, DType::F16, Scalar::real(0.5));
  CHECK(format_array(rt, h) == "cu.array([0.5, 0.5], shape={2}, dtype=f16, device)");
  // The shortest text that reads back as the same element of the dtype (numpy prints 0.1).
  Array h1 = full(rt, Shape{1}, DType::F16, Scalar::real(0.1));
  CHECK(format_array(rt, h1) == "cu.array([0.1], shape={1}, dtype=f16, device)");
  Array b1 = full(rt, Shape{1}, DType::BF16, Scalar::real(0.1));
  CHECK(format_array(rt, b1) == "cu.array([0.1], shape={1}, dtype=bf16, device)");
}

TEST_CASE("format_array: integers, bools, complex", "[format]") {
  Runtime rt(host_options());
  Array i = empty(rt, Shape{3}, DType::I32);
  write_raw(rt, i, std::vector<int32_t>{1, -20, 300});
  CHECK(format_array(rt, i) == "cu.array([  1, -20, 300], shape={3}, dtype=i32, device)");
  Array b = empty(rt, Shape{2}, DType::Bool, Location::Pinned);
  write_raw(rt, b, std::vector<uint8_t>{1, 0});
  CHECK(format_array(rt, b) == "cu.array([ true, false], shape={2}, dtype=bool, pinned)");
  Array u = full(rt, Shape{2, 2}, DType::U8, Scalar::integer(255));
  CHECK(format_array(rt, u) ==
        "cu.array([[255, 255],\n"
        "          [255, 255]], shape={2,2}, dtype=u8, device)");
  Array c = full(rt, Shape{2}, DType::C64, Scalar::complex(1, -2));
  CHECK(format_array(rt, c) == "cu.array([1.-2.j, 1.-2.j], shape={2}, dtype=c64, device)");
}

TEST_CASE("format_array: 0-d, empty and freed arrays", "[format]") {
  Runtime rt(host_options());
  Array s = full(rt, Shape{}, DType::F32, Scalar::real(2.5));
  CHECK(format_array(rt, s) == "cu.array(2.5, shape={}, dtype=f32, device)");
  Array si = full(rt, Shape{}, DType::I64, Scalar::integer(-7));
  CHECK(format_array(rt, si) == "cu.array(-7, shape={}, dtype=i64, device)");
  Array e = empty(rt, Shape{0}, DType::F32);
  CHECK(format_array(rt, e) == "cu.array([], shape={0}, dtype=f32, device)");
  Array e2 = empty(rt, Shape{2, 0}, DType::F32);
  CHECK_THAT(format_array(rt, e2), Catch::EndsWith("shape={2,0}, dtype=f32, device)"));
  s.buffer()->release();
  CHECK(format_array(rt, s) == "cu.array(<freed>)");
}

TEST_CASE("format_array: large arrays are summarized", "[format]") {
  Runtime rt(host_options());
  Array a = arange(rt, Scalar::integer(0), Scalar::integer(2000), Scalar::integer(1), DType::F32);
  const std::string t = format_array(rt, a);
  // numpy switches to scientific notation here (max / min of the nonzero values > 1000).
  CHECK_THAT(t, Catch::Contains("[0.000e+00, 1.000e+00, 2.000e+00, ..., 1.997e+03, 1.998e+03,"));
  CHECK_THAT(t, Catch::Contains("1.999e+03]"));
  CHECK_THAT(t, !Catch::Contains("1.000e+03"));
  CHECK_THAT(t, Catch::EndsWith("shape={2000}, dtype=f32, device)"));
  Array a2 =
      arange(rt, Scalar::integer(1000), Scalar::integer(3000), Scalar::integer(1), DType::F32);
  const std::string t2 = format_array(rt, a2);
  CHECK_THAT(t2, Catch::Contains("[1000., 1001., 1002., ..., 2997., 2998., 2999.]"));
  CHECK_THAT(t2, !Catch::Contains("2000."));

  Array m = view_as(
      arange(rt, Scalar::integer(0), Scalar::integer(10000), Scalar::integer(1), DType::I32),
      Shape{100, 100});
  const std::string u = format_array(rt, m);
  CHECK_THAT(u, Catch::Contains("[   0,    1,    2, ...,   97,   98,   99]"));
  CHECK_THAT(u, Catch::Contains("[9900, 9901, 9902, ..., 9997, 9998, 9999]"));
  CHECK_THAT(u, Catch::Contains("\n          ...,\n"));
  CHECK_THAT(u, !Catch::Contains("5050"));
  // Small arrays are not summarized.
  Array small =
      arange(rt, Scalar::integer(0), Scalar::integer(1000), Scalar::integer(1), DType::I32);
  CHECK_THAT(format_array(rt, small), !Catch::Contains("..."));
  FormatOptions opt;
  opt.threshold = 10;
  opt.edge = 2;
  CHECK_THAT(format_array(rt, small, opt), Catch::StartsWith("cu.array([  0,   1, ..., 998, 999]"));
}

TEST_CASE("format_array: lines stay within the line width", "[format]") {
  Runtime rt(host_options());
  Array a = arange(rt, Scalar::real(0.0), Scalar::real(50.0), Scalar::real(1.0), DType::F64);
  const std::string t = format_array(rt, a);
  std::istringstream in(t);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() > 1);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(lines[i].size() <= 75);
  }
  for (int v = 0; v < 50; ++v) CHECK_THAT(t, Catch::Contains(std::to_string(v) + "."));
  // Continuation lines are indented under the first element.
  CHECK(lines[1].rfind("          ", 0) == 0);
}
