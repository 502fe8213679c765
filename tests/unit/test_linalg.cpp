// Matrix products on the host backend (OpenBLAS): matmul of every dtype against a double
// reference over random shapes, batches, broadcasts, transposes and views; views used in place
// without temporaries; f32 accumulation of f16; dot; and the errors.
#include "helpers.hpp"

#include <cmath>
#include <complex>
#include <random>

#include "core/ops/linalg.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

using cdouble = std::complex<double>;

// Elements of any float/complex array (any layout) as complex doubles, row-major.
std::vector<cdouble> read_values(Runtime& rt, const Array& a) {
  const std::vector<unsigned char> bytes = read_contiguous(rt, a);
  std::vector<cdouble> out(static_cast<size_t>(a.size()));
  dispatch(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      if constexpr (is_complex_element<T>::value) {
        out[i] = {static_cast<double>(v.re), static_cast<double>(v.im)};
      } else if constexpr (std::is_same_v<T, bool>) {
        out[i] = v ? 1.0 : 0.0;
      } else {
        out[i] = static_cast<double>(real_value(v));
      }
    }
  });
  return out;
}

void write_values(Runtime& rt, const Array& a, const std::vector<cdouble>& v) {
  std::vector<unsigned char> bytes(a.nbytes());
  dispatch(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) {
      T x;
      if constexpr (is_complex_element<T>::value) {
        x = convert<T>(complex128{v[i].real(), v[i].imag()});
      } else {
        x = convert<T>(v[i].real());
      }
      std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
  });
  copy(rt, a,
       Array::wrap(rt.backend_ptr(), bytes.data(), a.shape(), a.dtype(), Location::Pageable, 0));
}

Array random_array(Runtime& rt, const Shape& shape, DType t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cdouble> v(static_cast<size_t>(shape.numel()));
  for (auto& x : v) x = is_complex(t) ? cdouble(u(rng), u(rng)) : cdouble(u(rng), 0.0);
  Array a = empty(rt, shape, t);
  write_values(rt, a, v);
  return a;
}

// Per-dtype tolerance relative to sum_k |a_ik| |b_kj| (see tests/lua/linalg_support.lua).
double tolerance(DType t) {
  switch (t) {
    case DType::F64:
    case DType::C128:
      return 1e-13;
    case DType::F32:
    case DType::C64:
      return 2e-6;
    case DType::F16:
      return 1e-2;
    default:
      return 3e-2;
  }
}

// numpy matmul of the logical operands (read through their views) in double.
struct Reference {
  Shape shape;
  std::vector<cdouble> values;
  std::vector<double> scale;
};

Reference reference(Runtime& rt, const Array& a, const Array& b, cdouble alpha = 1.0,
                    cdouble beta = 0.0, const std::vector<cdouble>* old = nullptr) {
  const auto av = read_values(rt, a), bv = read_values(rt, b);
  Shape as = a.shape(), bs = b.shape();
  const bool a1 = as.ndim == 1, b1 = bs.ndim == 1;
  if (a1) as = Shape{1, as[0]};
  if (b1) bs = Shape{bs[0], 1};
  const int64_t M = as[as.ndim - 2], K = as[as.ndim - 1], N = bs[bs.ndim - 1];
  const int na = as.ndim - 2, nb = bs.ndim - 2, n = std::max(na, nb);
  std::vector<int64_t> batch(static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) {
    const int da = d - (n - na), db = d - (n - nb);
    const int64_t ea = da >= 0 ? as[da] : 1, eb = db >= 0 ? bs[db] : 1;
    batch[static_cast<size_t>(d)] = ea == 1 ? eb : ea;
  }
  Reference r;
  for (int d = 0; d < n; ++d) r.shape.push(batch[static_cast<size_t>(d)]);
  if (!a1) r.shape.push(M);
  if (!b1) r.shape.push(N);
  int64_t total = 1;
  for (int64_t e : batch) total *= e;
  for (int64_t bi = 0; bi < total; ++bi) {
    int64_t rest = bi, la = 0, lb = 0, stride_a = 1, stride_b = 1;
    for (int d = n - 1; d >= 0; --d) {
      const int64_t i = rest % batch[static_cast<size_t>(d)];
      rest /= batch[static_cast<size_t>(d)];
      const int da = d - (n - na), db = d - (n - nb);
      if (da >= 0) {
        la += (as[da] == 1 ? 0 : i) * stride_a;
        stride_a *= as[da];
      }
      if (db >= 0) {
        lb += (bs[db] == 1 ? 0 : i) * stride_b;
        stride_b *= bs[db];
      }
    }
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        cdouble sum = 0;
        double scale = 0;
        for (int64_t k = 0; k < K; ++k) {
          const cdouble x = av[static_cast<size_t>(la * M * K + i * K + k)];
          const cdouble y = bv[static_cast<size_t>(lb * K * N + k * N + j)];
          sum += x * y;
          scale += std::abs(x) * std::abs(y);
        }
        cdouble v = alpha * sum;
        scale *= std::abs(alpha);
        if (old) {
          const cdouble c = (*old)[r.values.size()];
          v += beta * c;
          scale += std::abs(beta) * std::abs(c);
        }
        r.values.push_back(v);
        r.scale.push_back(scale);
      }
    }
  }
  return r;
}

// The worst error relative to the scale; checks the shape.
double worst_error(Runtime& rt, const Array& got, const Reference& ref) {
  REQUIRE(got.shape() == ref.shape);
  const auto g = read_values(rt, got);
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, std::abs(g[i] - ref.values[i]) / (ref.scale[i] + 1e-300));
  }
  return worst;
}

constexpr DType kGemmDTypes[] = {DType::F32,  DType::F64, DType::F16,
                                 DType::BF16, DType::C64, DType::C128};

uint64_t free_device_bytes(Runtime& rt) {
  return rt.backend().memory_info(Location::Device, 0).free;
}

}  // namespace

TEST_CASE("matmul: random shapes, batches, broadcasts, transposes and views", "[linalg]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(31337);
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  int cases = 0;
  for (DType t : kGemmDTypes) {
    for (int trial = 0; trial < 60; ++trial) {
      const int64_t M = pick(1, 9), K = pick(1, 12), N = pick(1, 9);
      // Batch dimensions (right-aligned) with broadcasting 1s and missing dimensions.
      const int nbatch = static_cast<int>(pick(0, 3));
      Shape ba, bb;
      const int missing_a = static_cast<int>(pick(0, nbatch)),
                missing_b = static_cast<int>(pick(0, nbatch));
      for (int d = 0; d < nbatch; ++d) {
        const int64_t e = pick(1, 3);
        const uint64_t mode = rng() % 3;  // 0: both e, 1: a broadcasts, 2: b broadcasts
        if (d >= missing_a) ba.push(mode == 1 ? 1 : e);
        if (d >= missing_b) bb.push(mode == 2 ? 1 : e);
      }
      const bool a_vec = nbatch == 0 && rng() % 6 == 0, b_vec = nbatch == 0 && rng() % 6 == 0;
      const bool ta = rng() % 2, tb = rng() % 2, view_a = rng() % 2, view_b = rng() % 2;
      // Operand a: logical {.., M, K}; stored transposed when ta (op(a) = a^T) and/or as a view.
      auto make = [&](Shape batch, int64_t r, int64_t c, bool trans, bool view) {
        Shape s = batch;
        const int64_t sr = trans ? c : r, sc = trans ? r : c;
        if (view) {  // the same logical operand through a transposed view
          s.push(sc);
          s.push(sr);
          Array base = random_array(rt, s, t, rng);
          return base.with_layout(base.layout().transpose(s.ndim - 2, s.ndim - 1));
        }
        s.push(sr);
        s.push(sc);
        return random_array(rt, s, t, rng);
      };
      Array a = a_vec ? random_array(rt, Shape{K}, t, rng) : make(ba, M, K, ta, view_a);
      Array b = b_vec ? random_array(rt, Shape{K}, t, rng) : make(bb, K, N, tb, view_b);
      MatmulOptions o;
      o.ta = ta && !a_vec;
      o.tb = tb && !b_vec;
      const Array c = matmul(rt, a, b, o);
      auto logical = [](const Array& x, bool trans) {
        return trans ? x.with_layout(x.layout().transpose(x.ndim() - 2, x.ndim() - 1)) : x;
      };
      const Reference ref = reference(rt, logical(a, o.ta), logical(b, o.tb));
      INFO(name(t) << " a " << a.shape().str() << (o.ta ? " ta" : "") << " b " << b.shape().str()
                   << (o.tb ? " tb" : ""));
      CHECK(worst_error(rt, c, ref) <= tolerance(t));
      ++cases;
    }
  }
  CHECK(cases == 360);
}

TEST_CASE("matmul: alpha, beta and out, complex scalars", "[linalg]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(5);
  for (DType t : kGemmDTypes) {
    INFO(name(t));
    const Array a = random_array(rt, Shape{2, 3, 4}, t, rng);
    const Array b = random_array(rt, Shape{4, 5}, t, rng);
    const Array out = random_array(rt, Shape{2, 3, 5}, t, rng);
    const auto old = read_values(rt, out);
    MatmulOptions o;
    o.out = &out;
    o.alpha = is_complex(t) ? Scalar::complex(0.5, 2) : Scalar::real(0.5);
    o.beta = is_complex(t) ? Scalar::complex(-1, 0.25) : Scalar::integer(-2);
    const Array r = matmul(rt, a, b, o);
    CHECK(r.buffer() == out.buffer());
    const cdouble alpha = is_complex(t) ? cdouble(0.5, 2) : cdouble(0.5);
    const cdouble beta = is_complex(t) ? cdouble(-1, 0.25) : cdouble(-2);
    CHECK(worst_error(rt, out, reference(rt, a, b, alpha, beta, &old)) <= tolerance(t));
  }
}

TEST_CASE("matmul: f32 results of small integers are exact", "[linalg]") {
  Runtime rt(host_options());
  const Array a = empty(rt, Shape{3, 4}, DType::F32);
  const Array b = empty(rt, Shape{4, 2}, DType::F32);
  write_raw<float>(rt, a, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  write_raw<float>(rt, b, {1, -1, 2, 0, 0, 3, -2, 1});
  CHECK(raw_elements<float>(rt, matmul(rt, a, b)) == std::vector<float>{-3, 12, 1, 24, 5, 36});
}

TEST_CASE("matmul: integers wrap in the result dtype, bool is the or of ands", "[linalg]") {
  Runtime rt(host_options());
  const Array a = empty(rt, Shape{2, 3}, DType::I8);
  const Array b = empty(rt, Shape{3, 2}, DType::I8);
  write_raw<int8_t>(rt, a, {100, 100, -128, 1, 2, 3});
  write_raw<int8_t>(rt, b, {2, 1, 3, -1, 1, 127});
  // 200 + 300 - 128 = 372 -> 116; 100 - 100 - 16256 -> -16256 mod 256 = 128 -> -128; 2 + 6 + 3 =
  // 11; 1 - 2 + 381 = 380 -> 124 (numpy's int8 matmul gives the same)
  CHECK(raw_elements<int8_t>(rt, matmul(rt, a, b)) == std::vector<int8_t>{116, -128, 11, 124});
  MatmulOptions o;
  o.alpha = Scalar::integer(-2);
  CHECK(raw_elements<int8_t>(rt, matmul(rt, a, b, o)) == std::vector<int8_t>{24, 0, -22, 8});
  const Array u = empty(rt, Shape{1, 2}, DType::U32);
  const Array v = empty(rt, Shape{2}, DType::U32);
  write_raw<uint32_t>(rt, u, {4000000000u, 3u});
  write_raw<uint32_t>(rt, v, {3u, 5u});
  CHECK(raw_elements<uint32_t>(rt, matmul(rt, u, v)) ==
        std::vector<uint32_t>{static_cast<uint32_t>(12000000015ull)});
  const Array p = empty(rt, Shape{2, 2}, DType::Bool);
  const Array q = empty(rt, Shape{2, 2}, DType::Bool);
  write_raw<uint8_t>(rt, p, {1, 0, 0, 0});  // bool elements are bytes 0 and 1
  write_raw<uint8_t>(rt, q, {0, 1, 1, 1});
  CHECK(raw_elements<uint8_t>(rt, matmul(rt, p, q)) == std::vector<uint8_t>{0, 1, 0, 0});
  // mixed: i8 @ u8 is i16 (no wrap at 8 bits)
  const Array ub = empty(rt, Shape{3, 2}, DType::U8);
  write_raw<uint8_t>(rt, ub, {200, 1, 200, 1, 0, 0});
  const Array m = matmul(rt, a, ub);
  CHECK(m.dtype() == DType::I16);
  CHECK(raw_elements<int16_t>(rt, m) == std::vector<int16_t>{-25536, 200, 600, 3});
  // alpha must be an integer the dtype holds
  MatmulOptions bad;
  bad.alpha = Scalar::real(0.5);
  CHECK(error_kind_of([&] { matmul(rt, a, b, bad); }) == ErrorKind::Value);
  bad.alpha = Scalar::integer(128);
  CHECK(error_message_of([&] { matmul(rt, a, b, bad); }).find("out of range for a i8 matmul") !=
        std::string::npos);
}

TEST_CASE("matmul: f16 and bf16 accumulate in f32", "[linalg]") {
  Runtime rt(host_options());
  // 4096 ones: an f16 accumulator would stop at 2048 (2048 + 1 rounds back to 2048).
  for (DType t : {DType::F16, DType::BF16}) {
    const Array a = full(rt, Shape{2, 4096}, t, Scalar::integer(1));
    const Array b = full(rt, Shape{4096, 3}, t, Scalar::integer(1));
    for (const cdouble& v : read_values(rt, matmul(rt, a, b))) CHECK(v.real() == 4096.0);
  }
}

TEST_CASE("matmul: transposed and narrowed views are used in place", "[linalg]") {
  Runtime rt(host_options(uint64_t{1} << 30));
  std::mt19937_64 rng(8);
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  const Array base_a = random_array(rt, Shape{3, 40, 32}, DType::F32, rng);
  const Array base_b = random_array(rt, Shape{24, 40}, DType::F32, rng);
  const Array at = base_a.with_layout(base_a.layout().transpose(1, 2));   // {3,32,40}
  const Array bt = base_b.with_layout(base_b.layout().transpose(0, 1));   // {40,24}
  const Array bn = base_b.with_layout(base_b.layout().narrow(1, 3, 30));  // {24,30}, ld 40
  const Array ab = base_a.with_layout(base_a.layout().transpose(0, 1));   // {40,3,32}
  rt.backend().synchronize_device(0);
  // Frees of temporaries would be queued behind this on `s`: their bytes still count below.
  sleep(rt, 0.3, s.get());
  auto added = [&](const Array& x, const Array& y, bool ta = false) {
    const uint64_t before = free_device_bytes(rt);
    MatmulOptions o;
    o.stream = s.get();
    o.ta = ta;
    const Array c = matmul(rt, x, y, o);
    return std::pair<uint64_t, uint64_t>(before - free_device_bytes(rt), c.nbytes());
  };
  const Array sel = base_a.with_layout(base_a.layout().select(0).transpose(0, 1));  // {32,40}
  for (const auto& [used, result] :
       {added(at, bt), added(bt, bn), added(base_b, bn, true), added(ab, sel)}) {
    CHECK(used == result);
  }
  // {32,40,3} with strides {1,32,1280}: matrices neither row- nor column-major are copied (a
  // temporary of the operand's size).
  const Array odd = base_a.with_layout(base_a.layout().transpose(0, 2));
  const Array m = random_array(rt, Shape{3, 5}, DType::F32, rng);
  const auto [used, result] = added(odd, m);
  CHECK(used == result + odd.nbytes());
  s->synchronize();
  CHECK(worst_error(rt, matmul(rt, odd, m), reference(rt, odd, m)) <= 2e-6);
  CHECK(worst_error(rt, matmul(rt, at, bt), reference(rt, at, bt)) <= 2e-6);
  CHECK(worst_error(rt, matmul(rt, ab, sel), reference(rt, ab, sel)) <= 2e-6);
  MatmulOptions ta;
  ta.ta = true;
  CHECK(worst_error(rt, matmul(rt, base_b, bn, ta),
                    reference(rt, base_b.with_layout(base_b.layout().transpose(0, 1)), bn)) <=
        2e-6);
}

TEST_CASE("dot: every dtype", "[linalg]") {
  Runtime rt(host_options());
  std::mt19937_64 rng(3);
  for (DType t : kGemmDTypes) {
    INFO(name(t));
    const Array base = random_array(rt, Shape{50, 3}, t, rng);
    const Array x = base.with_layout(base.layout().transpose(0, 1).select(1));  // stride 3
    const Array y = random_array(rt, Shape{50}, t, rng);
    const Array d = dot(rt, x, y);
    CHECK(d.ndim() == 0);
    CHECK(d.location() == Location::Device);
    const auto xv = read_values(rt, x), yv = read_values(rt, y);
    cdouble want = 0;
    double scale = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
      want += xv[i] * yv[i];
      scale += std::abs(xv[i]) * std::abs(yv[i]);
    }
    CHECK(std::abs(read_values(rt, d)[0] - want) <= tolerance(t) * scale);
  }
  const Array i8 = full(rt, Shape{3}, DType::I8, Scalar::integer(100));
  const Array two = full(rt, Shape{3}, DType::I8, Scalar::integer(2));
  CHECK(read_element(rt, dot(rt, i8, two)).i == static_cast<int8_t>(600 & 0xFF));
  const Array e = empty(rt, Shape{0}, DType::F64);
  CHECK(read_element(rt, dot(rt, e, e)).re == 0.0);
}

TEST_CASE("matmul and dot errors", "[linalg]") {
  Runtime rt(host_options());
  const Array a = full(rt, Shape{2, 3}, DType::F32, Scalar::integer(1));
  const Array b = full(rt, Shape{3, 4}, DType::F32, Scalar::integer(1));
  const Array b64 = full(rt, Shape{3, 4}, DType::F64, Scalar::integer(1));
  CHECK(matmul(rt, a, b64).dtype() == DType::F64);  // mixed dtypes promote
  const Array ai = full(rt, Shape{2, 3}, DType::I32, Scalar::integer(1));
  CHECK(error_kind_of([&] { matmul(rt, ai, ai); }) == ErrorKind::Value);
  CHECK(error_message_of([&] { matmul(rt, a, a); }).find("{2,3} has 3 columns") !=
        std::string::npos);
  const Array host = full(rt, Shape{3, 4}, DType::F32, Scalar::integer(1), Location::Pinned);
  CHECK(error_message_of([&] { matmul(rt, a, host); }).find("call to_device() first") !=
        std::string::npos);
  MatmulOptions o;
  o.beta = Scalar::integer(1);
  CHECK(error_message_of([&] { matmul(rt, a, b, o); }).find("beta needs out=") !=
        std::string::npos);
  MatmulOptions ot;
  ot.tf32 = true;
  const Array a64 = full(rt, Shape{2, 3}, DType::F64, Scalar::integer(1));
  CHECK(error_message_of([&] { matmul(rt, a64, b64, ot); }) ==
        "tf32=true needs f32 operands, not f64");
  CHECK(error_kind_of([&] { dot(rt, a, a); }) == ErrorKind::Value);
  const Array v = full(rt, Shape{3}, DType::Bool, Scalar::boolean(true));
  CHECK(error_kind_of([&] { dot(rt, v, v); }) == ErrorKind::Value);
}

TEST_CASE("matmul: products on several streams at once", "[linalg]") {
  // Each host stream is a worker thread: OpenBLAS is called from several threads concurrently.
  Runtime rt(host_options());
  std::mt19937_64 rng(12);
  std::vector<std::shared_ptr<Stream>> streams;
  for (int i = 0; i < 4; ++i)
    streams.push_back(rt.backend().create_stream(0, StreamPriority::Normal));
  const Array a = random_array(rt, Shape{96, 128}, DType::F64, rng);
  const Array b = random_array(rt, Shape{128, 80}, DType::F32, rng);
  const Array a32 = astype(rt, a, DType::F32);
  std::vector<Array> results;
  for (int round = 0; round < 8; ++round) {
    for (auto& s : streams) {
      MatmulOptions o;
      o.stream = s.get();
      results.push_back(matmul(rt, a32, b, o));
    }
  }
  rt.backend().synchronize_device(0);
  const Reference ref = reference(rt, a32, b);
  for (const Array& r : results) CHECK(worst_error(rt, r, ref) <= tolerance(DType::F32));
}
