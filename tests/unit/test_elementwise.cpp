// Elementwise math in the core (host backend): type promotion (a hand-written table of numpy's
// rules plus the documented bf16 rules), weak Lua scalars, broadcasting of shapes, which
// operations are defined for which types, and direct calls of binary/unary/where through the fast
// (contiguous, same dtype) and general (strided, converting) kernel paths.
#include "helpers.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/model/promote.hpp"
#include "core/ops/elementwise.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

constexpr DType kAll[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                          DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                          DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};
constexpr int kN = 15;

// promote_types(kAll[i], kAll[j]), from numpy's np.promote_types (with ml_dtypes' bfloat16: f16
// with bf16 -> f32, bf16 holds i8/u8 exactly, i16/u16 need f32); u64 with a signed integer -> f64.
//                                f32     f64     f16     bf16    i8      i16     i32     i64
//                                u8      u32     bool    c64     c128    u16     u64
const char* const kPromote[kN][kN] = {
    /* f32  */ {"f32", "f64", "f32", "f32", "f32", "f32", "f64", "f64", "f32", "f64", "f32", "c64",
                "c128", "f32", "f64"},
    /* f64  */
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "c128", "c128",
     "f64", "f64"},
    /* f16  */
    {"f32", "f64", "f16", "f32", "f16", "f32", "f64", "f64", "f16", "f64", "f16", "c64", "c128",
     "f32", "f64"},
    /* bf16 */
    {"f32", "f64", "f32", "bf16", "bf16", "f32", "f64", "f64", "bf16", "f64", "bf16", "c64", "c128",
     "f32", "f64"},
    /* i8   */
    {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "i16", "i64", "i8", "c64", "c128",
     "i32", "f64"},
    /* i16  */
    {"f32", "f64", "f32", "f32", "i16", "i16", "i32", "i64", "i16", "i64", "i16", "c64", "c128",
     "i32", "f64"},
    /* i32  */
    {"f64", "f64", "f64", "f64", "i32", "i32", "i32", "i64", "i32", "i64", "i32", "c128", "c128",
     "i32", "f64"},
    /* i64  */
    {"f64", "f64", "f64", "f64", "i64", "i64", "i64", "i64", "i64", "i64", "i64", "c128", "c128",
     "i64", "f64"},
    /* u8   */
    {"f32", "f64", "f16", "bf16", "i16", "i16", "i32", "i64", "u8", "u32", "u8", "c64", "c128",
     "u16", "u64"},
    /* u32  */
    {"f64", "f64", "f64", "f64", "i64", "i64", "i64", "i64", "u32", "u32", "u32", "c128", "c128",
     "u32", "u64"},
    /* bool */
    {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u32", "bool", "c64", "c128",
     "u16", "u64"},
    /* c64  */
    {"c64", "c128", "c64", "c64", "c64", "c64", "c128", "c128", "c64", "c128", "c64", "c64", "c128",
     "c64", "c128"},
    /* c128 */
    {"c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128", "c128",
     "c128", "c128", "c128"},
    /* u16  */
    {"f32", "f64", "f32", "f32", "i32", "i32", "i32", "i64", "u16", "u32", "u16", "c64", "c128",
     "u16", "u64"},
    /* u64  */
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "u64", "u64", "u64", "c128", "c128",
     "u64", "u64"},
};

std::string pair_name(DType a, DType b) {
  return std::string(name(a)) + " with " + std::string(name(b));
}

bool is_bool_t(DType t) {
  return t == DType::Bool;
}
bool is_int_t(DType t) {
  return is_integer(t);
}

// Whether `op` is defined for operands of (common) type t, from the documented contract.
bool defined(BinaryOp op, DType t) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      return true;
    case BinaryOp::Sub:
      return !is_bool_t(t);
    case BinaryOp::Pow:  // bools compute in i8, as numpy's power
    case BinaryOp::Div:
      return true;  // integers and bools divide in f64
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      return is_int_t(t) || is_floating(t);
    case BinaryOp::Maximum:  // complex values in numpy's order
    case BinaryOp::Minimum:
      return true;
    default:  // lt le gt ge
      return !is_complex(t);
  }
}

constexpr BinaryOp kBinaryOps[] = {
    BinaryOp::Add,     BinaryOp::Sub,     BinaryOp::Mul,      BinaryOp::Div, BinaryOp::Pow,
    BinaryOp::Maximum, BinaryOp::Minimum, BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Eq,
    BinaryOp::Ne,      BinaryOp::Lt,      BinaryOp::Le,       BinaryOp::Gt,  BinaryOp::Ge};

// Writes doubles into a contiguous array of any dtype, element by element (write_element converts).
void set_values(Runtime& rt, const Array& a, const std::vector<double>& v) {
  REQUIRE(static_cast<int64_t>(v.size()) == a.size());
  REQUIRE(a.is_contiguous());
  for (size_t i = 0; i < v.size(); ++i) {
    Layout el;
    el.ndim = 0;
    el.offset = a.layout().offset + static_cast<int64_t>(i);
    const Scalar s = a.dtype() == DType::Bool ? Scalar::boolean(v[i] != 0)
                     : is_integer(a.dtype())  ? Scalar::integer(static_cast<int64_t>(v[i]))
                                              : Scalar::real(v[i]);
    write_element(rt, a.with_layout(el), s);
  }
}

std::vector<double> get_values(Runtime& rt, const Array& a) {
  Array c = contiguous(rt, a);
  std::vector<double> out;
  for (int64_t i = 0; i < c.size(); ++i) {
    Layout el;
    el.ndim = 0;
    el.offset = c.layout().offset + i;
    out.push_back(read_element(rt, c.with_layout(el)).as_double());
  }
  return out;
}

}  // namespace

TEST_CASE("promote_types follows numpy's table for all 15x15 dtype pairs", "[elementwise]") {
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      INFO(pair_name(kAll[i], kAll[j]));
      CHECK(std::string(name(promote_types(kAll[i], kAll[j]))) == kPromote[i][j]);
      // The table itself is symmetric, and so must be the function.
      CHECK(std::string(kPromote[i][j]) == kPromote[j][i]);
    }
  }
}

TEST_CASE("promote_with_scalar: Lua scalars are weak within their kind", "[elementwise]") {
  for (DType t : kAll) {
    INFO(name(t));
    const bool b = t == DType::Bool, in = is_integer(t), fl = is_floating(t), cx = is_complex(t);
    CHECK(promote_with_scalar(t, Scalar::boolean(true)) == t);
    CHECK(promote_with_scalar(t, Scalar::integer(300)) == (b ? DType::I64 : t));
    CHECK(promote_with_scalar(t, Scalar::real(0.5)) == ((b || in) ? DType::F64 : t));
    DType c = DType::C128;
    if (t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::C64) c = DType::C64;
    CHECK(promote_with_scalar(t, Scalar::complex(1, 2)) == c);
    (void)fl;
    (void)cx;
  }
  CHECK(scalar_dtype(Scalar::boolean(false)) == DType::Bool);
  CHECK(scalar_dtype(Scalar::integer(1)) == DType::I64);
  CHECK(scalar_dtype(Scalar::real(1)) == DType::F64);
  CHECK(scalar_dtype(Scalar::complex(1, 0)) == DType::C128);
}

TEST_CASE("float_for / real_of / complex_of", "[elementwise]") {
  CHECK(float_for(DType::Bool) == DType::F16);
  CHECK(float_for(DType::I8) == DType::F16);
  CHECK(float_for(DType::U8) == DType::F16);
  CHECK(float_for(DType::I16) == DType::F32);
  CHECK(float_for(DType::I32) == DType::F64);
  CHECK(float_for(DType::U32) == DType::F64);
  CHECK(float_for(DType::I64) == DType::F64);
  CHECK(float_for(DType::BF16) == DType::BF16);
  CHECK(float_for(DType::C64) == DType::C64);
  CHECK(real_of(DType::C64) == DType::F32);
  CHECK(real_of(DType::C128) == DType::F64);
  CHECK(real_of(DType::I8) == DType::I8);
  CHECK(complex_of(DType::F16) == DType::C64);
  CHECK(complex_of(DType::BF16) == DType::C64);
  CHECK(complex_of(DType::F32) == DType::C64);
  CHECK(complex_of(DType::F64) == DType::C128);
  CHECK(complex_of(DType::I8) == DType::C64);
  CHECK(complex_of(DType::I32) == DType::C128);
}

TEST_CASE("broadcast_shapes", "[elementwise]") {
  CHECK(broadcast_shapes(Shape{3, 1, 5}, Shape{4, 1}) == Shape{3, 4, 5});
  CHECK(broadcast_shapes(Shape{}, Shape{2, 3}) == Shape{2, 3});
  CHECK(broadcast_shapes(Shape{2, 3}, Shape{}) == Shape{2, 3});
  CHECK(broadcast_shapes(Shape{}, Shape{}) == Shape{});
  CHECK(broadcast_shapes(Shape{5, 1}, Shape{1, 7}) == Shape{5, 7});
  CHECK(broadcast_shapes(Shape{1}, Shape{0}) == Shape{0});
  CHECK(broadcast_shapes(Shape{2, 0}, Shape{1}) == Shape{2, 0});
  CHECK(broadcast_shapes(Shape{1, 1, 1, 1}, Shape{6}) == Shape{1, 1, 1, 6});
  CHECK(broadcast_shapes(Shape{2, 1, 3, 1}, Shape{4, 1, 5}) == Shape{2, 4, 3, 5});
  CHECK(error_kind_of([] { broadcast_shapes(Shape{2, 3}, Shape{4}); }) == ErrorKind::Value);
  const std::string msg = error_message_of([] { broadcast_shapes(Shape{2, 3}, Shape{3, 2}); });
  CHECK(msg.find("{2,3}") != std::string::npos);
  CHECK(msg.find("{3,2}") != std::string::npos);
  CHECK(error_kind_of([] { broadcast_shapes(Shape{0}, Shape{2}); }) == ErrorKind::Value);
}

TEST_CASE("binary_types: defined operations, compute and result types", "[elementwise]") {
  Runtime rt(host_options());
  for (DType t : kAll) {
    Array a = empty(rt, Shape{2}, t);
    for (BinaryOp op : kBinaryOps) {
      INFO(op_name(op) << " on " << name(t));
      if (!defined(op, t)) {
        CHECK(error_kind_of([&] { binary_types(op, a, a); }) == ErrorKind::Type);
        continue;
      }
      const ElementwiseTypes ty = binary_types(op, a, a);
      const DType compute = op == BinaryOp::Div && (is_integer(t) || t == DType::Bool) ? DType::F64
                            : op == BinaryOp::Pow && t == DType::Bool                  ? DType::I8
                                                                                       : t;
      CHECK(ty.compute == compute);
      CHECK(ty.result == (is_comparison(op) ? DType::Bool : compute));
    }
  }
  // Mixed: the common type decides (bool - int is an int subtraction; complex comparisons fail).
  Array b = empty(rt, Shape{2}, DType::Bool);
  Array i8 = empty(rt, Shape{2}, DType::I8);
  Array c = empty(rt, Shape{2}, DType::C64);
  Array f = empty(rt, Shape{2}, DType::F32);
  CHECK(binary_types(BinaryOp::Sub, b, i8).result == DType::I8);
  CHECK(binary_types(BinaryOp::Sub, b, Operand(Scalar::integer(1))).result == DType::I64);
  CHECK(error_kind_of([&] { binary_types(BinaryOp::Sub, b, Operand(Scalar::boolean(true))); }) ==
        ErrorKind::Type);
  CHECK(error_kind_of([&] { binary_types(BinaryOp::Lt, f, c); }) == ErrorKind::Type);
  CHECK(error_kind_of([&] { binary_types(BinaryOp::Lt, f, Operand(Scalar::complex(1, 1))); }) ==
        ErrorKind::Type);
  CHECK(binary_types(BinaryOp::Div, i8, i8).result == DType::F64);
  CHECK(binary_types(BinaryOp::Div, i8, Operand(Scalar::real(2))).result == DType::F64);
  CHECK(binary_types(BinaryOp::Lt, f, i8).compute == DType::F32);
  CHECK(binary_types(BinaryOp::Lt, f, i8).result == DType::Bool);
  const std::string msg =
      error_message_of([&] { binary_types(BinaryOp::Gt, c, Operand(Scalar::integer(1))); });
  CHECK(msg.find("gt") != std::string::npos);
  CHECK(msg.find("c64") != std::string::npos);
}

TEST_CASE("can_cast_same_kind is numpy's can_cast(from, to, 'same_kind')", "[elementwise]") {
  // numpy 1.24's answers for every pair: bool < unsigned < signed < float < complex, any width.
  const auto order = [](DType t) {
    switch (info(t).cls) {
      case DTypeClass::Bool:
        return 0;
      case DTypeClass::Unsigned:
        return 1;
      case DTypeClass::Signed:
        return 2;
      case DTypeClass::Float:
        return 3;
      default:
        return 4;
    }
  };
  for (DType from : kAll) {
    for (DType to : kAll) {
      INFO(pair_name(from, to));
      CHECK(can_cast_same_kind(from, to) == (order(from) <= order(to)));
    }
  }
  CHECK_FALSE(can_cast_same_kind(DType::I32, DType::U8));
  CHECK_FALSE(can_cast_same_kind(DType::I8, DType::U32));
  CHECK(can_cast_same_kind(DType::U32, DType::I8));
  CHECK(can_cast_same_kind(DType::F64, DType::F16));
  CHECK(can_cast_same_kind(DType::Bool, DType::U8));
  CHECK_FALSE(can_cast_same_kind(DType::C64, DType::F64));
  CHECK_FALSE(can_cast_same_kind(DType::F16, DType::I64));
  const std::string msg = error_message_of([] { check_out_dtype(DType::I32, DType::U8); });
  CHECK(msg.find("out= has dtype u8, cannot hold the i32 result under numpy's same_kind rule") !=
        std::string::npos);
  CHECK(error_kind_of([] { check_out_dtype(DType::F32, DType::I64); }) == ErrorKind::Type);
}

TEST_CASE("unary_types", "[elementwise]") {
  for (DType t : kAll) {
    INFO(name(t));
    if (t == DType::Bool) {
      CHECK(error_kind_of([&] { unary_types(UnaryOp::Neg, t); }) == ErrorKind::Type);
    } else {
      CHECK(unary_types(UnaryOp::Neg, t).result == t);
    }
    CHECK(unary_types(UnaryOp::Abs, t).result == real_of(t));
    CHECK(unary_types(UnaryOp::Real, t).result == real_of(t));
    CHECK(unary_types(UnaryOp::Imag, t).result == real_of(t));
    CHECK(unary_types(UnaryOp::Conj, t).result == t);
    for (UnaryOp op :
         {UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Sin, UnaryOp::Cos, UnaryOp::Tanh}) {
      CHECK(unary_types(op, t).result == float_for(t));
      CHECK(unary_types(op, t).compute == float_for(t));
    }
  }
}

TEST_CASE("binary through the fast path: contiguous f64 and i32", "[elementwise]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(std::random_device{}());
  const int64_t n = 37 + static_cast<int64_t>(rng() % 50);
  Array a = empty(rt, Shape{n}, DType::F64), b = empty(rt, Shape{n}, DType::F64);
  std::vector<double> va(static_cast<size_t>(n)), vb(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(-100, 100);
  for (auto& x : va) x = u(rng);
  for (auto& x : vb) x = u(rng) + 0.5;
  write_raw(rt, a, va);
  write_raw(rt, b, vb);
  const auto add = raw_elements<double>(rt, binary(rt, BinaryOp::Add, a, b));
  const auto mul = raw_elements<double>(rt, binary(rt, BinaryOp::Mul, a, Scalar::real(3.25)));
  const auto rsub = raw_elements<double>(rt, binary(rt, BinaryOp::Sub, Scalar::integer(2), a));
  const auto lt = raw_elements<uint8_t>(rt, binary(rt, BinaryOp::Lt, a, b));
  for (size_t i = 0; i < va.size(); ++i) {
    CHECK(add[i] == va[i] + vb[i]);
    CHECK(mul[i] == va[i] * 3.25);
    CHECK(rsub[i] == 2.0 - va[i]);
    CHECK((lt[i] != 0) == (va[i] < vb[i]));
  }
  Array x = empty(rt, Shape{n}, DType::I32), y = empty(rt, Shape{n}, DType::I32);
  std::vector<int32_t> vx(static_cast<size_t>(n)), vy(static_cast<size_t>(n));
  for (auto& v : vx) v = static_cast<int32_t>(rng());
  for (auto& v : vy) v = static_cast<int32_t>(rng() % 21) - 10;
  vx[0] = std::numeric_limits<int32_t>::min();
  vy[0] = -1;
  vy[1] = 0;
  write_raw(rt, x, vx);
  write_raw(rt, y, vy);
  const auto fd = raw_elements<int32_t>(rt, binary(rt, BinaryOp::FloorDiv, x, y));
  const auto md = raw_elements<int32_t>(rt, binary(rt, BinaryOp::Mod, x, y));
  const auto sm = raw_elements<int32_t>(rt, binary(rt, BinaryOp::Add, x, x));
  for (size_t i = 0; i < vx.size(); ++i) {
    const int64_t p = vx[i], q = vy[i];
    int64_t eq = 0, er = 0;
    if (q != 0) {
      eq = p / q;
      er = p % q;
      if (er != 0 && ((er < 0) != (q < 0))) {
        eq -= 1;
        er += q;
      }
    }
    INFO(p << " // " << q);
    CHECK(fd[i] == static_cast<int32_t>(static_cast<uint32_t>(eq)));
    CHECK(md[i] == er);
    CHECK(sm[i] == static_cast<int32_t>(static_cast<uint32_t>(p) * 2u));
  }
  CHECK(fd[0] == std::numeric_limits<int32_t>::min());  // MIN // -1 wraps
  CHECK(fd[1] == 0);
  CHECK(md[1] == 0);
}

TEST_CASE("binary through the general path: every input dtype converted", "[elementwise]") {
  Runtime rt(host_options());
  const std::vector<double> xs = {0, 1, 1, 0, 1, 0};  // fits every dtype (bool included)
  const std::vector<double> ys = {2.5, -1.25, 3.0, 0.5, 7.0, -8.0};
  Array y = empty(rt, Shape{6}, DType::F64);
  write_raw(rt, y, ys);
  for (DType t : kAll) {
    INFO(name(t));
    Array x = empty(rt, Shape{6}, t);
    set_values(rt, x, xs);
    // x converted to the common type (f64, or c128 for complex x).
    const Array r = binary(rt, BinaryOp::Add, x, y);
    CHECK(r.dtype() == (is_complex(t) ? DType::C128 : DType::F64));
    const auto got = get_values(rt, r);
    for (size_t i = 0; i < xs.size(); ++i) CHECK(got[i] == xs[i] + ys[i]);
    // A strided (transposed) operand and a broadcast one, into a strided out of another dtype.
    Array m = empty(rt, Shape{3, 2}, t);
    set_values(rt, m, xs);                                 // m = [[x0 x1] [x2 x3] [x4 x5]]
    Array mt = m.with_layout(m.layout().transpose(0, 1));  // 2x3
    Array row = empty(rt, Shape{3}, DType::I16);
    set_values(rt, row, {10, 20, 30});
    if (!is_complex(t)) {
      Array outbase = empty(rt, Shape{3, 2}, DType::F64);
      fill(rt, outbase, Scalar::real(-7));
      Array out = outbase.with_layout(outbase.layout().transpose(0, 1));
      binary(rt, BinaryOp::Mul, mt, row, &out);
      const auto ov = get_values(rt, outbase);  // out[j][i] at outbase[i][j]
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 2; ++j)
          CHECK(ov[static_cast<size_t>(i * 2 + j)] ==
                xs[static_cast<size_t>(i * 2 + j)] * (10.0 * (i + 1)));
    }
  }
}

TEST_CASE("unary and where through both paths", "[elementwise]") {
  Runtime rt(host_options());
  for (DType t : kAll) {
    INFO(name(t));
    Array x = empty(rt, Shape{2, 3}, t);
    set_values(rt, x, {0, 1, 1, 0, 1, 1});
    // sqrt of 0/1 is exact in every float type.
    const auto s = get_values(rt, unary(rt, UnaryOp::Sqrt, x));
    CHECK(s == std::vector<double>{0, 1, 1, 0, 1, 1});
    const auto st =
        get_values(rt, unary(rt, UnaryOp::Sqrt, x.with_layout(x.layout().transpose(0, 1))));
    CHECK(st == std::vector<double>{0, 0, 1, 1, 1, 1});
    if (t != DType::Bool) {
      const auto ng = get_values(rt, unary(rt, UnaryOp::Neg, x));
      const double one = t == DType::U8    ? 255
                         : t == DType::U16 ? 65535
                         : t == DType::U32 ? 4294967295.0
                         : t == DType::U64 ? 18446744073709551615.0  // as a double: 2^64
                                           : -1;
      CHECK(ng == std::vector<double>{0, one, one, 0, one, one});
    }
    // where with a condition of dtype t (nonzero is true), general and fast paths.
    Array a = empty(rt, Shape{2, 3}, DType::F32), b = empty(rt, Shape{3}, DType::F32);
    set_values(rt, a, {1, 2, 3, 4, 5, 6});
    set_values(rt, b, {-1, -2, -3});
    const auto w = get_values(rt, where(rt, x, a, b));
    CHECK(w == std::vector<double>{-1, 2, 3, -1, 5, 6});
    const auto ws = get_values(rt, where(rt, x, Scalar::integer(9), b));
    CHECK(ws == std::vector<double>{-1, 9, 9, -1, 9, 9});
  }
}

TEST_CASE("f16 results are rounded to f16 before a wider out", "[elementwise]") {
  Runtime rt(host_options());
  Array a = empty(rt, Shape{3}, DType::F16);
  set_values(rt, a, {1.0, 3.0, 2048.0});
  Array out = empty(rt, Shape{3}, DType::F32);
  binary(rt, BinaryOp::Add, a, Scalar::real(1.0 / 4096), &out);
  CHECK(get_values(rt, out) == std::vector<double>{1.0, 3.0, 2048.0});
  Array o2 = empty(rt, Shape{3}, DType::F64);
  unary(rt, UnaryOp::Exp, a, &o2);
  const auto e = get_values(rt, o2);
  CHECK(e[0] == 2.71875);  // exp(1) in f16
}

TEST_CASE("float floor division and modulo are Python's", "[elementwise]") {
  Runtime rt(host_options());
  Array a = empty(rt, Shape{6}, DType::F64), b = empty(rt, Shape{6}, DType::F64);
  write_raw(rt, a, std::vector<double>{1.0, -1.0, 7.0, -7.0, 5.0, -5.0});
  write_raw(rt, b,
            std::vector<double>{0.1, 0.1, -2.0, 7.0, 0.0, std::numeric_limits<double>::infinity()});
  const auto q = raw_elements<double>(rt, binary(rt, BinaryOp::FloorDiv, a, b));
  const auto r = raw_elements<double>(rt, binary(rt, BinaryOp::Mod, a, b));
  CHECK(q[0] == 9.0);  // Python: 1 // 0.1 == 9.0
  CHECK(r[0] == std::fmod(1.0, 0.1));
  CHECK(q[1] == -10.0);
  CHECK(q[2] == -4.0);
  CHECK(r[2] == -1.0);
  CHECK(q[3] == -1.0);
  CHECK(r[3] == 0.0);
  CHECK(!std::signbit(r[3]));  // zero remainder takes the divisor's sign
  CHECK(std::isinf(q[4]));
  CHECK(std::isnan(r[4]));
  CHECK(q[5] == -1.0);
  CHECK(std::isinf(r[5]));
}

TEST_CASE("core errors: shapes, out, dtype and scalar range", "[elementwise]") {
  Runtime rt(host_options());
  Array a = empty(rt, Shape{2, 3}, DType::F32);
  Array b = empty(rt, Shape{3, 2}, DType::F32);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, a, b); }) == ErrorKind::Value);
  Array wrong = empty(rt, Shape{3}, DType::F32);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, a, a, &wrong); }) == ErrorKind::Value);
  Array iout = empty(rt, Shape{2, 3}, DType::I32);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, a, a, &iout); }) == ErrorKind::Type);
  CHECK(error_kind_of([&] { unary(rt, UnaryOp::Exp, a, &iout); }) == ErrorKind::Type);
  Array u8 = empty(rt, Shape{2}, DType::U8);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, u8, Scalar::integer(300)); }) ==
        ErrorKind::Value);
  Array h = empty(rt, Shape{2, 3}, DType::F32, Location::Pageable);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, a, h); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, Scalar::integer(1), Scalar::integer(2)); }) ==
        ErrorKind::Type);
  Array dead = empty(rt, Shape{2}, DType::F32);
  dead.buffer()->release();
  CHECK(error_kind_of([&] { binary(rt, BinaryOp::Add, dead, Scalar::integer(1)); }) ==
        ErrorKind::Released);
}
