// The CUDA backend's choice of reduction functors (kernels/reduce_precompiled.cuh), checked on the
// host: for every op and dtype, the functor it compiles (a hot one of its own, or a family taking
// the op at run time) defines the same ops and gives the same bits as the functor of
// dispatch_op_typed (reduce.cuh, the host backend's), step by step in the same order.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "core/backend/reduce_call.hpp"
#include "core/model/dtype.hpp"
#include "kernels/reduce.cuh"
#include "kernels/reduce_precompiled.cuh"

using namespace culua::detail;
using namespace culua::detail::kernels;

namespace {

constexpr ReduceOp kOps[] = {
    ReduceOp::Sum,    ReduceOp::Mean,    ReduceOp::Max,    ReduceOp::Min,     ReduceOp::Prod,
    ReduceOp::Norm,   ReduceOp::Argmax,  ReduceOp::Argmin, ReduceOp::Var,     ReduceOp::Std,
    ReduceOp::Any,    ReduceOp::All,     ReduceOp::NanSum, ReduceOp::NanMean, ReduceOp::NanMax,
    ReduceOp::NanMin, ReduceOp::NanProd, ReduceOp::NanVar, ReduceOp::NanStd};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumReduceOps);

constexpr DType kDTypes[] = {DType::F32,  DType::F64, DType::F16,  DType::BF16, DType::I8,
                             DType::I16,  DType::I32, DType::I64,  DType::U8,   DType::U32,
                             DType::Bool, DType::C64, DType::C128, DType::U16,  DType::U64};

// Elements that exercise the ops: small values (products stay finite), large ones, zeros, both
// infinities and NaNs for the floating types; any bits for the integers.
template <class T>
std::vector<T> elements(std::mt19937_64& rng, int n) {
  std::vector<T> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> small(-2.0, 2.0);
  const double specials[] = {0.0,
                             -0.0,
                             1e30,
                             -1e30,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN(),
                             65504.0,
                             1e-40};
  for (size_t k = 0; k < v.size(); ++k) {  // (v[k], not a reference: std::vector<bool>)
    T x{};
    const uint64_t bits = rng();
    if constexpr (std::is_same_v<T, bool>) {
      x = (bits & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(bits);
    } else {
      const auto real = [&](uint64_t b) {
        return b % 8 == 0 ? specials[(b >> 3) % (sizeof specials / sizeof specials[0])]
                          : small(rng);
      };
      if constexpr (is_complex_element<T>::value) {
        using P = decltype(T{}.re);
        x = T{static_cast<P>(real(bits)), static_cast<P>(real(bits >> 16))};
      } else {
        x = convert<T>(real(bits));
      }
    }
    v[k] = x;
  }
  return v;
}

// A reduction with the functor, in a fixed order like the kernels': four interleaved partials
// folded by a tree, each partial's elements folded in chunks, then the result's bytes.
template <class Op>
std::vector<unsigned char> run(const Op& op, const std::vector<typename Op::In>& data, DType out) {
  using Acc = typename Op::Acc;
  const int64_t n = static_cast<int64_t>(data.size());
  Acc part[4] = {op.identity(), op.identity(), op.identity(), op.identity()};
  // The first 16 bytes as the kernels' vector loads take them: loaded and combined by a tree (the
  // families in one call, load16).
  using In = typename Op::In;
  constexpr int V = sizeof(In) >= 16 ? 1 : static_cast<int>(16 / sizeof(In));
  int64_t first = 0;
  if (n >= V) {
    In x[V];
    for (int j = 0; j < V; ++j) x[j] = data[static_cast<size_t>(j)];
    Acc head;
    if constexpr (requires { op.load16(reduce::Bytes16x{}, 0); }) {
      static_assert(sizeof x == sizeof(reduce::Bytes16x));
      reduce::Bytes16x raw;
      std::memcpy(&raw, x, sizeof raw);
      head = op.load16(raw, 0);
    } else {
      Acc t[V];
      for (int j = 0; j < V; ++j) t[j] = op.load(x[j], j);
      for (int h = 1; h < V; h *= 2) {
        for (int j = 0; j + h < V; j += 2 * h) t[j] = op.combine(t[j], t[j + h]);
      }
      head = t[0];
    }
    part[0] = op.combine(part[0], head);
    first = V;
  }
  for (int64_t i = first; i < n; ++i) {
    part[i % 4] = op.combine(part[i % 4], op.load(data[static_cast<size_t>(i)], i));
  }
  Acc total = op.combine(op.combine(part[0], part[1]), op.combine(part[2], part[3]));
  total = op.combine(op.identity(), total);
  std::vector<unsigned char> bytes(itemsize(out));
  if constexpr (requires { Op::kStores; }) {
    op.store(bytes.data(), 0, total, n);
  } else {
    const typename Op::Out r = op.finalize(total, n);
    REQUIRE(sizeof r == bytes.size());
    std::memcpy(bytes.data(), &r, sizeof r);
  }
  return bytes;
}

// Equal bits, or NaN in the same parts: which NaN an operation on two NaNs gives is up to the host
// compiler's operand order (the GPU gives its one canonical NaN).
bool same_result(DType t, const std::vector<unsigned char>& a,
                 const std::vector<unsigned char>& b) {
  if (a == b) return true;
  return dispatch(t, [&](auto tag) {
    using R = typename decltype(tag)::type;
    R x, y;
    std::memcpy(&x, a.data(), sizeof x);
    std::memcpy(&y, b.data(), sizeof y);
    if constexpr (is_complex_element<R>::value) {
      const auto part = [](auto p, auto q) { return p == q || (p != p && q != q); };
      return part(x.re, y.re) && part(x.im, y.im);
    } else if constexpr (is_small_float<R>::value) {
      const float p = x.to_float(), q = y.to_float();
      return p != p && q != q;
    } else if constexpr (std::is_floating_point_v<R>) {
      return x != x && y != y;
    } else {
      return false;
    }
  });
}

template <class T>
void check_type(DType dt) {
  std::mt19937_64 rng(1234 + static_cast<int>(dt));
  for (ReduceOp op : kOps) {
    // The result dtype (the core's rule); ops it rejects must be undefined for both.
    bool valid = true;
    DType out = DType::F64;
    try {
      out = reduce_result_dtype(op, dt);
    } catch (const std::exception&) {  // Error(Type): complex max, ...
      valid = false;
    }
    for (int n : {0, 1, 7, 100, 1000}) {
      const std::vector<T> data = elements<T>(rng, n);
      for (double correction : {0.0, 1.0}) {
        CAPTURE(name(dt), op_name(op), n, correction);
        std::vector<unsigned char> want, got;
        const std::type_info* want_type = nullptr;
        const bool want_defined =
            reduce::dispatch_op_typed<T>(op, correction, false, [&](const auto& f) {
              want = run(f, data, out);
              want_type = &typeid(f);
              return true;
            });
        bool hot = false;
        const bool got_defined =
            reduce::dispatch_precompiled<T>(op, correction, false, [&](const auto& f, auto tag) {
              got = run(f, data, out);
              hot = std::is_same_v<decltype(tag), reduce::Hot>;
              if (hot) CHECK(typeid(f) == *want_type);  // the same functor, its own kernels
              return true;
            });
        REQUIRE(want_defined == got_defined);
        if (!valid) continue;
        REQUIRE(got_defined);
        CHECK(same_result(out, want, got));
      }
    }
  }
}

}  // namespace

TEST_CASE("the CUDA backend's reduction functors give the host functors' bits",
          "[reduce][precompiled]") {
  for (DType dt : kDTypes) {
    dispatch(dt, [&](auto tag) { check_type<typename decltype(tag)::type>(dt); });
  }
}

TEST_CASE("hot reductions keep functors of their own", "[reduce][precompiled]") {
  const auto is_hot = [](DType dt, ReduceOp op) {
    return dispatch(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      bool hot = false;
      reduce::dispatch_precompiled<T>(op, 0.0, 0, [&](const auto&, auto t) {
        hot = std::is_same_v<decltype(t), reduce::Hot>;
        return 0;
      });
      return hot;
    });
  };
  for (DType dt : {DType::F32, DType::F64, DType::I64}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min,
                        ReduceOp::Argmax, ReduceOp::Argmin}) {
      CAPTURE(name(dt), op_name(op));
      CHECK(is_hot(dt, op));
    }
  }
  CHECK(is_hot(DType::C64, ReduceOp::Sum));
  CHECK(is_hot(DType::C64, ReduceOp::Mean));
  CHECK(is_hot(DType::F32, ReduceOp::Any));
  CHECK(is_hot(DType::Bool, ReduceOp::Any));
  CHECK(is_hot(DType::F32, ReduceOp::Std));
  CHECK_FALSE(is_hot(DType::F32, ReduceOp::Prod));
  CHECK_FALSE(is_hot(DType::F16, ReduceOp::Sum));
  CHECK_FALSE(is_hot(DType::F32, ReduceOp::NanSum));
}
