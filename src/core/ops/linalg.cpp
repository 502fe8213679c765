// Matrix products: matmul's checks, scale factors, operand forms and batch strides for BLAS, and
// dot; both launched on the first operand's device.
#include "core/ops/linalg.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "core/backend/blas_call.hpp"
#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

void check_device(const Array& a, const char* role) {
  if (is_host(a.location())) {
    fail(ErrorKind::Value, "device arrays expected; {} is a {} host array: call to_device() first",
         role, location_name(a.location()));
  }
}

void check_same_device(const Array& a, const Array& b, const char* role) {
  if (a.device() != b.device()) {
    fail(ErrorKind::Value, "{} is on device {} but the first operand on device {}", role,
         b.device(), a.device());
  }
}

bool is_integer_product(DType t) {
  return is_integer(t) || t == DType::Bool;
}

// alpha or beta of an integer product: an integer that the result dtype holds exactly, as a
// residue modulo 2^64 (the products wrap in the dtype).
uint64_t integer_scale(const Scalar& v, DType t, const char* what) {
  if (v.kind == Scalar::Kind::Bool)
    fail(ErrorKind::Type, "{} must be a number, not a boolean", what);
  if (v.kind == Scalar::Kind::Complex) {
    fail(ErrorKind::Value, "{} is complex ({}) but the operands are {}", what, v.str(), name(t));
  }
  int64_t iv = v.i;  // a u64 value from 2^63 up (big) keeps its bits: the residue modulo 2^64
  if (v.kind == Scalar::Kind::Float) {
    if (!std::isfinite(v.re) || std::trunc(v.re) != v.re || v.re < -0x1p63 || v.re >= 0x1p63) {
      fail(ErrorKind::Value, "{} must be an integer for a {} matmul, not {}", what, name(t),
           v.str());
    }
    iv = static_cast<int64_t>(v.re);
  }
  dispatch(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using L = std::numeric_limits<T>;
      const bool fits =
          v.big ? std::is_same_v<T, uint64_t>
          : std::is_signed_v<T>
              ? iv >= static_cast<int64_t>(L::min()) && iv <= static_cast<int64_t>(L::max())
              : iv >= 0 && static_cast<uint64_t>(iv) <= static_cast<uint64_t>(L::max());
      if (!fits)
        fail(ErrorKind::Value, "{} {} is out of range for a {} matmul", what, v.str(), name(t));
    }
  });
  return static_cast<uint64_t>(iv);
}

void scalar_parts(const Scalar& v, DType t, const char* what, double out[2]) {
  if (v.kind == Scalar::Kind::Bool)
    fail(ErrorKind::Type, "{} must be a number, not a boolean", what);
  if (v.kind == Scalar::Kind::Complex && !is_complex(t)) {
    fail(ErrorKind::Value, "{} is complex ({}) but the operands are {}", what, v.str(), name(t));
  }
  out[0] = v.as_double();
  out[1] = v.kind == Scalar::Kind::Complex ? v.im : 0.0;
  // f32, f16, bf16 and c64 products scale in f32 (cuBLAS's compute type).
  const bool f32_scale = t != DType::F64 && t != DType::C128;
  constexpr double kMax = std::numeric_limits<float>::max();
  if (f32_scale && (std::fabs(out[0]) > kMax || std::fabs(out[1]) > kMax) &&
      std::isfinite(out[0]) && std::isfinite(out[1])) {
    fail(ErrorKind::Value, "{} {} is beyond the f32 range of a {} matmul's scale factors", what,
         v.str(), name(t));
  }
}

// The operand as a matrix (or batch of matrices): a 1-D operand becomes a row (a) or a column (b)
// vector; `transpose` swaps the last two dimensions.
Layout as_matrices(const Layout& l, bool row_vector, bool transpose) {
  if (l.ndim == 1) {
    Layout m;
    m.ndim = 2;
    m.offset = l.offset;
    const int v = row_vector ? 1 : 0;  // the vector's dimension
    m.shape[static_cast<size_t>(v)] = l.shape[0];
    m.strides[static_cast<size_t>(v)] = l.strides[0];
    m.shape[static_cast<size_t>(1 - v)] = 1;
    m.strides[static_cast<size_t>(1 - v)] = 1;  // never stepped over
    return m;
  }
  return transpose ? l.transpose(l.ndim - 2, l.ndim - 1) : l;
}

// How a logical R x C matrix with strides (sr, sc) is a BLAS operand. Row-major memory is the
// column-major X^T with ld = sr (trans = false in the swapped product C^T = B^T A^T); column-major
// memory is X with ld = sc (trans = true).
struct MatrixForm {
  bool ok = false;
  bool trans = false;
  int64_t ld = 1;
};

MatrixForm matrix_form(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
  if (rows == 0 || cols == 0) return {true, false, std::max<int64_t>(1, cols)};
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= cols)) {
    return {true, false, rows == 1 ? cols : sr};
  }
  if ((sr == 1 || rows == 1) && (cols == 1 || sc >= rows)) {
    return {true, true, cols == 1 ? rows : sc};
  }
  return {};
}

MatrixForm form_of(const Layout& l) {
  const auto r = static_cast<size_t>(l.ndim - 2), c = static_cast<size_t>(l.ndim - 1);
  return matrix_form(l.shape[r], l.shape[c], l.strides[r], l.strides[c]);
}

void check_int_range(int64_t v, const char* what) {
  if (v > INT_MAX) {
    fail(ErrorKind::Unsupported, "{} {} exceeds 2^31-1, the limit of the host backend's BLAS", what,
         v);
  }
}

}  // namespace

Array matmul(Runtime& rt, const Array& a, const Array& b, const MatmulOptions& o) {
  a.check_alive("the first operand");
  b.check_alive("the second operand");
  check_device(a, "the first operand");
  check_device(b, "the second operand");
  check_same_device(a, b, "the second operand");
  // Mixed dtypes compute in the type the elementwise operations promote to (numpy's matmul).
  const DType t = promote_types(a.dtype(), b.dtype());
  if (a.ndim() == 0 || b.ndim() == 0) {
    fail(ErrorKind::Value, "operands of at least one dimension expected (shapes {} and {})",
         a.shape().str(), b.shape().str());
  }
  if (o.tf32 && t != DType::F32) {
    fail(ErrorKind::Value, "tf32=true needs f32 operands, not {}", name(t));
  }
  MatmulCall call;
  call.dtype = t;
  call.tf32 = o.tf32;
  if (o.beta && !o.out) fail(ErrorKind::Value, "beta needs out= (result = alpha a b + beta out)");
  if (t == DType::Bool) {
    const bool unit_alpha = o.alpha.kind != Scalar::Kind::Bool &&
                            o.alpha.kind != Scalar::Kind::Complex && o.alpha.as_double() == 1;
    if (!unit_alpha || o.beta) {
      fail(ErrorKind::Value,
           "alpha and beta are not defined for a bool matmul (its result is the or of ands); "
           "use astype for an integer product");
    }
  } else if (is_integer(t)) {
    call.int_alpha = integer_scale(o.alpha, t, "alpha");
    if (o.beta) call.int_beta = integer_scale(*o.beta, t, "beta");
    call.beta[0] = static_cast<double>(call.int_beta);
  } else {
    scalar_parts(o.alpha, t, "alpha", call.alpha);
    if (o.beta) scalar_parts(*o.beta, t, "beta", call.beta);
  }

  const auto last = [](const Layout& l, int from_end) {
    return l.shape[static_cast<size_t>(l.ndim - from_end)];
  };
  Layout la = as_matrices(a.layout(), true, o.ta);
  Layout lb = as_matrices(b.layout(), false, o.tb);
  const int64_t M = last(la, 2), K = last(la, 1), N = last(lb, 1);
  if (last(lb, 2) != K) {
    fail(ErrorKind::Value, "shapes do not match: a {}{} has {} columns, b {}{} has {} rows",
         a.shape().str(), o.ta && a.ndim() > 1 ? " (transposed)" : "", K, b.shape().str(),
         o.tb && b.ndim() > 1 ? " (transposed)" : "", last(lb, 2));
  }

  // Batch dimensions, broadcast right-aligned; stride 0 where an operand is broadcast.
  const int na = la.ndim - 2, nb = lb.ndim - 2, nbatch = std::max(na, nb);
  Shape shape;
  int64_t batch[kMaxDims] = {}, sa[kMaxDims] = {}, sb[kMaxDims] = {};
  const auto batch_strides = [&](bool check) {
    for (int d = 0; d < nbatch; ++d) {
      const int da = d - (nbatch - na), db = d - (nbatch - nb);
      const int64_t ea = da >= 0 ? la.shape[static_cast<size_t>(da)] : 1;
      const int64_t eb = db >= 0 ? lb.shape[static_cast<size_t>(db)] : 1;
      if (check && ea != eb && ea != 1 && eb != 1) {
        fail(ErrorKind::Value,
             "batch dimensions do not broadcast: a {} and b {} (dimension {} of the batch: "
             "{} and {})",
             a.shape().str(), b.shape().str(), d + 1, ea, eb);
      }
      batch[d] = ea == 1 ? eb : ea;
      sa[d] = ea == 1 ? 0 : la.strides[static_cast<size_t>(da)];
      sb[d] = eb == 1 ? 0 : lb.strides[static_cast<size_t>(db)];
    }
  };
  batch_strides(true);
  for (int d = 0; d < nbatch; ++d) shape.push(batch[d]);
  if (a.ndim() > 1) shape.push(M);
  if (b.ndim() > 1) shape.push(N);

  if (o.out) {
    const Array& out = *o.out;
    out.check_alive("the out array");
    check_device(out, "out");
    check_same_device(a, out, "out");
    check_out_dtype(t, out.dtype());
    if (!(out.shape() == shape)) {
      fail(ErrorKind::Value, "out has shape {} but the result has shape {}", out.shape().str(),
           shape.str());
    }
    if (!out.is_contiguous()) fail(ErrorKind::Value, "out must be contiguous");
    if (overlaps(out, a) || overlaps(out, b)) {
      fail(ErrorKind::Value, "out must not overlap the operands");
    }
  }
  const bool host_blas = rt.kind() == BackendKind::Host && !is_integer_product(t);
  if (host_blas) {
    check_int_range(M, "dimension");
    check_int_range(N, "dimension");
    check_int_range(K, "dimension");
  }

  const Launcher l(rt, a, o.stream);  // device arrays only
  Stream* s = l.stream();
  // An out= of another dtype (same kind or wider) receives the result converted, as numpy's (out
  // overlapping the operands was refused above).
  const Destination dest(o.out, t, std::nullopt, {});
  if (o.out && o.out->size() == 0) return *o.out;
  Array result = dest.array(l, shape);
  if (result.size() == 0) return result;
  const bool reads_out = call.beta[0] != 0 || call.beta[1] != 0;
  if (K == 0 && !reads_out) {
    fill(rt, result, Scalar::integer(0), s);
    return dest.finish(rt, result, s);
  }
  if (o.out && !dest.direct() && reads_out) copy(rt, result, *o.out, s);

  // Operands of another dtype are converted (contiguous temporaries), then used as any other.
  Array ac = a, bc = b;
  if (a.dtype() != t || b.dtype() != t) {
    if (a.dtype() != t) ac = astype(rt, a, t, s);
    if (b.dtype() != t) bc = astype(rt, b, t, s);
    la = as_matrices(ac.layout(), true, o.ta);
    lb = as_matrices(bc.layout(), false, o.tb);
    batch_strides(false);
  }

  // Operands in place when their matrices are row- or column-major, else contiguous copies.
  Array av = ac.with_layout(la), bv = bc.with_layout(lb);
  MatrixForm fa = form_of(la), fb = form_of(lb);
  if (!fa.ok) {
    av = contiguous(rt, av, s);
    fa = form_of(av.layout());
    for (int d = 0, da = nbatch - na; d < na; ++d) {
      const auto i = static_cast<size_t>(d);
      if (batch[d + da] > 1 && av.layout().shape[i] > 1) sa[d + da] = av.layout().strides[i];
    }
  }
  if (!fb.ok) {
    bv = contiguous(rt, bv, s);
    fb = form_of(bv.layout());
    for (int d = 0, db = nbatch - nb; d < nb; ++d) {
      const auto i = static_cast<size_t>(d);
      if (batch[d + db] > 1 && bv.layout().shape[i] > 1) sb[d + db] = bv.layout().strides[i];
    }
  }
  if (host_blas) {
    check_int_range(fa.ld, "leading dimension");
    check_int_range(fb.ld, "leading dimension");
  }

  // C^T (N x M, column-major, ld N) = op(B) op(A) in BLAS terms.
  call.m = N;
  call.n = M;
  call.k = K;
  call.a.data = bv.data();
  call.a.trans = fb.trans;
  call.a.ld = fb.ld;
  call.b.data = av.data();
  call.b.trans = fa.trans;
  call.b.ld = fa.ld;
  call.c.data = result.data();
  call.c.ld = std::max<int64_t>(1, N);

  // Coalesce the batch: drop size-1 dimensions, merge neighbours that step uniformly.
  int64_t sc = M * N;
  int64_t cstride[kMaxDims] = {};
  for (int d = nbatch - 1; d >= 0; --d) {
    cstride[d] = sc;
    sc *= batch[d];
  }
  int n = 0;
  for (int d = 0; d < nbatch; ++d) {
    if (batch[d] == 1) continue;
    if (n > 0 && call.a.batch_strides[n - 1] == sb[d] * batch[d] &&
        call.b.batch_strides[n - 1] == sa[d] * batch[d] &&
        call.c.batch_strides[n - 1] == cstride[d] * batch[d]) {
      call.batch_shape[n - 1] *= batch[d];
    } else {
      call.batch_shape[n] = batch[d];
      ++n;
    }
    call.a.batch_strides[n - 1] = sb[d];
    call.b.batch_strides[n - 1] = sa[d];
    call.c.batch_strides[n - 1] = cstride[d];
  }
  call.batch_ndim = n;

  l.queue(call, av, bv, result);
  return dest.finish(rt, result, s);
}

Array dot(Runtime& rt, const Array& x, const Array& y, const Array* out, Stream* stream) {
  x.check_alive("the first operand");
  y.check_alive("the second operand");
  check_device(x, "the first operand");
  check_device(y, "the second operand");
  check_same_device(x, y, "the second operand");
  if (x.ndim() != 1 || y.ndim() != 1) {
    fail(ErrorKind::Value, "1-D arrays expected, got shapes {} and {}; use matmul for matrices",
         x.shape().str(), y.shape().str());
  }
  const DType t = x.dtype();
  if (y.dtype() != t) {
    fail(ErrorKind::Value, "operands of one dtype expected ({} and {}); use astype", name(t),
         name(y.dtype()));
  }
  if (t == DType::Bool) fail(ErrorKind::Value, "dot does not support bool arrays");
  if (x.size() != y.size()) {
    fail(ErrorKind::Value, "vectors of one length expected, got shapes {} and {}", x.shape().str(),
         y.shape().str());
  }
  if (out) {
    out->check_alive("the out array");
    check_device(*out, "out");
    check_same_device(x, *out, "out");
    if (out->dtype() != t) {
      fail(ErrorKind::Value, "out has dtype {} but the result is {}", name(out->dtype()), name(t));
    }
    if (out->size() != 1) {
      fail(ErrorKind::Value, "out must have one element, not shape {}", out->shape().str());
    }
    if (overlaps(*out, x) || overlaps(*out, y)) {
      fail(ErrorKind::Value, "out must not overlap the operands");
    }
  }
  const int64_t n = x.size();
  const bool host_blas = rt.kind() == BackendKind::Host && !is_integer(t);
  if (host_blas) check_int_range(n, "length");

  const Launcher l(rt, x, stream);  // device arrays only
  Array result = out ? *out : l.empty(Shape{}, t);
  if (n == 0) {
    fill(rt, result, Scalar::integer(0), l.stream());
    return result;
  }
  // BLAS needs positive increments (that fit an int on the host); others are copied.
  auto operand = [&](const Array& v, int64_t* inc) {
    const int64_t stride = n == 1 ? 1 : v.layout().strides[0];
    if (stride > 0 && (!host_blas || stride <= INT_MAX)) {
      *inc = stride;
      return v;
    }
    *inc = 1;
    return clone(rt, v, l.stream());
  };
  DotCall call;
  call.dtype = t;
  call.n = n;
  const Array xv = operand(x, &call.incx);
  const Array yv = operand(y, &call.incy);
  call.x = xv.data();
  call.y = yv.data();
  call.result = result.data();
  l.queue(call, xv, yv, result);
  return result;
}

}  // namespace culua::detail
