// Reductions on the host backend: every op and dtype, full and axis reductions with and without
// keepdims, strided views, device (worker thread) and host (calling thread) arrays, against
// references computed here in long double or exact integer arithmetic; accuracy of the pairwise
// order, empty inputs, out= conversions and errors.
#include "helpers.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "core/ops/reduce.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

constexpr DType kAllDTypes[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                                DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                                DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};
constexpr ReduceOp kAllOps[] = {ReduceOp::Sum,  ReduceOp::Mean, ReduceOp::Max,    ReduceOp::Min,
                                ReduceOp::Prod, ReduceOp::Norm, ReduceOp::Argmax, ReduceOp::Argmin};

bool is_ordering(ReduceOp op) {
  return op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::Argmax ||
         op == ReduceOp::Argmin;
}

// An element read back as numbers.
struct Elem {
  double re = 0;
  double im = 0;
  int64_t i = 0;
  bool integral = false;
};

Elem decode(DType t, const unsigned char* p) {
  Elem e;
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T x;
    std::memcpy(&x, p, sizeof x);
    if constexpr (is_complex_element<T>::value) {
      e.re = x.re;
      e.im = x.im;
    } else if constexpr (std::is_integral_v<T>) {
      e.i = static_cast<int64_t>(x);
      e.re = static_cast<double>(x);  // u64 from 2^63 up: its value, not the bits as i64
      e.integral = true;
    } else {
      e.re = static_cast<double>(real_value(x));
    }
  });
  return e;
}

// Random elements suited to `op` (products near 1, orderings with ties), as raw bytes.
std::vector<unsigned char> random_bytes(DType t, int64_t n, ReduceOp op, std::mt19937_64& rng) {
  std::vector<unsigned char> out(static_cast<size_t>(n) * itemsize(t));
  std::uniform_real_distribution<double> wide(-4.0, 4.0), near1(0.95, 1.05), small(-0.05, 0.05);
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < n; ++k) {
      T v;
      if constexpr (std::is_same_v<T, bool>) {
        v = (rng() & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::Prod) {
          const int64_t pick = static_cast<int64_t>(rng() % 3) + 1;
          v = static_cast<T>(std::is_signed_v<T> && (rng() & 1) ? -pick : pick);
        } else if (is_ordering(op)) {
          v = static_cast<T>(static_cast<int64_t>(rng() % 7) - (std::is_signed_v<T> ? 3 : 0));
        } else {
          v = static_cast<T>(rng());  // full range: sums wrap
        }
      } else if constexpr (is_complex_element<T>::value) {
        using P = decltype(T{}.re);
        v = op == ReduceOp::Prod ? T{static_cast<P>(near1(rng)), static_cast<P>(small(rng))}
                                 : T{static_cast<P>(wide(rng)), static_cast<P>(wide(rng))};
      } else {
        double d = op == ReduceOp::Prod ? near1(rng) : wide(rng);
        if (is_ordering(op)) d = std::round(d);  // ties
        v = convert<T>(d);
      }
      std::memcpy(out.data() + static_cast<size_t>(k) * sizeof(T), &v, sizeof(T));
    }
  });
  return out;
}

// The expected result of `op` over `xs` (elements of dtype t), and the scale errors are
// measured against.
struct Expected {
  Elem value;
  double scale = 0;
};

Expected reference(ReduceOp op, DType t, const std::vector<Elem>& xs) {
  Expected e;
  const bool integral = !is_floating(t) && !is_complex(t);
  const auto n = static_cast<long double>(xs.size());
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
      if (integral && op == ReduceOp::Sum) {
        uint64_t s = 0;
        for (const Elem& x : xs) s += static_cast<uint64_t>(x.i);
        e.value.i = static_cast<int64_t>(s);
        e.value.integral = true;
        return e;
      }
      long double re = 0, im = 0, scale = 0;
      for (const Elem& x : xs) {
        re += x.re;
        im += x.im;
        scale +=
            std::fabs(static_cast<long double>(x.re)) + std::fabs(static_cast<long double>(x.im));
      }
      if (op == ReduceOp::Mean) {
        re /= n;
        im /= n;
        scale /= n;
      }
      e.value.re = static_cast<double>(re);
      e.value.im = static_cast<double>(im);
      e.scale = static_cast<double>(scale);
      return e;
    }
    case ReduceOp::Prod: {
      if (integral) {
        uint64_t p = 1;
        for (const Elem& x : xs) p *= static_cast<uint64_t>(x.i);
        e.value.i = static_cast<int64_t>(p);
        e.value.integral = true;
        return e;
      }
      long double re = 1, im = 0, mag = 1;
      for (const Elem& x : xs) {
        const long double r = re * x.re - im * x.im;
        im = re * x.im + im * x.re;
        re = r;
        mag *= std::hypot(static_cast<long double>(x.re), static_cast<long double>(x.im));
      }
      e.value.re = static_cast<double>(re);
      e.value.im = static_cast<double>(im);
      e.scale = static_cast<double>(mag);
      return e;
    }
    case ReduceOp::Norm: {
      long double s = 0;
      for (const Elem& x : xs)
        s += static_cast<long double>(x.re) * x.re + static_cast<long double>(x.im) * x.im;
      e.value.re = static_cast<double>(std::sqrt(s));
      e.scale = e.value.re;
      return e;
    }
    default:
      break;
  }
  const bool greater = op == ReduceOp::Max || op == ReduceOp::Argmax;
  int64_t best = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    const Elem& x = xs[k];
    const Elem& b = xs[static_cast<size_t>(best)];
    if (std::isnan(b.re)) break;
    if (std::isnan(x.re)) {
      best = static_cast<int64_t>(k);
      break;
    }
    const bool better =
        x.integral ? (greater ? x.i > b.i : x.i < b.i) : (greater ? x.re > b.re : x.re < b.re);
    if (better) best = static_cast<int64_t>(k);
  }
  if (op == ReduceOp::Argmax || op == ReduceOp::Argmin) {
    e.value.i = best + 1;
    e.value.integral = true;
  } else {
    e.value = xs[static_cast<size_t>(best)];
  }
  return e;
}

double tolerance(DType result) {
  switch (result) {
    case DType::F16:
      return 2e-3;
    case DType::BF16:
      return 1e-2;
    case DType::F32:
    case DType::C64:
      return 1e-5;
    default:
      return 1e-12;
  }
}

bool close(double got, double want, double tol, double scale) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * scale + 1e-300;
}

bool matches(ReduceOp op, DType in, const Elem& got, const Expected& want) {
  const DType rt = reduce_result_dtype(op, in);
  if (want.value.integral) return got.i == want.value.i;
  if (is_ordering(op)) {
    return (std::isnan(want.value.re) && std::isnan(got.re)) || got.re == want.value.re;
  }
  const double tol = tolerance(rt);
  return close(got.re, want.value.re, tol, want.scale) &&
         close(got.im, want.value.im, tol, want.scale);
}

std::string show(const Elem& e) {
  return e.integral ? std::to_string(e.i) : fmt::format("({}, {})", e.re, e.im);
}

// The elements of a view in row-major order, decoded from the bytes of its whole buffer.
struct HostView {
  DType t;
  Layout l;
  const std::vector<unsigned char>* bytes;

  Elem at(const int64_t* index) const {
    int64_t off = l.offset;
    for (int d = 0; d < l.ndim; ++d) off += index[d] * l.strides[static_cast<size_t>(d)];
    return decode(t, bytes->data() + static_cast<size_t>(off) * itemsize(t));
  }
};

// Expected results of reducing `v` (all of it, or along `axis`), in row-major order of the
// result's positions.
std::vector<Expected> expected_results(ReduceOp op, const HostView& v, std::optional<int> axis) {
  const Layout& l = v.l;
  std::vector<Expected> out;
  int64_t index[kMaxDims] = {};
  if (!axis) {
    std::vector<Elem> xs;
    const int64_t n = l.size();
    for (int64_t k = 0; k < n; ++k) {
      int64_t rest = k;
      for (int d = l.ndim - 1; d >= 0; --d) {
        index[d] = rest % l.shape[static_cast<size_t>(d)];
        rest /= l.shape[static_cast<size_t>(d)];
      }
      xs.push_back(v.at(index));
    }
    out.push_back(reference(op, v.t, xs));
    return out;
  }
  const int ax = *axis;
  const int64_t len = l.shape[static_cast<size_t>(ax)];
  const int64_t outputs = len ? l.size() / len : [&] {
    int64_t m = 1;
    for (int d = 0; d < l.ndim; ++d) m *= d == ax ? 1 : l.shape[static_cast<size_t>(d)];
    return m;
  }();
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t rest = o;
    for (int d = l.ndim - 1; d >= 0; --d) {
      if (d == ax) continue;
      index[d] = rest % l.shape[static_cast<size_t>(d)];
      rest /= l.shape[static_cast<size_t>(d)];
    }
    std::vector<Elem> xs;
    for (int64_t r = 0; r < len; ++r) {
      index[ax] = r;
      xs.push_back(v.at(index));
    }
    out.push_back(reference(op, v.t, xs));
  }
  return out;
}

std::vector<Elem> read_elements(Runtime& rt, const Array& a) {
  const std::vector<unsigned char> bytes = read_contiguous(rt, a);
  std::vector<Elem> out;
  for (int64_t k = 0; k < a.size(); ++k) {
    out.push_back(decode(a.dtype(), bytes.data() + static_cast<size_t>(k) * itemsize(a.dtype())));
  }
  return out;
}

Array array_from_bytes(Runtime& rt, const Shape& s, DType t, Location loc,
                       const std::vector<unsigned char>& bytes) {
  Array a = empty(rt, s, t, loc);
  rt.backend().synchronize_device(0);
  if (!bytes.empty()) std::memcpy(a.data(), bytes.data(), bytes.size());
  return a;
}

// Views of a {3, 5, 7} base: contiguous, transposed, narrowed, narrowed and transposed.
Layout view_layout(const Layout& base, int which) {
  switch (which) {
    case 1:
      return base.transpose(0, 2);
    case 2:
      return base.narrow(1, 1, 3);
    case 3:
      return base.narrow(2, 2, 4).transpose(0, 1);
    default:
      return base;
  }
}

template <class T>
T element(Runtime& rt, const Array& a) {
  const std::vector<unsigned char> bytes = read_contiguous(rt, a);
  REQUIRE(bytes.size() >= sizeof(T));
  T v;
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

Array f32_array(Runtime& rt, const std::vector<float>& v, Location loc = Location::Device) {
  std::vector<unsigned char> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return array_from_bytes(rt, Shape{static_cast<int64_t>(v.size())}, DType::F32, loc, bytes);
}

}  // namespace

TEST_CASE("reduce: every op, dtype, view, axis and keepdims against references", "[reduce]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(31337);
  const Shape base_shape{3, 5, 7};
  int checked = 0, failures = 0;
  for (const Location loc : {Location::Device, Location::Pageable}) {
    for (const ReduceOp op : kAllOps) {
      for (const DType t : kAllDTypes) {
        if (is_complex(t) && is_ordering(op)) continue;
        const std::vector<unsigned char> bytes = random_bytes(t, base_shape.numel(), op, rng);
        const Array base = array_from_bytes(rt, base_shape, t, loc, bytes);
        for (int which = 0; which < 4; ++which) {
          const Array a = base.with_layout(view_layout(base.layout(), which));
          const HostView hv{t, a.layout(), &bytes};
          for (int ax = -1; ax < a.ndim(); ++ax) {
            const std::optional<int> axis = ax < 0 ? std::nullopt : std::optional<int>(ax);
            const std::vector<Expected> want = expected_results(op, hv, axis);
            for (const bool keepdims : {false, true}) {
              const Array r = reduce(rt, op, a, axis, keepdims);
              REQUIRE(r.dtype() == reduce_result_dtype(op, t));
              REQUIRE(r.shape() == reduce_shape(a.shape(), axis, keepdims));
              REQUIRE(r.location() ==
                      (loc == Location::Device ? Location::Device : Location::Pageable));
              const std::vector<Elem> got = read_elements(rt, r);
              REQUIRE(got.size() == want.size());
              for (size_t k = 0; k < got.size(); ++k) {
                ++checked;
                if (!matches(op, t, got[k], want[k]) && ++failures <= 10) {
                  FAIL_CHECK(op_name(op) << " of " << name(t) << " view " << which << " axis " << ax
                                         << (keepdims ? " keepdims" : "") << " at " << k << " ("
                                         << location_name(loc) << "): expected "
                                         << show(want[k].value) << ", got " << show(got[k]));
                }
              }
            }
          }
        }
      }
    }
  }
  CHECK(failures == 0);
  CHECK(checked > 10000);
}

TEST_CASE("reduce: result dtypes follow numpy", "[reduce]") {
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::Bool) == DType::I64);
  // unsigned integers: u64 (numpy on Linux), bool and signed integers: i64
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::U8) == DType::U64);
  CHECK(reduce_result_dtype(ReduceOp::Prod, DType::U16) == DType::U64);
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::U64) == DType::U64);
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::I16) == DType::I64);
  CHECK(reduce_result_dtype(ReduceOp::Max, DType::U16) == DType::U16);
  CHECK(reduce_result_dtype(ReduceOp::Mean, DType::U64) == DType::F64);
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::F16) == DType::F16);
  CHECK(reduce_result_dtype(ReduceOp::Sum, DType::C64) == DType::C64);
  CHECK(reduce_result_dtype(ReduceOp::Prod, DType::I32) == DType::I64);
  CHECK(reduce_result_dtype(ReduceOp::Mean, DType::I8) == DType::F64);
  CHECK(reduce_result_dtype(ReduceOp::Mean, DType::BF16) == DType::BF16);
  CHECK(reduce_result_dtype(ReduceOp::Mean, DType::C128) == DType::C128);
  CHECK(reduce_result_dtype(ReduceOp::Norm, DType::U32) == DType::F64);
  CHECK(reduce_result_dtype(ReduceOp::Norm, DType::F16) == DType::F16);
  CHECK(reduce_result_dtype(ReduceOp::Norm, DType::C64) == DType::F32);
  CHECK(reduce_result_dtype(ReduceOp::Norm, DType::C128) == DType::F64);
  CHECK(reduce_result_dtype(ReduceOp::Max, DType::Bool) == DType::Bool);
  CHECK(reduce_result_dtype(ReduceOp::Min, DType::I16) == DType::I16);
  CHECK(reduce_result_dtype(ReduceOp::Argmax, DType::F16) == DType::I64);
  CHECK(error_kind_of([] { reduce_result_dtype(ReduceOp::Max, DType::C64); }) == ErrorKind::Type);
  CHECK(error_kind_of([] { reduce_result_dtype(ReduceOp::Argmin, DType::C128); }) ==
        ErrorKind::Type);
}

TEST_CASE("reduce: 2^24 and 2^26 ones sum exactly in f32", "[reduce][accuracy]") {
  Runtime rt(host_options());
  for (const int64_t n : {int64_t{1} << 24, int64_t{1} << 26}) {
    for (const Location loc : {Location::Device, Location::Pageable}) {
      const Array a = full(rt, Shape{n}, DType::F32, Scalar::integer(1), loc);
      CHECK(element<float>(rt, reduce(rt, ReduceOp::Sum, a, std::nullopt, false)) ==
            static_cast<float>(n));
    }
  }
  // Also along an axis, both with lanes of columns and along rows.
  const Array m = full(rt, Shape{int64_t{1} << 24, 2}, DType::F32, Scalar::integer(1));
  const Array cols = reduce(rt, ReduceOp::Sum, m, 0, false);
  CHECK(raw_elements<float>(rt, cols) == std::vector<float>{16777216.0f, 16777216.0f});
  const Array rows = reduce(rt, ReduceOp::Sum, m.with_layout(m.layout().transpose(0, 1)), 1, false);
  CHECK(raw_elements<float>(rt, rows) == std::vector<float>{16777216.0f, 16777216.0f});
}

TEST_CASE("reduce: f32 sums of many random values are close to the f64 sum", "[reduce][accuracy]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int64_t n = 10'000'000;
  std::vector<float> v(static_cast<size_t>(n));
  double exact = 0;
  for (float& x : v) {
    x = u(rng);
    exact += x;
  }
  const Array a = f32_array(rt, v);
  const float got = element<float>(rt, reduce(rt, ReduceOp::Sum, a, std::nullopt, false));
  CHECK(std::fabs(got - exact) / exact < 1e-6);
  // Columns of a {n/4, 4} matrix: long strided axes stay accurate too.
  const Array m = a.with_layout(a.layout().reshaped(Shape{n / 4, 4}));
  const std::vector<float> cols = raw_elements<float>(rt, reduce(rt, ReduceOp::Sum, m, 0, false));
  for (int c = 0; c < 4; ++c) {
    double want = 0;
    for (int64_t r = 0; r < n / 4; ++r) want += v[static_cast<size_t>(r * 4 + c)];
    CHECK(std::fabs(cols[static_cast<size_t>(c)] - want) / want < 1e-6);
  }
  const double mean = element<float>(rt, reduce(rt, ReduceOp::Mean, a, std::nullopt, false));
  CHECK(std::fabs(mean - exact / static_cast<double>(n)) < 1e-6);
}

TEST_CASE("reduce: results are the same bits run to run", "[reduce]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(99);
  std::normal_distribution<float> g;
  std::vector<float> v(1 << 20);
  for (float& x : v) x = g(rng);
  const Array a = f32_array(rt, v);
  const Array m = a.with_layout(a.layout().reshaped(Shape{1024, 1024}));
  for (const std::optional<int> axis :
       {std::optional<int>(), std::optional<int>(0), std::optional<int>(1)}) {
    const auto r1 = read_contiguous(rt, reduce(rt, ReduceOp::Sum, m, axis, false));
    const auto r2 = read_contiguous(rt, reduce(rt, ReduceOp::Sum, m, axis, false));
    CHECK(r1 == r2);
  }
}

TEST_CASE("reduce: empty inputs", "[reduce]") {
  Runtime rt(host_options());
  const Array e = empty(rt, Shape{0}, DType::F32);
  CHECK(element<float>(rt, reduce(rt, ReduceOp::Sum, e, std::nullopt, false)) == 0.0f);
  CHECK(element<float>(rt, reduce(rt, ReduceOp::Prod, e, std::nullopt, false)) == 1.0f);
  CHECK(std::isnan(element<float>(rt, reduce(rt, ReduceOp::Mean, e, std::nullopt, false))));
  CHECK(element<float>(rt, reduce(rt, ReduceOp::Norm, e, std::nullopt, false)) == 0.0f);
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Sum, empty(rt, Shape{0}, DType::I32),
                                    std::nullopt, false)) == 0);
  CHECK(std::isnan(element<double>(
      rt, reduce(rt, ReduceOp::Mean, empty(rt, Shape{0}, DType::U8), std::nullopt, false))));
  for (const ReduceOp op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::Argmax, ReduceOp::Argmin}) {
    CHECK(error_kind_of([&] { reduce(rt, op, e, std::nullopt, false); }) == ErrorKind::Value);
    CHECK_THAT(error_message_of([&] { reduce(rt, op, e, std::nullopt, false); }),
               Catch::Contains("empty") && Catch::Contains(op_name(op)));
  }
  // {3, 0}: sums along the empty axis are zeros; max along it is an error.
  const Array z = empty(rt, Shape{3, 0}, DType::F64);
  const Array s = reduce(rt, ReduceOp::Sum, z, 1, false);
  CHECK(s.shape() == Shape{3});
  CHECK(raw_elements<double>(rt, s) == std::vector<double>{0, 0, 0});
  CHECK(raw_elements<double>(rt, reduce(rt, ReduceOp::Prod, z, 1, true)) ==
        std::vector<double>{1, 1, 1});
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Max, z, 1, false); }) == ErrorKind::Value);
  // Along the non-empty axis the result is empty and max is fine.
  const Array m = reduce(rt, ReduceOp::Max, z, 0, false);
  CHECK(m.shape() == Shape{0});
  CHECK(reduce(rt, ReduceOp::Sum, z, 0, true).shape() == Shape{1, 0});
  // An empty view whose dimensions do not merge ({2, 0} out of {2, 5}).
  for (const Location loc : {Location::Device, Location::Pageable}) {
    const Array base = full(rt, Shape{2, 5}, DType::F32, Scalar::integer(1), loc);
    const Array none = base.with_layout(base.layout().narrow(1, 3, 0));
    CHECK(element<float>(rt, reduce(rt, ReduceOp::Sum, none, std::nullopt, false)) == 0.0f);
    CHECK(element<float>(rt, reduce(rt, ReduceOp::Prod, none, std::nullopt, false)) == 1.0f);
    CHECK(reduce(rt, ReduceOp::Sum, none, 1, false).shape() == Shape{2});
  }
}

TEST_CASE("reduce: 0-d inputs", "[reduce]") {
  Runtime rt(host_options());
  const Array a = full(rt, Shape{}, DType::I16, Scalar::integer(-7));
  const Array s = reduce(rt, ReduceOp::Sum, a, std::nullopt, false);
  CHECK(s.ndim() == 0);
  CHECK(element<int64_t>(rt, s) == -7);
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmin, a, std::nullopt, true)) == 1);
  CHECK(element<int16_t>(rt, reduce(rt, ReduceOp::Max, a, std::nullopt, false)) == -7);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, a, 0, false); }) == ErrorKind::Index);
}

TEST_CASE("reduce: NaN propagates through max/min and wins argmax/argmin", "[reduce]") {
  Runtime rt(host_options());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Location loc : {Location::Device, Location::Pageable}) {
    const Array a = f32_array(rt, {1, 5, nan, 9, nan, -3}, loc);
    CHECK(std::isnan(element<float>(rt, reduce(rt, ReduceOp::Max, a, std::nullopt, false))));
    CHECK(std::isnan(element<float>(rt, reduce(rt, ReduceOp::Min, a, std::nullopt, false))));
    CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmax, a, std::nullopt, false)) == 3);
    CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmin, a, std::nullopt, false)) == 3);
    const Array b = f32_array(rt, {2, 9, -4, 9, -4}, loc);
    CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmax, b, std::nullopt, false)) == 2);
    CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmin, b, std::nullopt, false)) == 3);
    const float inf = std::numeric_limits<float>::infinity();
    const Array c = f32_array(rt, {-inf, -inf}, loc);
    CHECK(element<float>(rt, reduce(rt, ReduceOp::Max, c, std::nullopt, false)) == -inf);
    CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmax, c, std::nullopt, false)) == 1);
  }
}

TEST_CASE("reduce: integer sums and products wrap, integer means do not", "[reduce]") {
  Runtime rt(host_options());
  const int64_t big = std::numeric_limits<int64_t>::max();
  const Array a = empty(rt, Shape{2}, DType::I64);
  write_raw<int64_t>(rt, a, {big, 1});
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Sum, a, std::nullopt, false)) ==
        std::numeric_limits<int64_t>::min());
  write_raw<int64_t>(rt, a, {big, big});
  CHECK(element<double>(rt, reduce(rt, ReduceOp::Mean, a, std::nullopt, false)) ==
        static_cast<double>(big));
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Prod, a, std::nullopt, false)) == 1);
  const Array u = empty(rt, Shape{3}, DType::U32);
  write_raw<uint32_t>(rt, u, {4000000000u, 4000000000u, 4000000000u});
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Sum, u, std::nullopt, false)) == 12000000000);
  const Array b = empty(rt, Shape{5}, DType::Bool);
  write_raw<uint8_t>(rt, b, {1, 0, 1, 1, 0});
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Sum, b, std::nullopt, false)) == 3);
  CHECK(element<bool>(rt, reduce(rt, ReduceOp::Max, b, std::nullopt, false)) == true);
  CHECK(element<bool>(rt, reduce(rt, ReduceOp::Min, b, std::nullopt, false)) == false);
  CHECK(element<int64_t>(rt, reduce(rt, ReduceOp::Argmin, b, std::nullopt, false)) == 2);
}

// A bool array whose memory was never written (cu.empty, a graph-captured operation's output not
// replayed yet: fuzz seed 5096) may hold any byte. Reductions read bool elements as bytes, any
// nonzero byte true, as numpy does: np.frombuffer(bytes([2, 0, 0xbe, 1, 0, 255]), bool) gives
// sum 4, mean 2/3, max True, min False, argmax 0, argmin 1, prod 0, var 2/9, any True, all False,
// and sums along the axes of its {2, 3} view [2 0 2] and [2 2]. (Loaded as C++ bools, the sum
// was 0xbe + 255 + 3 here, and UBSan reported the load.)
TEST_CASE("reduce: bool elements other than 0 and 1 count as true, as numpy", "[reduce]") {
  Runtime rt(host_options());
  for (const Location loc : {Location::Device, Location::Pageable}) {
    const Array b = empty(rt, Shape{6}, DType::Bool, loc);
    write_raw<uint8_t>(rt, b, {2, 0, 0xbe, 1, 0, 255});
    const auto all = [&](ReduceOp op) { return reduce(rt, op, b, std::nullopt, false); };
    CHECK(element<int64_t>(rt, all(ReduceOp::Sum)) == 4);
    CHECK(element<double>(rt, all(ReduceOp::Mean)) == 4.0 / 6.0);
    CHECK(raw_elements<uint8_t>(rt, all(ReduceOp::Max)) == std::vector<uint8_t>{1});
    CHECK(raw_elements<uint8_t>(rt, all(ReduceOp::Min)) == std::vector<uint8_t>{0});
    CHECK(element<int64_t>(rt, all(ReduceOp::Argmax)) == 1);
    CHECK(element<int64_t>(rt, all(ReduceOp::Argmin)) == 2);
    CHECK(element<int64_t>(rt, all(ReduceOp::Prod)) == 0);
    CHECK(element<double>(rt, all(ReduceOp::Var)) == Approx(2.0 / 9.0).epsilon(1e-15));
    CHECK(element<double>(rt, all(ReduceOp::Norm)) == 2.0);
    CHECK(raw_elements<uint8_t>(rt, all(ReduceOp::Any)) == std::vector<uint8_t>{1});
    CHECK(raw_elements<uint8_t>(rt, all(ReduceOp::All)) == std::vector<uint8_t>{0});
    const Array m = b.with_layout(b.layout().reshaped(Shape{2, 3}));
    CHECK(raw_elements<int64_t>(rt, reduce(rt, ReduceOp::Sum, m, 0, false)) ==
          std::vector<int64_t>{2, 0, 2});
    CHECK(raw_elements<int64_t>(rt, reduce(rt, ReduceOp::Sum, m, 1, false)) ==
          std::vector<int64_t>{2, 2});
  }
}

// var/std merge Welford moments in the pairwise order: every length from 1 to 40 (each remainder
// mod 8, the elements added after the partials' tree), whole and along rows, against a two-pass
// reference in long double. (The symptom of the miscompilation described at VarOp::combine in
// kernels/reduce.cuh: var of 9 elements that of the first 8, of 1 to 7 elements NaN.)
TEST_CASE("reduce: var and std of 1 to 40 elements, whole and along rows", "[reduce]") {
  Runtime rt(host_options());
  for (const DType t : {DType::F32, DType::F64}) {
    for (int64_t n = 1; n <= 40; ++n) {
      std::vector<double> v(static_cast<size_t>(2 * n));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = 1.0 + 0.5 * static_cast<double>(i % n) + (i >= static_cast<size_t>(n) ? 3.0 : 0.0);
      long double mean = 0, m2 = 0;
      for (int64_t i = 0; i < n; ++i) mean += v[static_cast<size_t>(i)];
      mean /= static_cast<long double>(n);
      for (int64_t i = 0; i < n; ++i) {
        const long double d = v[static_cast<size_t>(i)] - mean;
        m2 += d * d;
      }
      const double want = static_cast<double>(m2 / static_cast<long double>(n));
      const double tol = t == DType::F32 ? 1e-6 : 1e-14;
      const Array m = empty(rt, Shape{2, n}, t);
      if (t == DType::F32) {
        write_raw<float>(rt, m, std::vector<float>(v.begin(), v.end()));
      } else {
        write_raw<double>(rt, m, v);
      }
      const Array row = m.with_layout(m.layout().narrow(0, 0, 1));
      const auto value = [&](const Array& r) {
        return t == DType::F32 ? static_cast<double>(element<float>(rt, r))
                               : element<double>(rt, r);
      };
      INFO("n = " << n << ", " << name(t));
      for (const ReduceOp op : {ReduceOp::Var, ReduceOp::NanVar, ReduceOp::Std}) {
        const double w = op == ReduceOp::Std ? std::sqrt(want) : want;
        CHECK(value(reduce(rt, op, row, std::nullopt, false)) ==
              Approx(w).epsilon(tol).margin(tol));
      }
      // Along rows: both rows have the same spread (the second is shifted by 3).
      const Array rows = reduce(rt, ReduceOp::Var, m, 1, false);
      for (int k = 0; k < 2; ++k) {
        const double got =
            t == DType::F32
                ? static_cast<double>(raw_elements<float>(rt, rows)[static_cast<size_t>(k)])
                : raw_elements<double>(rt, rows)[static_cast<size_t>(k)];
        CHECK(got == Approx(want).epsilon(tol).margin(tol));
      }
    }
  }
}

TEST_CASE("reduce: out= receives the result converted to its dtype", "[reduce]") {
  Runtime rt(host_options());
  const Array a = f32_array(rt, {1.5f, 2.25f, -0.5f, 4.0f, 3.0f, 0.25f});
  const Array m = a.with_layout(a.layout().reshaped(Shape{2, 3}));

  const Array same = empty(rt, Shape{3}, DType::F32);
  const Array r1 = reduce(rt, ReduceOp::Sum, m, 0, false, &same);
  CHECK(r1.buffer() == same.buffer());
  CHECK(raw_elements<float>(rt, same) == std::vector<float>{5.5f, 5.25f, -0.25f});

  const Array as_i32 = empty(rt, Shape{2, 1}, DType::I32);
  reduce(rt, ReduceOp::Sum, m, 1, true, &as_i32);
  CHECK(raw_elements<int32_t>(rt, as_i32) == std::vector<int32_t>{3, 7});  // 3.25 -> 3, 7.25 -> 7

  const Array as_c128 = empty(rt, Shape{}, DType::C128);
  reduce(rt, ReduceOp::Max, m, std::nullopt, false, &as_c128);
  CHECK(element<complex128>(rt, as_c128).re == 4.0);

  // A strided out (a column of a matrix).
  const Array wide = full(rt, Shape{3, 2}, DType::F64, Scalar::integer(-1));
  const Array column = wide.with_layout([&] {
    Layout l = wide.layout().narrow(1, 1, 1);
    l.ndim = 1;  // {3, 1} -> {3}: the stride of the rows stays
    return l;
  }());
  reduce(rt, ReduceOp::Argmax, m, 0, false, &column);
  CHECK(raw_elements<double>(rt, wide) == std::vector<double>{-1, 2, -1, 2, -1, 2});

  // out overlapping the input: the result goes through a temporary.
  const Array row0 = a.with_layout(m.layout().select(0));
  reduce(rt, ReduceOp::Sum, m, 0, false, &row0);
  CHECK(raw_elements<float>(rt, a) == std::vector<float>{5.5f, 5.25f, -0.25f, 4.0f, 3.0f, 0.25f});

  // Host input, pinned out.
  const Array h = f32_array(rt, {1, 2, 3}, Location::Pageable);
  const Array pinned = empty(rt, Shape{}, DType::I64, Location::Pinned);
  reduce(rt, ReduceOp::Sum, h, std::nullopt, false, &pinned);
  CHECK(*static_cast<const int64_t*>(pinned.data()) == 6);

  // Wrong shape or location.
  const Array wrong = empty(rt, Shape{2}, DType::F32);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, m, 0, false, &wrong); }) == ErrorKind::Value);
  CHECK_THAT(error_message_of([&] { reduce(rt, ReduceOp::Sum, m, 0, false, &wrong); }),
             Catch::Contains("{2}") && Catch::Contains("{3}"));
  const Array keep = empty(rt, Shape{1, 3}, DType::F32);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, m, 0, false, &keep); }) == ErrorKind::Value);
  const Array host_out = empty(rt, Shape{3}, DType::F32, Location::Pageable);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, m, 0, false, &host_out); }) ==
        ErrorKind::Value);
  const Array dev_out = empty(rt, Shape{}, DType::I64);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, h, std::nullopt, false, &dev_out); }) ==
        ErrorKind::Value);
}

TEST_CASE("reduce: errors", "[reduce]") {
  Runtime rt(host_options());
  const Array c = empty(rt, Shape{4}, DType::C64);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Max, c, std::nullopt, false); }) ==
        ErrorKind::Type);
  CHECK_THAT(error_message_of([&] { reduce(rt, ReduceOp::Argmax, c, std::nullopt, false); }),
             Catch::Contains("argmax") && Catch::Contains("complex") && Catch::Contains("c64"));
  const Array a = full(rt, Shape{2, 3}, DType::F32, Scalar::integer(1));
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, a, 2, false); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, a, -1, false); }) == ErrorKind::Index);
  Array freed = full(rt, Shape{3}, DType::F32, Scalar::integer(1));
  freed.buffer()->release();
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, freed, std::nullopt, false); }) ==
        ErrorKind::Released);
  const Array out = empty(rt, Shape{}, DType::F32);
  out.buffer()->release();
  CHECK(error_kind_of([&] { reduce(rt, ReduceOp::Sum, a, std::nullopt, false, &out); }) ==
        ErrorKind::Released);
  // The runtime keeps working.
  CHECK(element<float>(rt, reduce(rt, ReduceOp::Sum, a, std::nullopt, false)) == 6.0f);
}

TEST_CASE("reduce: device arrays are reduced on the stream without waiting", "[reduce]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  const Array a = full(rt, Shape{1000}, DType::F32, Scalar::integer(2), Location::Device, s.get());
  sleep(rt, 0.2, s.get());
  const auto t0 = Clock::now();
  const Array r = reduce(rt, ReduceOp::Sum, a, std::nullopt, false, nullptr, s.get());
  CHECK(ms_since(t0) < 100);
  CHECK(r.location() == Location::Device);
  s->synchronize();
  CHECK(element<float>(rt, r) == 2000.0f);
}
