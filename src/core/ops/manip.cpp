#include "core/ops/manip.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/gather.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/ops.hpp"
#include "core/ops/reduce.hpp"

namespace culua::detail {

namespace {

size_t u(int d) {
  return static_cast<size_t>(d);
}

void check_axis(int axis, int ndim) {
  if (axis < 0 || axis >= ndim)
    fail(ErrorKind::Index, "axis {} is out of range for a {}-d array", axis + 1, ndim);
}

// A layout with dimension `axis` removed (the element at `index` along it).
Layout drop_axis(const Layout& l, int axis, int64_t index) {
  Layout r;
  r.ndim = l.ndim - 1;
  r.offset = l.offset + index * l.strides[u(axis)];
  for (int d = 0, k = 0; d < l.ndim; ++d) {
    if (d == axis) continue;
    r.shape[u(k)] = l.shape[u(d)];
    r.strides[u(k)] = l.strides[u(d)];
    ++k;
  }
  return r;
}

// A layout with a new dimension of `size` (stride `stride`) before position `axis`.
Layout insert_axis(const Layout& l, int axis, int64_t size, int64_t stride) {
  if (l.ndim >= kMaxDims) fail(ErrorKind::Value, "arrays have at most {} dimensions", kMaxDims);
  Layout r;
  r.ndim = l.ndim + 1;
  r.offset = l.offset;
  for (int d = 0, k = 0; d < r.ndim; ++d) {
    if (d == axis) {
      r.shape[u(d)] = size;
      r.strides[u(d)] = stride;
    } else {
      r.shape[u(d)] = l.shape[u(k)];
      r.strides[u(d)] = l.strides[u(k)];
      ++k;
    }
  }
  return r;
}

void check_same_place(const std::vector<Array>& arrays) {
  for (size_t i = 1; i < arrays.size(); ++i) {
    const Array& a = arrays[0];
    const Array& b = arrays[i];
    if (is_host(a.location()) != is_host(b.location()) ||
        (!is_host(a.location()) && a.device() != b.device())) {
      fail(ErrorKind::Value, "array {} is a {} array of device {}, array 1 a {} array of device {}",
           i + 1, location_name(b.location()), b.device(), location_name(a.location()), a.device());
    }
  }
}

Stream* alloc_stream(Runtime& rt, const Array& like, Stream* stream) {
  return is_host(like.location()) ? nullptr : &stream_for(rt, like, stream);
}

Array empty_like_place(Runtime& rt, const Shape& s, DType t, const Array& like, Stream* stream) {
  return empty(rt, s, t, like.location(), alloc_stream(rt, like, stream));
}

std::vector<bool> axis_set(const std::vector<int>& axes, int ndim, const char* what) {
  std::vector<bool> seen(u(ndim), false);
  for (int a : axes) {
    check_axis(a, ndim);
    if (seen[u(a)]) fail(ErrorKind::Value, "axis {} appears twice{}", a + 1, what);
    seen[u(a)] = true;
  }
  return seen;
}

}  // namespace

Layout broadcast_layout(const Layout& l, const Shape& to) {
  if (to.ndim < l.ndim) {
    fail(ErrorKind::Value, "cannot broadcast shape {} to {}: fewer dimensions", l.dims().str(),
         to.str());
  }
  Layout r;
  r.ndim = to.ndim;
  r.offset = l.offset;
  const int lead = to.ndim - l.ndim;
  for (int d = 0; d < to.ndim; ++d) {
    r.shape[u(d)] = to[d];
    if (d < lead) {
      r.strides[u(d)] = 0;
      continue;
    }
    const int64_t n = l.shape[u(d - lead)];
    if (n == to[d]) {
      r.strides[u(d)] = l.strides[u(d - lead)];
    } else if (n == 1) {
      r.strides[u(d)] = 0;
    } else {
      fail(ErrorKind::Value, "cannot broadcast shape {} to {}", l.dims().str(), to.str());
    }
  }
  return r;
}

Array broadcast_to(const Array& a, const Shape& to) {
  a.check_alive();
  checked_numel(to, itemsize(a.dtype()));
  return a.with_layout(broadcast_layout(a.layout(), to));
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  Shape s;
  for (const Array& a : arrays) {
    a.check_alive();
    s = broadcast_shapes(s, a.shape());
  }
  std::vector<Array> r;
  for (const Array& a : arrays) r.push_back(broadcast_to(a, s));
  return r;
}

Array permute_dims(const Array& a, const std::vector<int>& axes) {
  a.check_alive();
  if (static_cast<int>(axes.size()) != a.ndim()) {
    fail(ErrorKind::Value, "{} axes expected for a {}-d array, got {}", a.ndim(), a.ndim(),
         axes.size());
  }
  axis_set(axes, a.ndim(), "");
  Layout l = a.layout();
  for (int d = 0; d < a.ndim(); ++d) {
    l.shape[u(d)] = a.layout().shape[u(axes[u(d)])];
    l.strides[u(d)] = a.layout().strides[u(axes[u(d)])];
  }
  return a.with_layout(l);
}

Array moveaxis(const Array& a, const std::vector<int>& source, const std::vector<int>& dest) {
  a.check_alive();
  if (source.size() != dest.size()) {
    fail(ErrorKind::Value, "{} source axes but {} destinations", source.size(), dest.size());
  }
  const std::vector<bool> moved = axis_set(source, a.ndim(), " among the source axes");
  axis_set(dest, a.ndim(), " among the destinations");
  std::vector<int> order;
  for (int d = 0; d < a.ndim(); ++d)
    if (!moved[u(d)]) order.push_back(d);
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i < source.size(); ++i) pairs.emplace_back(dest[i], source[i]);
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [to, from] : pairs) order.insert(order.begin() + to, from);
  return permute_dims(a, order);
}

Array expand_dims(const Array& a, int axis) {
  a.check_alive();
  if (axis < 0 || axis > a.ndim()) {
    fail(ErrorKind::Index, "axis {} is out of range for expand_dims of a {}-d array (1..{})",
         axis + 1, a.ndim(), a.ndim() + 1);
  }
  return a.with_layout(insert_axis(a.layout(), axis, 1, 0));
}

Array squeeze(const Array& a, const std::vector<int>& axes, bool all) {
  a.check_alive();
  std::vector<bool> drop = axis_set(axes, a.ndim(), "");
  for (int d = 0; d < a.ndim(); ++d) {
    const int64_t n = a.layout().shape[u(d)];
    if (drop[u(d)] && n != 1)
      fail(ErrorKind::Value, "cannot squeeze axis {} of size {} (only size 1)", d + 1, n);
    if (all && axes.empty() && n == 1) drop[u(d)] = true;
  }
  Layout l = a.layout();
  for (int d = a.ndim() - 1; d >= 0; --d)
    if (drop[u(d)]) l = drop_axis(l, d, 0);
  return a.with_layout(l);
}

Array flip(const Array& a, const std::vector<int>& axes) {
  a.check_alive();
  std::vector<bool> f = axis_set(axes, a.ndim(), "");
  if (axes.empty()) f.assign(u(a.ndim()), true);
  Layout l = a.layout();
  if (l.size() == 0) return a.with_layout(l);
  for (int d = 0; d < a.ndim(); ++d) {
    if (!f[u(d)]) continue;
    l.offset += (l.shape[u(d)] - 1) * l.strides[u(d)];
    l.strides[u(d)] = -l.strides[u(d)];
  }
  return a.with_layout(l);
}

Array matrix_transpose(const Array& a) {
  a.check_alive();
  if (a.ndim() < 2) {
    fail(ErrorKind::Value, "matrix_transpose needs at least 2 dimensions, got a {}-d array",
         a.ndim());
  }
  return a.with_layout(a.layout().transpose(a.ndim() - 2, a.ndim() - 1));
}

Array slice(const Array& a, int dim, int64_t start, int64_t count, int64_t step) {
  a.check_alive();
  check_axis(dim, a.ndim());
  Layout l = a.layout();
  if (count > 0) {
    const int64_t n = l.shape[u(dim)];
    const int64_t last = start + (count - 1) * step;
    if (start < 0 || start >= n || last < 0 || last >= n)
      fail(ErrorKind::Index, "slice outside dimension {} of size {}", dim + 1, n);
    l.offset += start * l.strides[u(dim)];
  }
  l.shape[u(dim)] = count;
  l.strides[u(dim)] *= step;
  return a.with_layout(l);
}

std::vector<Array> unstack(const Array& a, int axis) {
  a.check_alive();
  check_axis(axis, a.ndim());
  std::vector<Array> r;
  for (int64_t i = 0; i < a.layout().shape[u(axis)]; ++i)
    r.push_back(a.with_layout(drop_axis(a.layout(), axis, i)));
  return r;
}

Array concat(Runtime& rt, const std::vector<Array>& arrays, std::optional<int> axis,
             Stream* stream) {
  if (arrays.empty()) fail(ErrorKind::Value, "concat needs at least one array");
  for (const Array& a : arrays) a.check_alive();
  check_same_place(arrays);
  if (!axis) {
    std::vector<Array> flat;
    for (const Array& a : arrays) flat.push_back(reshape(rt, a, Shape{a.size()}, stream));
    return concat(rt, flat, 0, stream);
  }
  const Array& first = arrays[0];
  if (first.ndim() == 0) fail(ErrorKind::Value, "cannot concatenate 0-d arrays along an axis");
  check_axis(*axis, first.ndim());
  DType t = first.dtype();
  Shape shape = first.shape();
  shape.dims[u(*axis)] = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Array& a = arrays[i];
    bool fits = a.ndim() == first.ndim();
    for (int d = 0; fits && d < a.ndim(); ++d)
      fits = d == *axis || a.layout().shape[u(d)] == first.layout().shape[u(d)];
    if (!fits) {
      fail(ErrorKind::Value,
           "array {} has shape {}, array 1 {}: they must match except along axis {}", i + 1,
           a.shape().str(), first.shape().str(), *axis + 1);
    }
    shape.dims[u(*axis)] += a.layout().shape[u(*axis)];
    if (i) t = promote_types(t, a.dtype());
  }
  Array out = empty_like_place(rt, shape, t, first, stream);
  int64_t offset = 0;
  for (const Array& a : arrays) {
    const int64_t n = a.layout().shape[u(*axis)];
    copy(rt, out.with_layout(out.layout().narrow(*axis, offset, n)), a, stream);
    offset += n;
  }
  return out;
}

Array stack(Runtime& rt, const std::vector<Array>& arrays, int axis, Stream* stream) {
  if (arrays.empty()) fail(ErrorKind::Value, "stack needs at least one array");
  for (const Array& a : arrays) a.check_alive();
  check_same_place(arrays);
  const Array& first = arrays[0];
  if (axis < 0 || axis > first.ndim()) {
    fail(ErrorKind::Index, "axis {} is out of range for stacking {}-d arrays (1..{})", axis + 1,
         first.ndim(), first.ndim() + 1);
  }
  DType t = first.dtype();
  for (size_t i = 1; i < arrays.size(); ++i) {
    if (!(arrays[i].shape() == first.shape())) {
      fail(ErrorKind::Value, "array {} has shape {}, array 1 {}: stack needs equal shapes", i + 1,
           arrays[i].shape().str(), first.shape().str());
    }
    t = promote_types(t, arrays[i].dtype());
  }
  Layout shape_l =
      insert_axis(Layout::contiguous(first.shape()), axis, static_cast<int64_t>(arrays.size()), 0);
  Array out = empty_like_place(rt, shape_l.dims(), t, first, stream);
  for (size_t i = 0; i < arrays.size(); ++i) {
    copy(rt, out.with_layout(out.layout().narrow(axis, static_cast<int64_t>(i), 1)),
         expand_dims(arrays[i], axis), stream);
  }
  return out;
}

Array roll(Runtime& rt, const Array& a, const std::vector<int64_t>& shifts,
           const std::vector<int>& axes, Stream* stream) {
  a.check_alive();
  if (axes.empty()) {
    if (shifts.size() != 1)
      fail(ErrorKind::Value, "roll without axes takes one shift, got {}", shifts.size());
    const Array flat = reshape(rt, a, Shape{a.size()}, stream);
    const Array r = roll(rt, flat, shifts, {0}, stream);
    return view_as(r, a.shape());
  }
  if (shifts.size() != axes.size() && shifts.size() != 1) {
    fail(ErrorKind::Value, "{} shifts for {} axes (give one, or one per axis)", shifts.size(),
         axes.size());
  }
  for (int ax : axes) check_axis(ax, a.ndim());
  Array cur = a;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int ax = axes[i];
    const int64_t n = cur.layout().shape[u(ax)];
    Array out = empty_like_place(rt, a.shape(), a.dtype(), a, stream);
    if (n == 0 || out.size() == 0) return out;
    int64_t s = shifts.size() == 1 ? shifts[0] : shifts[i];
    s %= n;
    if (s < 0) s += n;
    copy(rt, out.with_layout(out.layout().narrow(ax, s, n - s)),
         cur.with_layout(cur.layout().narrow(ax, 0, n - s)), stream);
    if (s > 0) {
      copy(rt, out.with_layout(out.layout().narrow(ax, 0, s)),
           cur.with_layout(cur.layout().narrow(ax, n - s, s)), stream);
    }
    cur = out;
  }
  if (cur.buffer() == a.buffer()) return clone(rt, a, stream);
  return cur;
}

Array repeat(Runtime& rt, const Array& a, const std::vector<int64_t>& repeats,
             std::optional<int> axis, Stream* stream) {
  a.check_alive();
  if (!axis) return repeat(rt, reshape(rt, a, Shape{a.size()}, stream), repeats, 0, stream);
  check_axis(*axis, a.ndim());
  const int64_t n = a.layout().shape[u(*axis)];
  for (int64_t r : repeats)
    if (r < 0) fail(ErrorKind::Value, "repeats must not be negative, got {}", r);
  if (repeats.size() == 1 && a.ndim() < kMaxDims) {
    // Every element r times: a stride-0 dimension after the axis, copied, then merged with it.
    const int64_t r = repeats[0];
    Shape shape = a.shape();
    checked_numel(Shape{n, r}, 1);
    shape.dims[u(*axis)] = n * r;
    checked_numel(shape, itemsize(a.dtype()));
    Array out = empty_like_place(rt, shape, a.dtype(), a, stream);
    const Layout spread = insert_axis(a.layout(), *axis + 1, r, 0);
    copy(rt, out.with_layout(out.layout().reshaped(spread.dims())), a.with_layout(spread), stream);
    return out;
  }
  if (repeats.size() != 1 && static_cast<int64_t>(repeats.size()) != n) {
    fail(ErrorKind::Value, "{} repeats for an axis of length {} (give one, or one per element)",
         repeats.size(), n);
  }
  // The result's length first: counts whose sum passes int64 (or the memory) are an error, not
  // an allocation of their positions.
  int64_t total = 0;
  for (const int64_t r : repeats) {
    if (r > std::numeric_limits<int64_t>::max() - total) {
      fail(ErrorKind::Value, "repeats: the counts add up to more than {} elements",
           std::numeric_limits<int64_t>::max());
    }
    total += r;
  }
  Shape shape = a.shape();
  shape.dims[u(*axis)] = total;
  checked_numel(shape, itemsize(a.dtype()));
  checked_numel(Shape{total}, sizeof(int64_t));
  std::vector<int64_t> pos;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t r = repeats.size() == 1 ? repeats[0] : repeats[u(static_cast<int>(j))];
    pos.insert(pos.end(), static_cast<size_t>(r), j + 1);
  }
  return take(rt, a, index_array(rt, pos, a, stream), *axis, stream);
}

Array tile(Runtime& rt, const Array& a, const std::vector<int64_t>& reps, Stream* stream) {
  a.check_alive();
  for (int64_t r : reps)
    if (r < 0) fail(ErrorKind::Value, "reps must not be negative, got {}", r);
  if (static_cast<int>(reps.size()) > kMaxDims)
    fail(ErrorKind::Value, "arrays have at most {} dimensions", kMaxDims);
  Array cur = a;
  while (cur.ndim() < static_cast<int>(reps.size())) cur = expand_dims(cur, 0);
  std::vector<int64_t> r(u(cur.ndim()) - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  Shape shape = cur.shape();
  for (int d = 0; d < cur.ndim(); ++d) {
    checked_numel(Shape{shape[d], r[u(d)]}, 1);
    shape.dims[u(d)] *= r[u(d)];
  }
  checked_numel(shape, itemsize(a.dtype()));
  bool copied = false;
  for (int d = 0; d < cur.ndim(); ++d) {
    const int64_t k = r[u(d)];
    if (k == 1) continue;
    Shape s = cur.shape();
    s.dims[u(d)] *= k;
    Array out = empty_like_place(rt, s, a.dtype(), a, stream);
    if (out.size() > 0) {
      if (cur.ndim() < kMaxDims) {
        const Layout spread = insert_axis(cur.layout(), d, k, 0);
        copy(rt, out.with_layout(out.layout().reshaped(spread.dims())), cur.with_layout(spread),
             stream);
      } else {
        const int64_t n = cur.layout().shape[u(d)];
        for (int64_t i = 0; i < k; ++i)
          copy(rt, out.with_layout(out.layout().narrow(d, i * n, n)), cur, stream);
      }
    }
    cur = out;
    copied = true;
  }
  return copied ? cur : clone(rt, cur, stream);
}

Array eye(Runtime& rt, int64_t n, int64_t m, int64_t k, DType dtype, Location loc, Stream* stream) {
  Array out = full(rt, Shape{n, m}, dtype, Scalar::integer(0), loc, stream);
  const int64_t r0 = k < 0 ? -k : 0, c0 = k > 0 ? k : 0;
  const int64_t len = std::max<int64_t>(0, std::min(n - r0, m - c0));
  if (len > 0) {
    Layout d;
    d.ndim = 1;
    d.shape[0] = len;
    d.strides[0] = m + 1;
    d.offset = r0 * m + c0;
    fill(rt, out.with_layout(d), Scalar::integer(1), stream);
  }
  return out;
}

Array triangle(Runtime& rt, const Array& a, int64_t k, bool lower, Stream* stream) {
  a.check_alive();
  if (a.ndim() < 2) {
    fail(ErrorKind::Value, "{} needs at least 2 dimensions, got a {}-d array",
         lower ? "tril" : "triu", a.ndim());
  }
  const int64_t n = a.layout().shape[u(a.ndim() - 2)], m = a.layout().shape[u(a.ndim() - 1)];
  const Location loc = a.location();
  Stream* s = alloc_stream(rt, a, stream);
  const DeviceSelection selected(rt, is_host(loc) ? rt.device() : a.device());
  const Array rows =
      arange(rt, Scalar::integer(0), Scalar::integer(n), Scalar::integer(1), DType::I64, loc, s);
  const Array cols =
      arange(rt, Scalar::integer(0), Scalar::integer(m), Scalar::integer(1), DType::I64, loc, s);
  const Array diff =
      binary(rt, BinaryOp::Sub, cols.with_layout(insert_axis(cols.layout(), 0, 1, 0)),
             rows.with_layout(insert_axis(rows.layout(), 1, 1, 0)), nullptr, s);
  const Array keep =
      binary(rt, lower ? BinaryOp::Le : BinaryOp::Ge, diff, Scalar::integer(k), nullptr, s);
  const Array zero = full(rt, Shape{}, a.dtype(), Scalar::integer(0), loc, s);
  return where(rt, keep, a, zero, nullptr, s);
}

std::vector<Array> meshgrid(Runtime& rt, const std::vector<Array>& arrays, bool ij,
                            Stream* stream) {
  for (const Array& a : arrays) {
    a.check_alive();
    if (a.ndim() != 1)
      fail(ErrorKind::Value, "meshgrid takes 1-D arrays, got a {}-d one", a.ndim());
  }
  check_same_place(arrays);
  const int n = static_cast<int>(arrays.size());
  if (n > kMaxDims) fail(ErrorKind::Value, "arrays have at most {} dimensions", kMaxDims);
  // Output dimension of input i: i, except that "xy" swaps the first two.
  auto dim_of = [&](int i) { return !ij && n >= 2 && i < 2 ? 1 - i : i; };
  Shape shape;
  for (int d = 0; d < n; ++d) shape.push(0);
  for (int i = 0; i < n; ++i) shape.dims[u(dim_of(i))] = arrays[u(i)].size();
  checked_numel(shape, 16);
  std::vector<Array> out;
  for (int i = 0; i < n; ++i) {
    const Array& a = arrays[u(i)];
    Layout l;
    l.ndim = n;
    l.offset = a.layout().offset;
    for (int d = 0; d < n; ++d) {
      l.shape[u(d)] = shape[d];
      l.strides[u(d)] = d == dim_of(i) ? a.layout().strides[0] : 0;
    }
    out.push_back(clone(rt, a.with_layout(l), stream));
  }
  return out;
}

Array vecdot(Runtime& rt, const Array& a, const Array& b, int axis, Stream* stream) {
  a.check_alive();
  b.check_alive();
  const Shape s = broadcast_shapes(a.shape(), b.shape());
  check_axis(axis, s.ndim);
  // The standard: the contracted axis must have one length in both (no broadcasting there).
  const int ia = axis - (s.ndim - a.ndim()), ib = axis - (s.ndim - b.ndim());
  const int64_t na = ia >= 0 ? a.layout().shape[u(ia)] : 1;
  const int64_t nb = ib >= 0 ? b.layout().shape[u(ib)] : 1;
  if (na != nb) {
    fail(ErrorKind::Value, "axis {} has length {} in the first array and {} in the second",
         axis + 1, na, nb);
  }
  const DType t = promote_types(a.dtype(), b.dtype());
  const Array ca = is_complex(a.dtype()) ? unary(rt, UnaryOp::Conj, a, nullptr, stream) : a;
  const Array prod = binary(rt, BinaryOp::Mul, ca, b, nullptr, stream);
  if (t == DType::Bool) {
    const Array any = reduce(rt, ReduceOp::Max, prod, axis, false, nullptr, stream);
    return any;
  }
  const Array sum = reduce(rt, ReduceOp::Sum, prod, axis, false, nullptr, stream);
  return sum.dtype() == t ? sum : astype(rt, sum, t, stream);
}

Array outer(Runtime& rt, const Array& a, const Array& b, Stream* stream) {
  a.check_alive();
  b.check_alive();
  if (a.ndim() != 1 || b.ndim() != 1) {
    fail(ErrorKind::Value, "outer takes 1-D arrays, got {}-d and {}-d", a.ndim(), b.ndim());
  }
  return binary(rt, BinaryOp::Mul, a.with_layout(insert_axis(a.layout(), 1, 1, 0)), b, nullptr,
                stream);
}

Array tensordot(Runtime& rt, const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, Stream* stream) {
  a.check_alive();
  b.check_alive();
  if (axes_a.size() != axes_b.size()) {
    fail(ErrorKind::Value, "{} axes of the first array but {} of the second", axes_a.size(),
         axes_b.size());
  }
  const std::vector<bool> ca = axis_set(axes_a, a.ndim(), " among the first array's axes");
  const std::vector<bool> cb = axis_set(axes_b, b.ndim(), " among the second array's axes");
  int64_t k = 1;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    const int64_t na = a.layout().shape[u(axes_a[i])], nb = b.layout().shape[u(axes_b[i])];
    if (na != nb) {
      fail(ErrorKind::Value,
           "axis {} of the first array has length {}, axis {} of the "
           "second {}",
           axes_a[i] + 1, na, axes_b[i] + 1, nb);
    }
    k *= na;
  }
  std::vector<int> pa, pb;
  Shape result;
  int64_t m = 1, n = 1;
  for (int d = 0; d < a.ndim(); ++d) {
    if (ca[u(d)]) continue;
    pa.push_back(d);
    result.push(a.layout().shape[u(d)]);
    m *= a.layout().shape[u(d)];
  }
  pa.insert(pa.end(), axes_a.begin(), axes_a.end());
  pb = axes_b;
  for (int d = 0; d < b.ndim(); ++d) {
    if (cb[u(d)]) continue;
    pb.push_back(d);
    result.push(b.layout().shape[u(d)]);
    n *= b.layout().shape[u(d)];
  }
  const Array a2 = reshape(rt, permute_dims(a, pa), Shape{m, k}, stream);
  const Array b2 = reshape(rt, permute_dims(b, pb), Shape{k, n}, stream);
  MatmulOptions o;
  o.stream = stream;
  const Array r = matmul(rt, a2, b2, o);
  return view_as(r, result);
}

}  // namespace culua::detail
