// Elementwise kernels as element functors, for both backends. Three shapes of work:
//  - fast: every array operand and the output are contiguous, inputs of the compute type and the
//    output of the result type (the common case). The hot combinations (kHotBinary, kHotUnary:
//    docs/design.md lists them) get one functor per (operation, type), on CUDA a kernel of their
//    own with 16-byte vector loads and stores; every other valid combination runs through one
//    functor per type that picks the operation at run time (BinarySwitch, UnarySwitch), vectorized
//    the same way.
//  - general: any strides (broadcasting is a stride of 0), any input and output dtypes (converted
//    on load and store). One functor per compute type with the operation chosen at run time.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/backend/elementwise_call.hpp"
#include "kernels/elementwise_access.cuh"
#include "kernels/elementwise_ops.cuh"
#include "kernels/functors.cuh"

namespace culua::detail::kernels {

// ---- which combinations get kernels of their own ------------------------------------------------
// Dedicated fast kernels for what scripts hit hard (the suite, the experiments, the tests):
// arithmetic, maximum/minimum, power and comparisons on f32, f64, c64, i32, i64 and bool, the four
// arithmetic operations on f16 and bf16, and neg/abs/exp/sqrt/square/conj on the first six types.
// Everything else valid runs through the switch functors below (one kernel per type).
template <class S>
inline constexpr bool kHotType =
    std::is_same_v<S, float> || std::is_same_v<S, double> || std::is_same_v<S, complex64> ||
    std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t> || std::is_same_v<S, bool>;
template <class S>
inline constexpr bool kHotHalfType = std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;
template <class Op>
inline constexpr bool kHotArithmetic = std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ||
                                       std::is_same_v<Op, MulOp> || std::is_same_v<Op, DivOp>;
template <class Op>
inline constexpr bool kHotBinaryOp =
    kHotArithmetic<Op> || std::is_same_v<Op, PowOp> || std::is_same_v<Op, MaximumOp> ||
    std::is_same_v<Op, MinimumOp> || std::is_same_v<Op, EqOp> || std::is_same_v<Op, NeOp> ||
    std::is_same_v<Op, LtOp> || std::is_same_v<Op, LeOp> || std::is_same_v<Op, GtOp> ||
    std::is_same_v<Op, GeOp>;
template <class Op>
inline constexpr bool kHotUnaryOp =
    std::is_same_v<Op, NegOp> || std::is_same_v<Op, AbsOp> || std::is_same_v<Op, ExpOp> ||
    std::is_same_v<Op, SqrtOp> || std::is_same_v<Op, SquareOp> || std::is_same_v<Op, ConjOp>;
template <class Op, class S>
inline constexpr bool kHotBinary = op_valid<Op, compute_t<S>> &&
                                   ((kHotType<S> && kHotBinaryOp<Op>) ||
                                    (kHotHalfType<S> && kHotArithmetic<Op>));
template <class Op, class S>
inline constexpr bool kHotUnary = op_valid<Op, compute_t<S>>&& kHotType<S>&& kHotUnaryOp<Op>;

// ---- light and heavy operations ------------------------------------------------------------
// Outside the hot list, an operation whose code is large (math-library functions, division and
// power, every complex operation: C99 Annex G) is called, not inlined: one __noinline__ device
// function per (operation, compute type) in each kernel file, called from every kernel that
// evaluates it (the switch kernels, the general path, the 2-D rows and tiles). Inlined, each of
// those kernels held its own copy of every operation, unrolled over a vector (8 copies in the
// half-precision switch kernel), and ptxas spent most of the build compiling them
// (elementwise_cuda_half.cu was 18 MB of PTX, 2 MB of it the tiles kernel). Light operations
// (arithmetic, comparisons, bit and logical operations, rounding, sign tests of real types) stay
// inline everywhere: a call would cost more than they do. The hot combinations are always inline.
template <class Op>
inline constexpr bool kLightOp =
    std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> || std::is_same_v<Op, MulOp> ||
    std::is_same_v<Op, MaximumOp> || std::is_same_v<Op, MinimumOp> ||
    std::is_same_v<Op, CopysignOp> || std::is_same_v<Op, BitAndOp> || std::is_same_v<Op, BitOrOp> ||
    std::is_same_v<Op, BitXorOp> || std::is_same_v<Op, ShlOp> || std::is_same_v<Op, ShrOp> ||
    std::is_same_v<Op, EqOp> || std::is_same_v<Op, NeOp> || std::is_same_v<Op, LtOp> ||
    std::is_same_v<Op, LeOp> || std::is_same_v<Op, GtOp> || std::is_same_v<Op, GeOp> ||
    std::is_same_v<Op, LogicalAndOp> || std::is_same_v<Op, LogicalOrOp> ||
    std::is_same_v<Op, LogicalXorOp> || std::is_same_v<Op, NegOp> || std::is_same_v<Op, AbsOp> ||
    std::is_same_v<Op, ConjOp> || std::is_same_v<Op, RealOp> || std::is_same_v<Op, ImagOp> ||
    std::is_same_v<Op, SquareOp> || std::is_same_v<Op, PositiveOp> || std::is_same_v<Op, SignOp> ||
    std::is_same_v<Op, FloorOp> || std::is_same_v<Op, CeilOp> || std::is_same_v<Op, TruncOp> ||
    std::is_same_v<Op, RoundOp> || std::is_same_v<Op, SignbitOp> || std::is_same_v<Op, IsnanOp> ||
    std::is_same_v<Op, IsinfOp> || std::is_same_v<Op, IsfiniteOp> ||
    std::is_same_v<Op, BitInvertOp> || std::is_same_v<Op, LogicalNotOp>;
template <class Op, class S>
inline constexpr bool kOutlined = !(kHotBinary<Op, S> || kHotUnary<Op, S>)&&!(
    kLightOp<Op> && !is_complex_element<compute_t<S>>::value);

#if defined(__CUDACC__)
template <class Op, class C>
__device__ __noinline__ auto outlined_apply(C x, C y) {
  return Op::apply(x, y);
}
template <class Op, class C>
__device__ __noinline__ auto outlined_apply(C x) {
  return Op::apply(x);
}
#endif

// Op::apply on compute values of elements stored as S: a call for the heavy operations outside
// the hot list in device code, inline otherwise.
template <class Op, class S, class... C>
CULUA_HD inline auto apply_op(C... x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kOutlined<Op, S>) {
    return outlined_apply<Op, compute_t<S>>(x...);
  } else {
    return Op::apply(x...);
  }
#else
  return Op::apply(x...);
#endif
}

// ---- one operation over a few elements, chosen at run time ------------------------------------

// The operation on the elements of `mask` of x (and y), values of the compute type, chosen at run
// time: one switch for all of them, each result written over its input x[k] as a compute value
// (the compute type holds each kind of result exactly: the real part of a complex result, from
// abs, real or imag, as a complex number with imaginary part 0; a bool as 0 or 1). The switch
// returns the kind of result; the stores, after it, are compiled once per kind, not once per
// operation. Results over the inputs keep a thread's registers few: the heavy operations are
// calls, and what is live across a call may spill.
enum : uint8_t { kResultValue = 0, kResultReal = 1, kResultBool = 2 };

template <class C, class R>
constexpr uint8_t result_kind_of() {
  static_assert(std::is_same_v<R, C> || std::is_same_v<R, bool> ||
                    std::is_same_v<R, typename real_type<C>::type>,
                "a result of the compute type, its real part or bool");
  return std::is_same_v<R, C> ? kResultValue : std::is_same_v<R, bool> ? kResultBool : kResultReal;
}
template <class C, class R>
inline constexpr uint8_t result_kind = result_kind_of<C, R>();

template <class S, int N, class C = compute_t<S>>
CULUA_HD inline uint8_t apply_binary(BinaryOp op, C (&x)[N], const C (&y)[N], unsigned mask) {
  static_assert(std::is_same_v<C, compute_t<S>>);
  uint8_t kind = kResultValue;
  visit_binary(op, [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_valid<Op, C>) {
      kind = result_kind<C, decltype(Op::apply(C{}, C{}))>;
      CULUA_UNROLL
      for (int k = 0; k < N; ++k) {
        if (mask >> k & 1u) {
          x[k] = convert<C>(apply_op<Op, S>(x[k], y[k]));
        }
      }
    }
  });
  return kind;
}
template <class S, int N, class C = compute_t<S>>
CULUA_HD inline uint8_t apply_unary(UnaryOp op, C (&x)[N], unsigned mask) {
  static_assert(std::is_same_v<C, compute_t<S>>);
  uint8_t kind = kResultValue;
  visit_unary(op, [&](auto o) {
    using Op = decltype(o);
    if constexpr (op_valid<Op, C>) {
      kind = result_kind<C, decltype(Op::apply(C{}))>;
      CULUA_UNROLL
      for (int k = 0; k < N; ++k) {
        if (mask >> k & 1u) x[k] = convert<C>(apply_op<Op, S>(x[k]));
      }
    }
  });
  return kind;
}

// The dtype a result of this kind is stored as when the output holds the result type (f16/bf16
// results round to the storage type: out_storage_t).
template <class S>
CULUA_HD inline DType result_storage(uint8_t kind) {
  using Re = typename real_type<compute_t<S>>::type;
  return kind == kResultBool ? DType::Bool : kind == kResultReal ? dtype_of<Re>() : dtype_of<S>();
}

// A result into an output of dtype result_storage<S>(kind), at element `off`.
template <class S, class T, class Index>
CULUA_HD inline void store_result(void* base, uint8_t kind, T v, Index off) {
  using C = compute_t<S>;
  using Re = typename real_type<C>::type;
  if (kind == kResultBool) {
    static_cast<bool*>(base)[off] = convert<bool>(v);
    return;
  }
  if constexpr (!std::is_same_v<Re, C>) {
    if (kind == kResultReal) {
      static_cast<Re*>(base)[off] = convert<Re>(v);
      return;
    }
  }
  static_cast<S*>(base)[off] = convert<S>(v);
}

// The results of `mask` to offsets at[k] of an output of any dtype: typed stores when it holds the
// result type; otherwise converted as numpy does, from the result rounded to its type first
// (f16/bf16 compute in float: an out array of another dtype gets the result's value converted,
// not the float intermediate).
template <class S, int N, class T, class Out, class Index>
CULUA_HD inline void store_results(const Out& out, uint8_t kind, const T (&x)[N],
                                   const Index (&at)[N], unsigned mask) {
  using C = compute_t<S>;
  using Re = typename real_type<C>::type;
  if (out.dtype == result_storage<S>(kind)) {
    CULUA_UNROLL
    for (int k = 0; k < N; ++k) {
      if (mask >> k & 1u) store_result<S>(out.data, kind, x[k], at[k]);
    }
    return;
  }
  CULUA_UNROLL
  for (int k = 0; k < N; ++k) {
    if (!(mask >> k & 1u)) continue;
    if (kind == kResultBool) {
      out.store(at[k], convert<bool>(x[k]));
    } else if (!std::is_same_v<Re, C> && kind == kResultReal) {
      out.store(at[k], convert<Re>(x[k]));
    } else {
      out.store(at[k], convert<S>(x[k]));
    }
  }
}

// ---- fast path --------------------------------------------------------------------------------

template <class Op, class S>
struct BinaryFast {
  using C = compute_t<S>;
  using R = decltype(Op::apply(C{}, C{}));
  using O = out_storage_t<S, R>;
  static constexpr int V = kVecWidth<S>;
  O* out;
  const S* a;  // null: the scalar av, or the element *as
  const S* b;
  C av, bv;
  // A one-element array broadcast over the output (a 0-d array: a value that lives on the
  // device, as a graph's per-launch values do), read once per call; null: none.
  const S* as = nullptr;
  const S* bs = nullptr;

  CULUA_HD C first(C v, const S* one) const { return one ? to_compute(*one) : v; }

  CULUA_HD void operator()(int64_t i) const {
    const C x = a ? to_compute(a[i]) : first(av, as);
    const C y = b ? to_compute(b[i]) : first(bv, bs);
    out[i] = convert<O>(apply_op<Op, S>(x, y));
  }
  // Elements [i, i + V) with vector loads; every pointer is aligned to its vector size.
  CULUA_HD void vector(int64_t i) const {
    Vec<S, V> va, vb;
    if (a) va = *reinterpret_cast<const Vec<S, V>*>(a + i);
    if (b) vb = *reinterpret_cast<const Vec<S, V>*>(b + i);
    const C sa = first(av, as), sb = first(bv, bs);
    Vec<O, V> r;
    CULUA_UNROLL
    for (int k = 0; k < V; ++k) {
      const C x = a ? to_compute(va.v[k]) : sa;
      const C y = b ? to_compute(vb.v[k]) : sb;
      r.v[k] = convert<O>(apply_op<Op, S>(x, y));
    }
    *reinterpret_cast<Vec<O, V>*>(out + i) = r;
  }
  bool aligned() const {
    return is_aligned(out, sizeof(O) * V) && is_aligned(a, sizeof(S) * V) &&
           is_aligned(b, sizeof(S) * V);
  }
  static bool is_aligned(const void* p, size_t n) {
    return reinterpret_cast<uintptr_t>(p) % n == 0;
  }
};

template <class Op, class S>
struct UnaryFast {
  using C = compute_t<S>;
  using R = decltype(Op::apply(C{}));
  using O = out_storage_t<S, R>;
  static constexpr int V = kVecWidth<S>;
  O* out;
  const S* a;

  CULUA_HD void operator()(int64_t i) const {
    out[i] = convert<O>(apply_op<Op, S>(to_compute(a[i])));
  }
  CULUA_HD void vector(int64_t i) const {
    const Vec<S, V> va = *reinterpret_cast<const Vec<S, V>*>(a + i);
    Vec<O, V> r;
    CULUA_UNROLL
    for (int k = 0; k < V; ++k) r.v[k] = convert<O>(apply_op<Op, S>(to_compute(va.v[k])));
    *reinterpret_cast<Vec<O, V>*>(out + i) = r;
  }
  bool aligned() const {
    return reinterpret_cast<uintptr_t>(out) % (sizeof(O) * V) == 0 &&
           reinterpret_cast<uintptr_t>(a) % (sizeof(S) * V) == 0;
  }
};

template <class S>
struct WhereFast {
  S* out;
  const uint8_t* cond;  // bool elements, read as bytes (any nonzero byte is true); null: cv
  const S* x;           // null: the scalar xv (already of type S)
  const S* y;
  bool cv;
  S xv, yv;

  CULUA_HD void operator()(int64_t i) const {
    const bool c = cond ? cond[i] != 0 : cv;
    out[i] = c ? (x ? x[i] : xv) : (y ? y[i] : yv);
  }
};

// CULUA_ELEMENTWISE_SWITCH=1 in the environment sends the hot combinations through the switch
// functors too (to measure and test that path; docs/design.md).
inline bool switch_only() {
  static const bool on = [] {
    const char* v = std::getenv("CULUA_ELEMENTWISE_SWITCH");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

// The fast path of the operation chosen at run time: with_op(body) calls body(BinaryFast<Op, S>)
// for this call's operation (one uniform branch per thread on CUDA, one per call on the host).
template <class S>
struct BinarySwitch {
  using C = compute_t<S>;
  static constexpr int V = kVecWidth<S>;
  BinaryOp op;
  void* out;
  const S* a;
  const S* b;
  C av, bv;
  const S* as;
  const S* bs;

  template <class Body>
  CULUA_HD void with_op(Body&& body) const {
    visit_binary(op, [&](auto o) {
      using Op = decltype(o);
      if constexpr (op_valid<Op, C>) {
        using F = BinaryFast<Op, S>;
        body(F{static_cast<typename F::O*>(out), a, b, av, bv, as, bs});
      }
    });
  }
};

template <class S>
struct UnarySwitch {
  using C = compute_t<S>;
  static constexpr int V = kVecWidth<S>;
  UnaryOp op;
  void* out;
  const S* a;

  template <class Body>
  CULUA_HD void with_op(Body&& body) const {
    visit_unary(op, [&](auto o) {
      using Op = decltype(o);
      if constexpr (op_valid<Op, C>) {
        using F = UnaryFast<Op, S>;
        body(F{static_cast<typename F::O*>(out), a});
      }
    });
  }
};

// ---- general path -----------------------------------------------------------------------------

// Division by a run-time constant with a multiply and a shift (Granlund-Montgomery), for
// dividends below 2^31.
struct FastDiv32 {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;
  FastDiv32() = default;
  explicit FastDiv32(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  CULUA_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, magic);
#else
    const uint32_t t = static_cast<uint32_t>((uint64_t{n} * magic) >> 32);
#endif
    return (t + n) >> shift;
  }
};

// Element offsets of the row-major index i in K views of one shape (the output and the array
// inputs), decomposing i once for all of them. Index is int64_t, or uint32_t when the element
// count and every offset fit in 31 bits (the decomposition then uses FastDiv32).
template <class Index, int K>
struct OffsetMap {
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
  FastDiv32 div[kMaxDims];
  Index strides[K][kMaxDims] = {};

  OffsetMap(const StridedView* views, int count) {
    ndim = views[0].ndim;
    for (int d = 0; d < ndim; ++d) {
      shape[d] = views[0].shape[d];
      if constexpr (sizeof(Index) == 4) div[d] = FastDiv32(static_cast<uint32_t>(shape[d]));
      for (int k = 0; k < K; ++k) {
        strides[k][d] = k < count ? static_cast<Index>(views[k].strides[d]) : Index(0);
      }
    }
  }
  // The offsets of element i + 1 from those of element i, when both lie in one innermost row
  // (i's innermost coordinate + 1 < its length): one add per view instead of a decomposition.
  CULUA_HD int64_t inner_length() const { return ndim > 0 ? shape[ndim - 1] : 1; }
  CULUA_HD void step(Index (&off)[K]) const {
    CULUA_UNROLL
    for (int k = 0; k < K; ++k) off[k] += ndim > 0 ? strides[k][ndim - 1] : Index(0);
  }
  // Fills off[] and returns the innermost coordinate of element i.
  CULUA_HD int64_t operator()(int64_t i, Index (&off)[K]) const {
    CULUA_UNROLL
    for (int k = 0; k < K; ++k) off[k] = 0;
    Index rest = static_cast<Index>(i);
    Index inner = rest;
    for (int d = ndim - 1; d >= 0; --d) {
      Index q;
      if constexpr (sizeof(Index) == 4) {
        q = div[d].div(rest);
      } else {
        q = rest / shape[d];
      }
      const Index r = rest - q * static_cast<Index>(shape[d]);
      if (d == ndim - 1) inner = r;
      CULUA_UNROLL
      for (int k = 0; k < K; ++k) off[k] += r * strides[k][d];
      rest = q;
    }
    return static_cast<int64_t>(inner);
  }
};

// Can the views be addressed with 32-bit offsets?
inline bool fits_31_bits(const StridedView* views, int count) {
  constexpr int64_t limit = int64_t{1} << 31;
  if (views[0].size >= limit) return false;
  for (int k = 0; k < count; ++k) {
    int64_t extent = 0;
    for (int d = 0; d < views[k].ndim; ++d) {
      if (views[k].strides[d] < 0) return false;
      extent += (views[k].shape[d] - 1) * views[k].strides[d];
    }
    if (extent >= limit) return false;
  }
  return true;
}

// An input of the general path: an array of any dtype (converted on load) or a scalar.
template <class C>
struct DynInput {
  const void* data;  // null: the scalar `value`
  DType dtype;
  C value;
  template <class Index>
  CULUA_HD C load(Index off) const {
    return data ? load_dynamic<C>(data, dtype, static_cast<int64_t>(off)) : value;
  }
};

struct DynOut {
  void* data;
  DType dtype;
  template <class Index, class R>
  CULUA_HD void store(Index off, R v) const {
    store_dynamic(data, dtype, static_cast<int64_t>(off), v);
  }
};

// In each functor, slot 0 of the offset map is the output and slot k + 1 input k (a scalar's
// slot has stride 0 and is never read).
// Runs f(k, off) for elements i0 + k, k < kChunk, below n, of the offset map: the index is
// decomposed once and then stepped along the innermost row. The general functors process a chunk
// per CUDA thread: the offsets first, then the loads, one switch on the operation for the whole
// chunk, then the stores (each of those steps compiled once, not once per operation).
inline constexpr int kChunk = 4;
template <class Map, class Index, int K, class F>
CULUA_HD inline void for_chunk(const Map& map, int64_t i0, int64_t n, Index (&off)[K], F&& f) {
  int64_t pos = map(i0, off);
  const int64_t inner = map.inner_length();
  CULUA_UNROLL
  for (int k = 0; k < kChunk; ++k) {
    if (i0 + k >= n) break;
    if (k > 0) {
      if (++pos < inner) {
        map.step(off);
      } else {
        pos = 0;
        map(i0 + k, off);
      }
    }
    f(k, off);
  }
}

template <class S, class Index>
struct BinaryGeneral {
  using C = compute_t<S>;
  static constexpr bool kChunked = true;
  BinaryOp op;
  OffsetMap<Index, 3> map;
  DynOut out;
  DynInput<C> a, b;

  CULUA_HD void chunk(int64_t i0, int64_t n) const {
    Index off[3], at[kChunk] = {}, ia[kChunk] = {}, ib[kChunk] = {};
    unsigned mask = 0;
    for_chunk(map, i0, n, off, [&](int k, Index(&o3)[3]) {
      at[k] = o3[0];
      ia[k] = o3[1];
      ib[k] = o3[2];
      mask |= 1u << k;
    });
    C x[kChunk], y[kChunk];
    if ((!a.data || a.dtype == dtype_of<S>()) && (!b.data || b.dtype == dtype_of<S>())) {
      // Inputs of the compute type: typed loads, no conversions.
      const S* pa = static_cast<const S*>(a.data);
      const S* pb = static_cast<const S*>(b.data);
      CULUA_UNROLL
      for (int k = 0; k < kChunk; ++k) {
        if (mask >> k & 1u) {
          x[k] = pa ? to_compute(pa[ia[k]]) : a.value;
          y[k] = pb ? to_compute(pb[ib[k]]) : b.value;
        }
      }
    } else {
      CULUA_UNROLL
      for (int k = 0; k < kChunk; ++k) {
        if (mask >> k & 1u) {
          x[k] = a.load(ia[k]);
          y[k] = b.load(ib[k]);
        }
      }
    }
    const uint8_t kind = apply_binary<S>(op, x, y, mask);
    store_results<S>(out, kind, x, at, mask);
  }
};

template <class S, class Index>
struct UnaryGeneral {
  using C = compute_t<S>;
  static constexpr bool kChunked = true;
  UnaryOp op;
  OffsetMap<Index, 2> map;
  DynOut out;
  DynInput<C> a;

  CULUA_HD void chunk(int64_t i0, int64_t n) const {
    Index off[2], at[kChunk] = {}, ia[kChunk] = {};
    unsigned mask = 0;
    for_chunk(map, i0, n, off, [&](int k, Index(&o2)[2]) {
      at[k] = o2[0];
      ia[k] = o2[1];
      mask |= 1u << k;
    });
    C x[kChunk];
    if (a.dtype == dtype_of<S>()) {
      const S* pa = static_cast<const S*>(a.data);
      CULUA_UNROLL
      for (int k = 0; k < kChunk; ++k) {
        if (mask >> k & 1u) x[k] = pa ? to_compute(pa[ia[k]]) : a.value;
      }
    } else {
      CULUA_UNROLL
      for (int k = 0; k < kChunk; ++k) {
        if (mask >> k & 1u) x[k] = a.load(ia[k]);
      }
    }
    const uint8_t kind = apply_unary<S>(op, x, mask);
    store_results<S>(out, kind, x, at, mask);
  }
};

template <class S, class Index>
struct WhereGeneral {
  using C = compute_t<S>;
  OffsetMap<Index, 4> map;
  DynOut out;
  DynInput<bool> cond;
  DynInput<C> x, y;

  CULUA_HD void operator()(int64_t i) const {
    Index off[4];
    map(i, off);
    out.store(off[0], cond.load(off[1]) ? x.load(off[2]) : y.load(off[3]));
  }
};

// ---- dispatch ---------------------------------------------------------------------------------

// Runs the call for compute storage type S through a launcher with
//   int launcher.fast(n, functor)         (contiguous; a hot functor with vector(); aligned when
//                                          Launcher::kVector)
//   int launcher.fast_switch(n, functor)  (the same for a switch functor)
//   int launcher(n, functor)              (element by element, or chunks for kChunked functors)
// that return an error code (0: launched).
template <class S, class Launcher>
int run_elementwise_typed(const ElementwiseCall& c, Launcher&& launch) {
  using C = compute_t<S>;
  const int nin = c.kind == ElementwiseCall::Kind::Unary    ? 1
                  : c.kind == ElementwiseCall::Kind::Binary ? 2
                                                            : 3;
  // Coalesce the output and the array inputs together.
  StridedView views[4];
  int map[3] = {-1, -1, -1};
  int count = 1;
  views[0] = c.out;
  for (int k = 0; k < nin; ++k) {
    if (!c.in[k].is_scalar()) {
      map[k] = count;
      views[count++] = c.in[k].view;
    }
  }
  coalesce(views, count);
  const StridedView& out = views[0];
  const int64_t n = out.size;

  auto contiguous_as = [&](int k, DType t) {
    return map[k] < 0 || (views[map[k]].is_contiguous() && views[map[k]].dtype == t);
  };
  // Input k is one element of type t broadcast over the output (stride 0 everywhere).
  auto single_as = [&](int k, DType t) {
    if (map[k] < 0 || views[map[k]].dtype != t) return false;
    const StridedView& v = views[map[k]];
    for (int d = 0; d < v.ndim; ++d) {
      if (v.strides[d] != 0 && v.shape[d] != 1) return false;
    }
    return true;
  };
  auto ptr = [&](int k) -> const void* { return map[k] < 0 ? nullptr : views[map[k]].data; };
  // The general path: slot 0 is the output, slot k + 1 input k (scalars: stride 0, never read).
  StridedView slots[4];
  slots[0] = views[0];
  for (int k = 0; k < nin; ++k) {
    if (map[k] >= 0) {
      slots[k + 1] = views[map[k]];
    } else {
      slots[k + 1] = views[0];
      slots[k + 1].data = nullptr;
      for (int d = 0; d < kMaxDims; ++d) slots[k + 1].strides[d] = 0;
    }
  }
  const bool narrow_index = fits_31_bits(slots, nin + 1);
  auto input = [&](int k, auto scalar) {
    using T = decltype(scalar);
    return DynInput<T>{slots[k + 1].data, slots[k + 1].dtype, scalar};
  };
  const DynOut dout{views[0].data, views[0].dtype};
  // Launches Functor<uint32_t> or Functor<int64_t> made by make(index_tag, map). The 32-bit
  // offsets (cheaper index arithmetic) only for the hot dtypes: the others compile one general
  // kernel per operation kind, not two.
  auto general = [&](auto make) {
    if constexpr (kHotType<S>) {
      if (narrow_index) return launch(n, make(type_tag<uint32_t>{}));
    }
    return launch(n, make(type_tag<int64_t>{}));
  };
  const DType st = c.compute;
  const bool out_contiguous = out.is_contiguous();

  if (c.kind == ElementwiseCall::Kind::Binary) {
    const auto op = static_cast<BinaryOp>(c.op);
    const C av = scalar_value<S>(c.in[0].scalar);
    const C bv = scalar_value<S>(c.in[1].scalar);
    const bool single0 = n > 1 && single_as(0, st), single1 = n > 1 && single_as(1, st);
    if (out_contiguous && (single0 || contiguous_as(0, st)) && (single1 || contiguous_as(1, st))) {
      const auto* p0 = static_cast<const S*>(ptr(0));
      const auto* p1 = static_cast<const S*>(ptr(1));
      const BinarySwitch<S> sw{op, out.data, single0 ? nullptr : p0, single1 ? nullptr : p1,
                               av, bv,       single0 ? p0 : nullptr, single1 ? p1 : nullptr};
      bool done = false;
      int result = 0;
      visit_binary_host(op, [&](auto o) {
        using Op = decltype(o);
        if constexpr (op_valid<Op, C>) {
          using F = BinaryFast<Op, S>;
          if (out.dtype != dtype_of<typename F::O>()) return;
          const F f{static_cast<typename F::O*>(out.data), sw.a, sw.b, av, bv, sw.as, sw.bs};
          if (std::decay_t<Launcher>::kVector && !f.aligned()) return;  // the general path
          done = true;
          if constexpr (kHotBinary<Op, S>) {
            if (!switch_only()) {
              result = launch.fast(n, f);
              return;
            }
          }
          result = launch.fast_switch(n, sw);
        }
      });
      if (done) return result;
    }
    return general([&](auto tag) {
      using I = typename decltype(tag)::type;
      return BinaryGeneral<S, I>{op, OffsetMap<I, 3>(slots, 3), dout, input(0, av), input(1, bv)};
    });
  }
  if (c.kind == ElementwiseCall::Kind::Unary) {
    const auto op = static_cast<UnaryOp>(c.op);
    if (out_contiguous && map[0] >= 0 && contiguous_as(0, st)) {
      const UnarySwitch<S> sw{op, out.data, static_cast<const S*>(ptr(0))};
      bool done = false;
      int result = 0;
      visit_unary_host(op, [&](auto o) {
        using Op = decltype(o);
        if constexpr (op_valid<Op, C>) {
          using F = UnaryFast<Op, S>;
          if (out.dtype != dtype_of<typename F::O>()) return;
          const F f{static_cast<typename F::O*>(out.data), sw.a};
          if (std::decay_t<Launcher>::kVector && !f.aligned()) return;
          done = true;
          if constexpr (kHotUnary<Op, S>) {
            if (!switch_only()) {
              result = launch.fast(n, f);
              return;
            }
          }
          result = launch.fast_switch(n, sw);
        }
      });
      if (done) return result;
    }
    return general([&](auto tag) {
      using I = typename decltype(tag)::type;
      return UnaryGeneral<S, I>{op, OffsetMap<I, 2>(slots, 2), dout,
                                input(0, scalar_value<S>(c.in[0].scalar))};
    });
  }
  // where(cond, x, y)
  if (out_contiguous && out.dtype == st && contiguous_as(0, DType::Bool) && contiguous_as(1, st) &&
      contiguous_as(2, st)) {
    S xv, yv;
    memcpy(&xv, c.in[1].scalar, sizeof(S));
    memcpy(&yv, c.in[2].scalar, sizeof(S));
    bool cv = false;
    memcpy(&cv, c.in[0].scalar, 1);
    return launch(
        n, WhereFast<S>{static_cast<S*>(out.data), static_cast<const uint8_t*>(ptr(0)),
                        static_cast<const S*>(ptr(1)), static_cast<const S*>(ptr(2)), cv, xv, yv});
  }
  bool cv = false;
  memcpy(&cv, c.in[0].scalar, 1);
  return general([&](auto tag) {
    using I = typename decltype(tag)::type;
    return WhereGeneral<S, I>{OffsetMap<I, 4>(slots, 4), dout, input(0, cv),
                              input(1, scalar_value<S>(c.in[1].scalar)),
                              input(2, scalar_value<S>(c.in[2].scalar))};
  });
}

}  // namespace culua::detail::kernels
