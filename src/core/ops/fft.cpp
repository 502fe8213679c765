// Fourier transforms: each as batches of 1-D transforms along one axis (the input cropped or
// padded, converted and made contiguous first), the norms, the shifts and the frequencies.
#include "core/ops/fft.hpp"

#include <algorithm>
#include <cmath>

#include "core/backend/fft_call.hpp"
#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

void check_device_array(const Array& a) {
  a.check_alive();
  if (is_host(a.location())) {
    fail(ErrorKind::Value,
         "a device array expected; this is a {} host array: call to_device() first",
         location_name(a.location()));
  }
}

// One batch of 1-D transforms along `axis`: the input cropped or zero-padded to the length the
// transform takes, converted to its dtype, made contiguous with the axis last; the result scaled
// by `scale` and returned contiguous in the input's axis order.
struct Transform {
  FftKind kind = FftKind::C2C;
  bool inverse = false;
  DType real = DType::F64;
  int64_t n = 0;
  double scale = 1;
  bool conj_in = false;   // hfft: the input's conjugate
  bool conj_out = false;  // ihfft: the result's conjugate
};

Array run_transform(Runtime& rt, const Transform& t, const Array& a, int axis, Stream* stream) {
  const Launcher l(rt, a, stream);  // device arrays only
  Stream* s = l.stream();
  const int last = a.ndim() - 1;
  FftCall call;
  call.kind = t.kind;
  call.real = t.real;
  call.inverse = t.inverse;
  call.n = t.n;

  Layout lx = a.layout();
  if (axis != last) lx = lx.transpose(axis, last);
  const int64_t need = call.in_row();
  const int64_t keep = std::min(lx.shape[static_cast<size_t>(last)], need);
  lx = lx.narrow(last, 0, keep);
  const Array x = a.with_layout(lx);
  const DType in_dtype = call.in_dtype();

  Array in;
  // cuFFT may overwrite a C2R input: that always gets a copy of its own.
  if (keep == need && x.is_contiguous() && x.dtype() == in_dtype && t.kind != FftKind::C2R &&
      !t.conj_in) {
    in = x;
  } else {
    Shape in_shape = lx.dims();
    in_shape.dims[static_cast<size_t>(last)] = need;
    in = l.empty(in_shape, in_dtype);
    if (keep < need) {
      const Array pad = in.with_layout(in.layout().narrow(last, keep, need - keep));
      fill(rt, pad, Scalar::integer(0), s);
    }
    if (keep > 0 && x.size() > 0) {
      copy(rt, in.with_layout(in.layout().narrow(last, 0, keep)), x, s);
    }
    if (t.conj_in) unary(rt, UnaryOp::Conj, in, &in, s);
  }

  Shape out_shape = lx.dims();
  out_shape.dims[static_cast<size_t>(last)] = call.out_row();
  Array out = l.empty(out_shape, call.out_dtype());
  call.batch = out_shape.numel() / call.out_row();
  if (call.batch > 0) {
    call.in = in.data();
    call.out = out.data();
    l.queue(call, in, out);
    if (t.scale != 1) binary(rt, BinaryOp::Mul, out, Scalar::real(t.scale), &out, s);
    if (t.conj_out) unary(rt, UnaryOp::Conj, out, &out, s);
  }
  if (axis != last) out = contiguous(rt, out.with_layout(out.layout().transpose(axis, last)), s);
  return out;
}

// The factor numpy applies: a transform in the forward direction (fft, rfft) scales by 1, 1/sqrt(n)
// or 1/n for backward, ortho and forward; one in the inverse direction the other way round.
double norm_scale(FftNorm norm, bool inverse_direction, double points) {
  switch (norm) {
    case FftNorm::Ortho:
      return 1 / std::sqrt(points);
    case FftNorm::Backward:
      return inverse_direction ? 1 / points : 1;
    case FftNorm::Forward:
      return inverse_direction ? 1 : 1 / points;
  }
  return 1;
}

void check_points(int64_t n, int axis) {
  if (n < 1) {
    fail(ErrorKind::Value, "{} data points along axis {}: a transform needs at least 1", n,
         axis + 1);
  }
}

}  // namespace

DType fft_real_type(FftFunction f, DType t) {
  if ((f == FftFunction::Rfft || f == FftFunction::Ihfft) && is_complex(t)) {
    fail(ErrorKind::Type, "a real array expected, got {} (use fft for complex input)", name(t));
  }
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::C64:
      return DType::F32;
    default:
      return DType::F64;
  }
}

Array fft1(Runtime& rt, FftFunction f, const Array& a, int axis, int64_t n, FftNorm norm,
           Stream* stream) {
  check_device_array(a);
  Transform t;
  t.real = fft_real_type(f, a.dtype());
  FftNorm eff = norm;
  switch (f) {
    case FftFunction::Fft:
      break;
    case FftFunction::Ifft:
      t.inverse = true;
      break;
    case FftFunction::Rfft:
      t.kind = FftKind::R2C;
      break;
    case FftFunction::Irfft:
      t.kind = FftKind::C2R;
      break;
    case FftFunction::Hfft:  // irfft of the conjugate, the norm's directions swapped
      t.kind = FftKind::C2R;
      t.conj_in = true;
      break;
    case FftFunction::Ihfft:  // the conjugate of rfft, the norm's directions swapped
      t.kind = FftKind::R2C;
      t.conj_out = true;
      break;
  }
  if (f == FftFunction::Hfft || f == FftFunction::Ihfft) {
    eff = norm == FftNorm::Backward  ? FftNorm::Forward
          : norm == FftNorm::Forward ? FftNorm::Backward
                                     : norm;
  }
  const int64_t m = a.layout().shape[static_cast<size_t>(axis)];
  t.n = n >= 0 ? n : t.kind == FftKind::C2R ? 2 * (m - 1) : m;
  check_points(t.n, axis);
  const bool inverse_direction = t.kind == FftKind::C2R || t.inverse;
  t.scale = norm_scale(eff, inverse_direction, static_cast<double>(t.n));
  return run_transform(rt, t, a, axis, stream);
}

Array fftn(Runtime& rt, FftFunction f, const Array& a, const std::vector<int>& axes,
           const std::vector<int64_t>& sizes, FftNorm norm, Stream* stream) {
  check_device_array(a);
  if (axes.empty()) fail(ErrorKind::Value, "no axes to transform");
  if (sizes.size() != axes.size()) {
    fail(ErrorKind::Value, "{} sizes for {} axes", sizes.size(), axes.size());
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (axes[i] == axes[j]) fail(ErrorKind::Value, "axis {} appears twice", axes[i] + 1);
    }
  }
  if (f == FftFunction::Hfft || f == FftFunction::Ihfft) {
    fail(ErrorKind::Unsupported, "hfft and ihfft transform one axis");
  }
  const DType real = fft_real_type(f, a.dtype());
  const size_t k = axes.size();
  const bool real_input = f == FftFunction::Rfft;
  const bool real_output = f == FftFunction::Irfft;
  const bool inverse = f == FftFunction::Ifft || f == FftFunction::Irfft;
  std::vector<int64_t> n(k);
  double points = 1;
  for (size_t i = 0; i < k; ++i) {
    const int64_t m = a.layout().shape[static_cast<size_t>(axes[i])];
    n[i] = sizes[i] >= 0 ? sizes[i] : real_output && i + 1 == k ? 2 * (m - 1) : m;
    check_points(n[i], axes[i]);
    points *= static_cast<double>(n[i]);
  }
  const double scale = norm_scale(norm, inverse, points);

  // numpy's order: c2c transforms from the last axis to the first; rfftn the last axis first
  // (real to complex), then the others; irfftn the others, then the last (complex to real).
  std::vector<std::pair<size_t, FftKind>> steps;
  if (real_input) {
    steps.emplace_back(k - 1, FftKind::R2C);
    for (size_t i = 0; i + 1 < k; ++i) steps.emplace_back(i, FftKind::C2C);
  } else if (real_output) {
    for (size_t i = 0; i + 1 < k; ++i) steps.emplace_back(i, FftKind::C2C);
    steps.emplace_back(k - 1, FftKind::C2R);
  } else {
    for (size_t i = k; i-- > 0;) steps.emplace_back(i, FftKind::C2C);
  }
  Array x = a;
  for (size_t j = 0; j < steps.size(); ++j) {
    Transform t;
    t.kind = steps[j].second;
    t.inverse = inverse && t.kind == FftKind::C2C;
    t.real = real;
    t.n = n[steps[j].first];
    t.scale = j + 1 == steps.size() ? scale : 1;
    x = run_transform(rt, t, x, axes[steps[j].first], stream);
  }
  return x;
}

Array fftshift(Runtime& rt, const Array& a, const std::vector<int>& axes, bool inverse,
               Stream* stream) {
  a.check_alive();
  Stream* alloc_on = a.location() == Location::Device ? &stream_for(rt, a, stream) : nullptr;
  Array x = a;
  bool copied = false;
  for (int axis : axes) {
    const int64_t m = x.layout().shape[static_cast<size_t>(axis)];
    if (m <= 1) continue;
    // A roll by r: result[(i + r) mod m] = x[i].
    const int64_t r = inverse ? m - m / 2 : m / 2;
    Array y = empty(rt, x.shape(), x.dtype(), x.location(), alloc_on);
    copy(rt, y.with_layout(y.layout().narrow(axis, 0, r)),
         x.with_layout(x.layout().narrow(axis, m - r, r)), stream);
    copy(rt, y.with_layout(y.layout().narrow(axis, r, m - r)),
         x.with_layout(x.layout().narrow(axis, 0, m - r)), stream);
    x = std::move(y);
    copied = true;
  }
  return copied ? x : clone(rt, a, stream);
}

Array fftfreq(Runtime& rt, int64_t n, double d, bool real_input, DType dtype, Stream* stream) {
  if (n < 1) fail(ErrorKind::Value, "n must be a positive integer, got {}", n);
  if (d == 0 || !std::isfinite(d))
    fail(ErrorKind::Value, "d must be finite and nonzero, got {}", d);
  if (dtype != DType::F32 && dtype != DType::F64) {
    fail(ErrorKind::Type, "a real floating dtype (f32 or f64) expected, got {}", name(dtype));
  }
  const double val = 1.0 / (static_cast<double>(n) * d);
  const int64_t count = real_input ? n / 2 + 1 : n;
  Array host = empty(rt, Shape{count}, dtype, Location::Pageable);
  const int64_t positive = (n - 1) / 2 + 1;  // numpy's N: 0, 1, ..., (n-1)/2, then -(n/2), ..., -1
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = real_input || i < positive ? i : i - n;
    const double v = static_cast<double>(k) * val;
    if (dtype == DType::F64) {
      static_cast<double*>(host.data())[i] = v;
    } else {
      static_cast<float*>(host.data())[i] = static_cast<float>(v);
    }
  }
  return to_location(rt, host, Location::Device, stream);
}

}  // namespace culua::detail
