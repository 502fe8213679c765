#include "core/ops/scan.hpp"

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

bool overlaps(const Array& a, const Array& b) {
  if (a.buffer() != b.buffer() || a.size() == 0 || b.size() == 0) return false;
  const auto sa = static_cast<int64_t>(itemsize(a.dtype()));
  const auto sb = static_cast<int64_t>(itemsize(b.dtype()));
  return a.layout().extent_begin() * sa < b.layout().extent_end() * sb &&
         b.layout().extent_begin() * sb < a.layout().extent_end() * sa;
}

// `v` with dimension `axis` moved last.
StridedView axis_last(StridedView v, int axis) {
  const int64_t n = v.shape[axis], s = v.strides[axis];
  for (int d = axis; d + 1 < v.ndim; ++d) {
    v.shape[d] = v.shape[d + 1];
    v.strides[d] = v.strides[d + 1];
  }
  v.shape[v.ndim - 1] = n;
  v.strides[v.ndim - 1] = s;
  return v;
}

}  // namespace

DType scan_result_dtype(ScanOp, DType in) {
  const DTypeClass cls = info(in).cls;
  if (cls == DTypeClass::Unsigned) return DType::U64;  // numpy on Linux
  if (cls == DTypeClass::Bool || cls == DTypeClass::Signed) return DType::I64;
  return in;
}

Array scan(Runtime& rt, ScanOp op, const Array& input, const ScanOptions& opt, const Array* out,
           Stream* stream) {
  input.check_alive();
  if (out) out->check_alive("the out array");
  const char* name = op == ScanOp::Sum ? "cumulative_sum" : "cumulative_prod";
  Array a = input;
  int axis = 0;
  if (opt.axis) {
    axis = *opt.axis;
    if (axis < 0 || axis >= a.ndim()) {
      fail(ErrorKind::Index, "axis {} (0-based) is out of range for a {}-d array", axis, a.ndim());
    }
  } else if (a.ndim() != 1) {
    a = reshape(rt, a, Shape{a.size()}, stream);  // flattened (a view when contiguous)
  }
  if (opt.dtype) {
    if (*opt.dtype == DType::Bool) {
      fail(ErrorKind::Type, "{} cannot accumulate in bool: choose a numeric dtype", name);
    }
    if (*opt.dtype != a.dtype()) a = astype(rt, a, *opt.dtype, stream);
  }
  const DType rtype = scan_result_dtype(op, a.dtype());
  Shape shape = a.shape();
  if (opt.include_initial) shape.dims[static_cast<size_t>(axis)] += 1;
  const bool host = is_host(a.location());
  if (out) {
    if (!(out->shape() == shape)) {
      fail(ErrorKind::Value, "out has shape {} but the result of {} has shape {}",
           out->shape().str(), name, shape.str());
    }
    if (is_host(out->location()) != host) {
      fail(ErrorKind::Value,
           "out is a {} array but the input is a {} array: both must be on the device or both on "
           "the host",
           location_name(out->location()), location_name(a.location()));
    }
    if (!host && out->device() != a.device()) {
      fail(ErrorKind::Value, "out is on device {} but the input is on device {}", out->device(),
           a.device());
    }
  }
  const bool cast = opt.dtype && *opt.dtype != rtype;
  const bool direct =
      out && out->dtype() == rtype && !cast && !overlaps(*out, a) && !overlaps(*out, input);
  const auto make_call = [&](const Array& result) {
    ScanCall c;
    c.op = op;
    c.include_initial = opt.include_initial;
    c.in = axis_last(a.view(), axis);
    c.out = axis_last(result.view(), axis);
    return c;
  };
  const auto finish = [&](Array result, Stream* s) {
    if (cast) result = astype(rt, result, *opt.dtype, s);
    if (out && !direct) {
      copy(rt, *out, result, s);
      return *out;
    }
    return result;
  };
  if (host) {
    wait_host_access(rt, *a.buffer(), "a host scan");
    if (out) wait_host_access(rt, *out->buffer(), "a host scan");
    Array result = direct ? *out : empty(rt, shape, rtype, Location::Pageable);
    if (result.size() > 0) rt.host_math().scan(make_call(result));
    return finish(result, nullptr);
  }
  Stream& s = stream_for(rt, a, stream);
  Array result = direct ? *out : empty(rt, shape, rtype, Location::Device, &s);
  if (result.size() > 0) {
    const ScanCall call = make_call(result);
    a.buffer()->record_use(s);
    result.buffer()->record_use(s);
    rt.backend().scan(call, s);
  }
  return finish(result, &s);
}

}  // namespace culua::detail
