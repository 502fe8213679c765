#include "core/reduce.hpp"

#include "core/error.hpp"
#include "core/ops.hpp"
#include "core/promote.hpp"

namespace culua::detail {

namespace {

bool defined_when_empty(ReduceOp op) {
  return op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Prod ||
         op == ReduceOp::Norm;
}

// Do the memory ranges that two views touch overlap?
bool overlaps(const Array& a, const Array& b) {
  if (a.buffer() != b.buffer() || a.size() == 0 || b.size() == 0) return false;
  const auto sa = static_cast<int64_t>(itemsize(a.dtype()));
  const auto sb = static_cast<int64_t>(itemsize(b.dtype()));
  return a.layout().extent_begin() * sa < b.layout().extent_end() * sb &&
         b.layout().extent_begin() * sb < a.layout().extent_end() * sa;
}

// `v` without dimension `dim`.
StridedView drop_dim(StridedView v, int dim) {
  for (int d = dim; d + 1 < v.ndim; ++d) {
    v.shape[d] = v.shape[d + 1];
    v.strides[d] = v.strides[d + 1];
  }
  --v.ndim;
  return v;
}

ReduceCall make_call(ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims,
                     const Array& result) {
  ReduceCall c;
  c.op = op;
  c.out = result.view();
  if (!axis) {
    c.full = true;
    c.in = a.view();
    c.out.ndim = 0;  // a single element (all dimensions have size 1 with keepdims)
    return c;
  }
  c.full = false;
  if (keepdims) c.out = drop_dim(c.out, *axis);
  // The reduced axis last.
  const StridedView v = a.view();
  c.in = drop_dim(v, *axis);
  c.in.shape[c.in.ndim] = v.shape[*axis];
  c.in.strides[c.in.ndim] = v.strides[*axis];
  ++c.in.ndim;
  return c;
}

}  // namespace

const char* op_name(ReduceOp op) {
  static constexpr const char* kNames[kNumReduceOps] = {"sum",  "mean", "max",    "min",
                                                        "prod", "norm", "argmax", "argmin"};
  return kNames[static_cast<int>(op)];
}

DType reduce_result_dtype(ReduceOp op, DType in) {
  const DTypeClass cls = info(in).cls;
  const bool integral =
      cls == DTypeClass::Bool || cls == DTypeClass::Signed || cls == DTypeClass::Unsigned;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
      return integral ? DType::I64 : in;
    case ReduceOp::Mean:
      return integral ? DType::F64 : in;
    case ReduceOp::Norm:
      if (integral) return DType::F64;
      return real_of(in);  // c64 -> f32, c128 -> f64
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
      if (cls == DTypeClass::Complex) {
        fail(ErrorKind::Type,
             "{} is not defined for complex arrays ({}): complex numbers are not ordered; reduce "
             "cu.abs(a) or cu.real(a) instead",
             op_name(op), name(in));
      }
      return op == ReduceOp::Argmax || op == ReduceOp::Argmin ? DType::I64 : in;
  }
  return in;
}

Shape reduce_shape(const Shape& in, std::optional<int> axis, bool keepdims) {
  Shape s;
  for (int i = 0; i < in.ndim; ++i) {
    if (!axis || *axis == i) {
      if (keepdims) s.push(1);
    } else {
      s.push(in[i]);
    }
  }
  return s;
}

Array reduce(Runtime& rt, ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims,
             const Array* out, Stream* stream) {
  a.check_alive();
  if (out) out->check_alive("the out array");
  const DType rtype = reduce_result_dtype(op, a.dtype());
  if (axis && (*axis < 0 || *axis >= a.ndim())) {
    fail(ErrorKind::Index, "axis {} (0-based) is out of range for a {}-d array", *axis, a.ndim());
  }
  const int64_t reduced = axis ? a.layout().shape[static_cast<size_t>(*axis)] : a.size();
  if (reduced == 0 && !defined_when_empty(op)) {
    fail(ErrorKind::Value, "{} of an empty {} is undefined ({} has no identity value)", op_name(op),
         axis ? "axis" : "array", op_name(op));
  }
  const Shape shape = reduce_shape(a.shape(), axis, keepdims);
  const bool host = is_host(a.location());
  if (out) {
    if (!(out->shape() == shape)) {
      fail(ErrorKind::Value, "out has shape {} but the result of {} has shape {}",
           out->shape().str(), op_name(op), shape.str());
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
  // The kernels write the result's own dtype and never into memory they read.
  const bool direct = out && out->dtype() == rtype && !overlaps(*out, a);

  if (host) {
    wait_host_access(rt, *a.buffer(), "a host reduction");
    if (out) wait_host_access(rt, *out->buffer(), "a host reduction");
    Array result = direct ? *out : empty(rt, shape, rtype, Location::Pageable);
    if (result.size() > 0) rt.host_math().reduce(make_call(op, a, axis, keepdims, result));
    if (out && !direct) {
      copy(rt, *out, result);
      return *out;
    }
    return result;
  }

  Stream& s = stream_for(rt, a, stream);
  Array result = direct ? *out : empty(rt, shape, rtype, Location::Device, &s);
  if (result.size() > 0) {
    const ReduceCall call = make_call(op, a, axis, keepdims, result);
    a.buffer()->record_use(s);
    result.buffer()->record_use(s);
    rt.backend().reduce(call, s);
  }
  if (out && !direct) {
    copy(rt, *out, result, &s);
    return *out;
  }
  return result;
}

}  // namespace culua::detail
