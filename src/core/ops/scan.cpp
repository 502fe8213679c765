// Scans: the result's dtype, the scanned axis moved last, and the launch.
#include "core/ops/scan.hpp"

#include "core/base/error.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

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
  if (out) check_out_place(*out, shape, a, name);
  const bool cast = opt.dtype && *opt.dtype != rtype;
  const Destination dest(out, rtype, cast ? opt.dtype : std::nullopt, {&a, &input});
  Launcher l(rt, a, stream, "a host scan");
  l.wait(a, out);
  Array result = dest.array(l, shape);
  if (result.size() > 0) {
    ScanCall c;
    c.op = op;
    c.include_initial = opt.include_initial;
    c.in = axis_last(a.view(), axis);
    c.out = axis_last(result.view(), axis);
    l.run(c, a, result);
  }
  return dest.finish(rt, result, l.stream());
}

}  // namespace culua::detail
