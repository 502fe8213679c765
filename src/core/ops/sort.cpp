// Sorting, searching and sets: the calls of sort, argsort, nonzero, unique and searchsorted, and
// count_nonzero through the reductions.
#include "core/ops/sort.hpp"

#include <algorithm>

#include "core/backend/sort_call.hpp"
#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"
#include "core/ops/reduce.hpp"

namespace culua::detail {

namespace {

// Where a sorting call runs (core/ops/launcher.hpp): a host input is waited for at once.
Launcher place_of(Runtime& rt, const Array& a, Stream* stream) {
  Launcher l(rt, a, stream, "a host sort");
  l.wait(a);
  return l;
}

void check_axis(const Array& a, int axis) {
  if (a.ndim() == 0) {
    fail(ErrorKind::Index, "a 0-d array has no axis to sort along (reshape it to 1-d first)");
  }
  if (axis < 0 || axis >= a.ndim()) {
    fail(ErrorKind::Index, "axis {} (0-based) is out of range for a {}-d array", axis, a.ndim());
  }
}

// Sorts `a` along `axis`: values into a new array of a's dtype and/or 1-based positions.
void sort_impl(Runtime& rt, const Array& a, int axis, bool descending, Stream* stream,
               Array* values, Array* positions) {
  a.check_alive();
  check_axis(a, axis);
  const Launcher l = place_of(rt, a, stream);
  const int last = a.ndim() - 1;
  const Shape shape = a.shape();
  if (values) *values = l.empty(shape, a.dtype());
  if (positions) *positions = l.empty(shape, DType::I64);
  if (a.size() == 0) return;
  // The rows to sort, contiguous, the axis last.
  const Array moved = axis == last ? a : a.with_layout(a.layout().transpose(axis, last));
  const Array keys = contiguous(rt, moved, l.stream());
  const Shape mshape = moved.shape();
  Array vout, pout;
  if (values) vout = axis == last ? *values : l.empty(mshape, a.dtype());
  if (positions) pout = axis == last ? *positions : l.empty(mshape, DType::I64);
  SortCall c;
  c.op = SortOp::Sort;
  c.dtype = a.dtype();
  c.descending = descending;
  c.n = shape[axis];
  c.rows = a.size() / c.n;
  c.in = keys.data();
  c.out = values ? vout.data() : nullptr;
  c.out_index = positions ? static_cast<int64_t*>(pout.data()) : nullptr;
  l.run(c, keys, values ? &vout : nullptr, positions ? &pout : nullptr);
  if (axis == last) return;
  if (values) {
    copy(rt, values->with_layout(values->layout().transpose(axis, last)), vout, l.stream());
  }
  if (positions) {
    copy(rt, positions->with_layout(positions->layout().transpose(axis, last)), pout, l.stream());
  }
}

// The one element of a 0-d int64 array (synchronizes with its stream).
int64_t read_count(Runtime& rt, const Array& a) {
  return read_element(rt, a).i;
}

}  // namespace

const char* op_name(SortOp op) {
  static constexpr const char* kNames[] = {"sort", "nonzero", "unique", "searchsorted"};
  return kNames[static_cast<int>(op)];
}

Array sort(Runtime& rt, const Array& a, int axis, bool descending, Stream* stream) {
  Array v;
  sort_impl(rt, a, axis, descending, stream, &v, nullptr);
  return v;
}

Array argsort(Runtime& rt, const Array& a, int axis, bool descending, Stream* stream) {
  Array i;
  sort_impl(rt, a, axis, descending, stream, nullptr, &i);
  return i;
}

Array count_nonzero(Runtime& rt, const Array& a, const std::vector<int>& axes, bool all,
                    bool keepdims, Stream* stream) {
  a.check_alive();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= a.ndim()) {
      fail(ErrorKind::Index, "axis {} (0-based) is out of range for a {}-d array", axes[i],
           a.ndim());
    }
    for (size_t j = 0; j < i; ++j) {
      if (axes[i] == axes[j]) fail(ErrorKind::Value, "axis {} is repeated", axes[i]);
    }
  }
  const Array flags = astype(rt, a, DType::Bool, stream);
  if (all) return reduce(rt, ReduceOp::Sum, flags, std::nullopt, keepdims, nullptr, stream);
  // One axis at a time, the highest first (the others keep their positions), sizes kept as 1.
  std::vector<int> order = axes;
  std::sort(order.rbegin(), order.rend());
  Array r = flags;
  bool summed = false;
  for (int ax : order) {
    r = reduce(rt, ReduceOp::Sum, r, ax, true, nullptr, stream);
    summed = true;
  }
  if (!summed) r = astype(rt, flags, DType::I64, stream);  // no axis: every element on its own
  if (keepdims) return r;
  Shape s;
  for (int d = 0; d < a.ndim(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) s.push(a.shape()[d]);
  }
  return view_as(r, s);
}

std::vector<Array> nonzero(Runtime& rt, const Array& a, Stream* stream) {
  a.check_alive();
  if (a.ndim() == 0) {
    fail(ErrorKind::Value,
         "nonzero of a 0-d array is not defined (the Array API standard): reshape it to 1-d");
  }
  const Array total = count_nonzero(rt, a, {}, true, false, stream);
  const int64_t count = read_count(rt, total);
  const Launcher l = place_of(rt, a, stream);
  Array coords = l.empty(Shape{a.ndim(), count}, DType::I64);
  if (count > 0) {
    const Array in = contiguous(rt, a, l.stream());
    SortCall c;
    c.op = SortOp::Nonzero;
    c.dtype = a.dtype();
    c.n = a.size();
    c.ndim = a.ndim();
    for (int d = 0; d < a.ndim(); ++d) c.shape[d] = a.shape()[d];
    c.in = in.data();
    c.out_index = static_cast<int64_t*>(coords.data());
    c.count = count;
    l.run(c, in, coords);
  }
  std::vector<Array> out;
  for (int d = 0; d < a.ndim(); ++d) {
    out.push_back(coords.with_layout(coords.layout().select(d)));
  }
  return out;
}

UniqueResult unique(Runtime& rt, const Array& a, bool counts, bool indices, bool inverse,
                    Stream* stream) {
  a.check_alive();
  const Launcher l = place_of(rt, a, stream);
  const int64_t n = a.size();
  const Array flat = reshape(rt, a, Shape{n}, l.stream());
  const bool perm = indices || inverse;
  Array sorted, positions;
  sort_impl(rt, flat, 0, false, l.stream(), &sorted, perm ? &positions : nullptr);
  UniqueResult r;
  Array values = l.empty(Shape{n}, a.dtype());
  Array cnt, first, inv;
  if (counts) cnt = l.empty(Shape{n}, DType::I64);
  if (indices) first = l.empty(Shape{n}, DType::I64);
  if (inverse) inv = l.empty(Shape{n}, DType::I64);
  int64_t k = 0;
  if (n > 0) {
    Array total = l.empty(Shape{}, DType::I64);
    SortCall c;
    c.op = SortOp::Unique;
    c.dtype = a.dtype();
    c.n = n;
    c.in = sorted.data();
    c.perm = perm ? static_cast<const int64_t*>(positions.data()) : nullptr;
    c.out = values.data();
    c.out_counts = counts ? static_cast<int64_t*>(cnt.data()) : nullptr;
    c.out_index = indices ? static_cast<int64_t*>(first.data()) : nullptr;
    c.out_inverse = inverse ? static_cast<int64_t*>(inv.data()) : nullptr;
    c.out_count = static_cast<int64_t*>(total.data());
    l.run(c, sorted, perm ? &positions : nullptr, values, counts ? &cnt : nullptr,
          indices ? &first : nullptr, inverse ? &inv : nullptr, total);
    k = read_count(rt, total);
  }
  // The first k elements, in arrays of their own (the rest of the room is given back).
  const auto head = [&](const Array& x) {
    return clone(rt, x.with_layout(x.layout().narrow(0, 0, k)), l.stream());
  };
  r.values = head(values);
  if (counts) r.counts = head(cnt);
  if (indices) r.indices = head(first);
  if (inverse) r.inverse = view_as(inv, a.shape());
  return r;
}

Array searchsorted(Runtime& rt, const Array& x1, const Array& x2, bool right, const Array* sorter,
                   Stream* stream) {
  x1.check_alive("argument 'x1'");
  x2.check_alive("argument 'x2'");
  if (sorter) sorter->check_alive("the sorter");
  if (x1.ndim() != 1) {
    fail(ErrorKind::Value, "x1 must be a 1-d array, got a {}-d array", x1.ndim());
  }
  const auto same_place = [&](const Array& b, const char* what) {
    if (is_host(b.location()) != is_host(x1.location()) ||
        (!is_host(b.location()) && b.device() != x1.device())) {
      fail(ErrorKind::Value, "{} must be where x1 is ({} array on device {}), got a {} array", what,
           location_name(x1.location()), x1.device(), location_name(b.location()));
    }
  };
  same_place(x2, "x2");
  if (sorter) {
    same_place(*sorter, "the sorter");
    if (!is_integer(sorter->dtype())) {
      fail(ErrorKind::Type, "the sorter must be an integer array, got {}", name(sorter->dtype()));
    }
    if (sorter->ndim() != 1 || sorter->size() != x1.size()) {
      fail(ErrorKind::Value, "the sorter must be a 1-d array of x1's length {}, got shape {}",
           x1.size(), sorter->shape().str());
    }
  }
  const DType t = promote_types(x1.dtype(), x2.dtype());
  const Launcher l = place_of(rt, x1, stream);
  Stream* const s = l.stream();
  if (is_host(x2.location())) wait_host_access(rt, *x2.buffer(), "a host searchsorted");
  Array perm;
  if (sorter && sorter->size() > 0) {
    perm = astype(rt, *sorter, DType::I64, s);
    const int64_t lo =
        read_element(rt, reduce(rt, ReduceOp::Min, perm, std::nullopt, false, nullptr, s)).i;
    const int64_t hi =
        read_element(rt, reduce(rt, ReduceOp::Max, perm, std::nullopt, false, nullptr, s)).i;
    if (lo < 1 || hi > x1.size()) {
      fail(ErrorKind::Value,
           "the sorter's positions must lie in 1..{} (1-based positions in x1), got {}..{}",
           x1.size(), lo, hi);
    }
  }
  Array result = l.empty(x2.shape(), DType::I64);
  if (x2.size() == 0) return result;
  const Array a = x1.dtype() == t ? contiguous(rt, x1, s) : astype(rt, x1, t, s);
  const Array v = x2.dtype() == t ? contiguous(rt, x2, s) : astype(rt, x2, t, s);
  SortCall c;
  c.op = SortOp::Searchsorted;
  c.dtype = t;
  c.right = right;
  c.n = x1.size();
  c.rows = x2.size();
  c.in = a.data();
  c.in2 = v.data();
  c.perm = perm.buffer() ? static_cast<const int64_t*>(perm.data()) : nullptr;
  c.out_index = static_cast<int64_t*>(result.data());
  l.run(c, a, v, perm.buffer() ? &perm : nullptr, result);
  return result;
}

}  // namespace culua::detail
