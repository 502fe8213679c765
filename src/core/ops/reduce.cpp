// Reductions: the result's shape and dtype, the reduced axes as one strided run (or gathered),
// and the launch of full and axis reductions.
#include "core/ops/reduce.hpp"

#include <algorithm>

#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

bool defined_when_empty(ReduceOp op) {
  switch (op) {
    case ReduceOp::Max:
    case ReduceOp::Min:
    case ReduceOp::Argmax:
    case ReduceOp::Argmin:
    case ReduceOp::NanMax:
    case ReduceOp::NanMin:
      return false;
    default:
      return true;
  }
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

ReduceCall full_call(ReduceOp op, const Array& a, const Array& result) {
  ReduceCall c;
  c.op = op;
  c.out = result.view();
  c.full = true;
  c.in = a.view();
  c.out.ndim = 0;  // a single element (all dimensions have size 1 with keepdims)
  return c;
}

// The reduced elements of each output position: R of them, rs apart, from the position's start in
// `src` (whose dimensions `kept` are the output's).
struct AxisRun {
  Array src;
  std::vector<int> kept;
  int64_t R = 1;
  int64_t rs = 1;
};

ReduceCall axis_call(ReduceOp op, const AxisRun& run, const std::vector<bool>& reduced,
                     bool keepdims, const Array& result) {
  ReduceCall c;
  c.op = op;
  c.full = false;
  c.out = result.view();
  if (keepdims) {
    for (int d = static_cast<int>(reduced.size()) - 1; d >= 0; --d) {
      if (reduced[static_cast<size_t>(d)]) c.out = drop_dim(c.out, d);
    }
  }
  const StridedView v = run.src.view();
  c.in = v;
  c.in.ndim = 0;
  int64_t size = run.R;
  for (const int d : run.kept) {
    c.in.shape[c.in.ndim] = v.shape[d];
    c.in.strides[c.in.ndim] = v.strides[d];
    size *= v.shape[d];
    ++c.in.ndim;
  }
  c.in.shape[c.in.ndim] = run.R;  // the reduced run last
  c.in.strides[c.in.ndim] = run.rs;
  ++c.in.ndim;
  for (int d = c.in.ndim; d < kMaxDims; ++d) c.in.shape[d] = c.in.strides[d] = 0;
  c.in.size = size;
  return c;
}

int64_t abs64(int64_t v) {
  return v < 0 ? -v : v;
}

// The run of the reduced axes of `a`: one strided run when they merge (in the order of their
// strides), else the elements gathered into a contiguous temporary with the reduced axes last.
AxisRun reduced_run(Runtime& rt, const Array& a, const std::vector<bool>& reduced, Stream* stream) {
  AxisRun run;
  run.src = a;
  std::vector<int> red;
  for (int d = 0; d < a.ndim(); ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      red.push_back(d);
    } else {
      run.kept.push_back(d);
    }
  }
  const Layout& l = a.layout();
  const auto sz = [&](int d) { return l.shape[static_cast<size_t>(d)]; };
  const auto st = [&](int d) { return l.strides[static_cast<size_t>(d)]; };
  run.R = 1;
  for (const int d : red) run.R *= sz(d);
  if (red.empty()) return run;
  if (run.R == 0) return run;  // nothing to read
  std::vector<int> big;        // the reduced axes that matter, by decreasing stride
  for (const int d : red) {
    if (sz(d) != 1) big.push_back(d);
  }
  if (big.empty()) return run;
  std::stable_sort(big.begin(), big.end(),
                   [&](int x, int y) { return abs64(st(x)) > abs64(st(y)); });
  bool merges = true;
  for (size_t i = 0; i + 1 < big.size(); ++i) {
    merges = merges && st(big[i]) == st(big[i + 1]) * sz(big[i + 1]);
  }
  if (merges) {
    run.rs = st(big.back());
    return run;
  }
  // Gather: the kept axes, then the reduced ones, into a contiguous temporary.
  Layout perm = l;
  int k = 0;
  for (const int d : run.kept) {
    perm.shape[static_cast<size_t>(k)] = sz(d);
    perm.strides[static_cast<size_t>(k)] = st(d);
    ++k;
  }
  for (const int d : red) {
    perm.shape[static_cast<size_t>(k)] = sz(d);
    perm.strides[static_cast<size_t>(k)] = st(d);
    ++k;
  }
  run.src = contiguous(rt, a.with_layout(perm), stream);
  for (size_t i = 0; i < run.kept.size(); ++i) run.kept[i] = static_cast<int>(i);
  run.rs = 1;
  return run;
}

}  // namespace

const char* op_name(ReduceOp op) {
#define CULUA_REDUCE_NAME(e, name, ...) name,
  static constexpr const char* kNames[kNumReduceOps] = {CULUA_REDUCE_OPS(CULUA_REDUCE_NAME)};
#undef CULUA_REDUCE_NAME
  return kNames[static_cast<int>(op)];
}

DType reduce_result_dtype(ReduceOp op, DType in) {
  if (op != ReduceOp::NanMax && op != ReduceOp::NanMin) op = without_nan(op);
  if (!accepts(rule(op), in)) {
    fail(ErrorKind::Type,
         "{} is not defined for complex arrays ({}): complex numbers are not ordered; reduce "
         "cu.abs(a) or cu.real(a) instead",
         op_name(op), name(in));
  }
  return result_dtype(rule(op), in);
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

Shape reduce_shape(const Shape& in, const std::optional<std::vector<int>>& axes, bool keepdims) {
  Shape s;
  for (int i = 0; i < in.ndim; ++i) {
    if (!axes || std::find(axes->begin(), axes->end(), i) != axes->end()) {
      if (keepdims) s.push(1);
    } else {
      s.push(in[i]);
    }
  }
  return s;
}

Array reduce(Runtime& rt, ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims,
             const Array* out, Stream* stream) {
  ReduceOptions opt;
  if (axis) opt.axes = std::vector<int>{*axis};
  opt.keepdims = keepdims;
  return reduce(rt, op, a, opt, out, stream);
}

Array reduce(Runtime& rt, ReduceOp op, const Array& input, const ReduceOptions& opt,
             const Array* out, Stream* stream) {
  input.check_alive();
  if (out) out->check_alive("the out array");
  const int nd = input.ndim();
  std::vector<bool> reduced(static_cast<size_t>(nd), opt.axes ? false : true);
  int nred = opt.axes ? 0 : nd;
  if (opt.axes) {
    for (const int ax : *opt.axes) {
      if (ax < 0 || ax >= nd) {
        fail(ErrorKind::Index, "axis {} (0-based) is out of range for a {}-d array", ax, nd);
      }
      if (reduced[static_cast<size_t>(ax)]) {
        fail(ErrorKind::Value, "axis {} is repeated (each axis may be reduced once)", ax + 1);
      }
      reduced[static_cast<size_t>(ax)] = true;
      ++nred;
    }
  }
  if ((op == ReduceOp::Argmax || op == ReduceOp::Argmin) && opt.axes && opt.axes->size() > 1) {
    fail(ErrorKind::Value, "{} takes one axis, not {}", op_name(op), opt.axes->size());
  }
  const bool all = nred == nd;  // every axis (also axis = {} of a 0-d array): one result
  std::optional<std::vector<int>> axes;
  if (!all) {
    axes.emplace();
    for (int d = 0; d < nd; ++d) {
      if (reduced[static_cast<size_t>(d)]) axes->push_back(d);
    }
  }
  const Shape shape = reduce_shape(input.shape(), axes, opt.keepdims);
  if (!is_floating(input.dtype()) && !is_complex(input.dtype())) op = without_nan(op);

  // dtype=: the elements converted first; the result in that dtype.
  Array a = input;
  std::optional<DType> final_dtype;
  if (opt.dtype) {
    if (op != ReduceOp::Sum && op != ReduceOp::Prod && op != ReduceOp::NanSum &&
        op != ReduceOp::NanProd) {
      fail(ErrorKind::Value, "dtype is an option of sum, prod, nansum and nanprod, not of {}",
           op_name(op));
    }
    if (*opt.dtype == DType::Bool) {
      fail(ErrorKind::Type, "{} cannot accumulate in bool: choose a numeric dtype", op_name(op));
    }
    if (*opt.dtype != a.dtype()) a = astype(rt, a, *opt.dtype, stream);
    if (!is_floating(a.dtype()) && !is_complex(a.dtype())) op = without_nan(op);
    final_dtype = *opt.dtype;
  }
  const DType rtype = reduce_result_dtype(op, a.dtype());
  int64_t count = 1;
  for (int d = 0; d < nd; ++d) {
    if (reduced[static_cast<size_t>(d)]) count *= a.layout().shape[static_cast<size_t>(d)];
  }
  if (count == 0 && !defined_when_empty(op)) {
    fail(ErrorKind::Value, "{} of an empty {} is undefined ({} has no identity value)", op_name(op),
         all ? "array" : (nred > 1 ? "set of axes" : "axis"), op_name(op));
  }
  if (out) check_out_place(*out, shape, a, op_name(op));
  // The kernels write the result's own dtype and never into memory they read.
  const bool cast = final_dtype && *final_dtype != rtype;
  const Destination dest(out, rtype, cast ? final_dtype : std::nullopt, {&a, &input});
  std::optional<AxisRun> run;  // axis reductions: holds a gathered temporary while it is read
  if (!all) run = reduced_run(rt, a, reduced, stream);
  Launcher l(rt, a, stream, "a host reduction");
  if (run && run->src.buffer() != a.buffer()) l.wait(run->src);
  l.wait(a, out);
  Array result = dest.array(l, shape);
  if (result.size() > 0) {
    ReduceCall c =
        all ? full_call(op, a, result) : axis_call(op, *run, reduced, opt.keepdims, result);
    c.correction = opt.correction;
    l.run(c, a, run ? &run->src : nullptr, result);
  }
  return dest.finish(rt, result, l.stream());
}

}  // namespace culua::detail
