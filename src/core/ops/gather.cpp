// Gathers and scatters: index checks and conversion, the views of take, take_along_axis and put,
// their launch with the out-of-range flag read back, and boolean masks.
#include "core/ops/gather.hpp"

#include <cstring>

#include "core/backend/backend.hpp"
#include "core/backend/gather_call.hpp"
#include "core/base/error.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/manip.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

namespace {

void check_same_place(const Array& a, const Array& b, const char* what) {
  b.check_alive(what);
  const auto place = [](const Array& x) {
    return is_host(x.location()) ? fmt::format("a {} host array", location_name(x.location()))
                                 : fmt::format("an array of device {}", x.device());
  };
  if (is_host(a.location()) != is_host(b.location()) ||
      (!is_host(a.location()) && a.device() != b.device())) {
    fail(ErrorKind::Value, "{} is {} but the indexed array is {}: both must be in one place", what,
         place(b), place(a));
  }
}

// The index as int64 (a copy when it has another integer dtype).
Array int64_index(Runtime& rt, const Array& index, const Array& a, Stream* stream) {
  check_same_place(a, index, "the index array");
  if (index.dtype() == DType::I64) return index;
  if (!is_integer(index.dtype())) {
    fail(ErrorKind::Type, "index arrays must have an integer dtype (or bool for a mask), got {}",
         name(index.dtype()));
  }
  // u64 values from 2^63 up would wrap to negative indices (counted from the end): through f64
  // they saturate at 2^63 - 1 and are out of range as numpy says (exact below 2^53, and any
  // larger index is out of range anyway).
  if (index.dtype() == DType::U64) {
    return astype(rt, astype(rt, index, DType::F64, stream), DType::I64, stream);
  }
  return astype(rt, index, DType::I64, stream);
}

StridedView view_of(const Array& a, const Layout& l) {
  return a.with_layout(l).view();
}

// Where the calls on `data` run.
Launcher place_of(Runtime& rt, const Array& data, Stream* stream) {
  return Launcher(rt, data, stream, "a host gather");
}

// Runs one call; raises for the first out-of-range index the kernel saw.
void run(const Launcher& l, GatherCall call, const Array& data, const Array& other,
         const Array& index) {
  if (call.other.size == 0) return;
  int64_t bad[2] = {0, 0};
  if (l.host()) {
    l.wait(data, other, index);
    call.bad = bad;
    l.run(call);
  } else {
    // The kernel's flag and first bad index, read back after it.
    Array flag =
        full(l.runtime(), Shape{2}, DType::I64, Scalar::integer(0), Location::Device, l.stream());
    call.bad = static_cast<int64_t*>(flag.data());
    l.run(call, data, other, index, flag);
    const std::vector<unsigned char> bytes = read_contiguous(l.runtime(), flag);
    std::memcpy(bad, bytes.data(), sizeof bad);
  }
  if (bad[0]) {
    const int64_t n = call.data.shape[call.axis];
    fail(ErrorKind::Index,
         "index {} is out of range for axis {} of size {} (indices 1..{}, or -{}..-1)", bad[1],
         call.axis + 1, n, n, n);
  }
}

GatherCall make_call(GatherCall::Mode mode, int axis, const Array& data, const Layout& data_l,
                     const Array& other, const Layout& other_l, const Array& index,
                     const Layout& index_l) {
  GatherCall c;
  c.mode = mode;
  c.axis = axis;
  c.data = view_of(data, data_l);
  c.other = view_of(other, other_l);
  c.index = view_of(index, index_l);
  return c;
}

void check_axis(int axis, int ndim) {
  if (axis < 0 || axis >= ndim)
    fail(ErrorKind::Index, "axis {} is out of range for a {}-d array", axis + 1, ndim);
}

// The index (1-D, contiguous) as a view of `shape` varying along `axis` only.
Layout index_along(const Array& flat, const Shape& shape, int axis) {
  Layout l = Layout::contiguous(shape);
  for (int d = 0; d < shape.ndim; ++d) l.strides[static_cast<size_t>(d)] = 0;
  l.strides[static_cast<size_t>(axis)] = 1;
  l.offset = flat.layout().offset;
  return l;
}

// Dimensions [0, k) of `l` merged into one, when the memory allows a view.
std::optional<Layout> merge_leading(const Layout& l, int k) {
  Layout m;
  int64_t count = 1, stride = 1;
  int last = -1;
  for (int d = 0; d < k; ++d) {
    const auto u = static_cast<size_t>(d);
    count *= l.shape[u];
    if (l.shape[u] == 1) continue;
    if (last >= 0 && l.strides[static_cast<size_t>(last)] != l.strides[u] * l.shape[u] &&
        count != 0)
      return std::nullopt;
    last = d;
    stride = l.strides[u];
  }
  m.ndim = l.ndim - k + 1;
  m.offset = l.offset;
  m.shape[0] = count;
  m.strides[0] = stride;
  for (int d = k; d < l.ndim; ++d) {
    m.shape[static_cast<size_t>(d - k + 1)] = l.shape[static_cast<size_t>(d)];
    m.strides[static_cast<size_t>(d - k + 1)] = l.strides[static_cast<size_t>(d)];
  }
  return m;
}

std::vector<int64_t> mask_positions(Runtime& rt, const Array& a, const Array& mask) {
  check_same_place(a, mask, "the mask");
  if (mask.dtype() != DType::Bool) {
    fail(ErrorKind::Type, "a mask must be a bool array, got {}", name(mask.dtype()));
  }
  bool fits = mask.ndim() <= a.ndim() && (mask.ndim() > 0 || a.ndim() == 0);
  for (int d = 0; fits && d < mask.ndim(); ++d)
    fits = mask.layout().shape[static_cast<size_t>(d)] == a.layout().shape[static_cast<size_t>(d)];
  if (!fits || mask.ndim() == 0) {
    fail(ErrorKind::Value,
         "the mask's shape {} must be the array's shape {} or its leading dimensions",
         mask.shape().str(), a.shape().str());
  }
  const std::vector<unsigned char> bytes = read_contiguous(rt, mask);
  std::vector<int64_t> pos;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i]) pos.push_back(static_cast<int64_t>(i) + 1);
  }
  return pos;
}

}  // namespace

Array index_array(Runtime& rt, const std::vector<int64_t>& positions, const Array& like,
                  Stream* stream) {
  const Shape shape{static_cast<int64_t>(positions.size())};
  if (is_host(like.location())) {
    Array out = empty(rt, shape, DType::I64, Location::Pageable);
    if (!positions.empty())
      std::memcpy(out.data(), positions.data(), positions.size() * sizeof(int64_t));
    return out;
  }
  const DeviceSelection selected(rt, like.device());
  Stream& s = stream_for(rt, like, stream);
  Array out = empty(rt, shape, DType::I64, Location::Device, &s);
  if (!positions.empty()) {
    copy(rt, out,
         Array::wrap(rt.backend_ptr(), const_cast<int64_t*>(positions.data()), shape, DType::I64,
                     Location::Pageable, 0),
         stream);
  }
  return out;
}

Array take(Runtime& rt, const Array& a, const Array& index, std::optional<int> axis,
           Stream* stream) {
  a.check_alive();
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot take from a 0-d array");
  if (!axis) {
    if (a.ndim() != 1)
      fail(ErrorKind::Value, "axis is required for a {}-d array (only a 1-D one has a default)",
           a.ndim());
    axis = 0;
  }
  check_axis(*axis, a.ndim());
  const Array idx = int64_index(rt, index, a, stream);
  Shape result;
  for (int d = 0; d < a.ndim(); ++d) {
    if (d == *axis) {
      for (int k = 0; k < idx.ndim(); ++k) result.push(idx.layout().shape[static_cast<size_t>(k)]);
    } else {
      result.push(a.layout().shape[static_cast<size_t>(d)]);
    }
  }
  const Array flat = reshape(rt, idx, Shape{idx.size()}, stream);
  Shape gathered = a.shape();
  gathered.dims[static_cast<size_t>(*axis)] = idx.size();
  const Launcher l = place_of(rt, a, stream);
  Array out = empty(rt, gathered, a.dtype(), a.location(), l.stream());
  if (out.size() > 0 && a.layout().shape[static_cast<size_t>(*axis)] == 0) {
    // Nothing to index into: every index is out of range.
    fail(ErrorKind::Index, "index {} is out of range for axis {} of size 0",
         read_element(rt, flat.with_layout(flat.layout().select(0))).str(), *axis + 1);
  }
  run(l,
      make_call(GatherCall::Mode::Gather, *axis, a, a.layout(), out, out.layout(), flat,
                index_along(flat, gathered, *axis)),
      a, out, flat);
  return view_as(out, result);
}

Array take_along_axis(Runtime& rt, const Array& a, const Array& index, int axis, Stream* stream) {
  a.check_alive();
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot take from a 0-d array");
  check_axis(axis, a.ndim());
  const Array idx = int64_index(rt, index, a, stream);
  if (idx.ndim() != a.ndim()) {
    fail(ErrorKind::Value, "the index must have the array's {} dimensions, got {}", a.ndim(),
         idx.ndim());
  }
  Shape shape;
  Layout data_l = a.layout();
  for (int d = 0; d < a.ndim(); ++d) {
    const auto u = static_cast<size_t>(d);
    const int64_t n = a.layout().shape[u], m = idx.layout().shape[u];
    if (d == axis) {
      shape.push(m);
    } else if (n == m || m == 1) {
      shape.push(n);
    } else if (n == 1) {
      shape.push(m);
      data_l.strides[u] = 0;
      data_l.shape[u] = m;
    } else {
      fail(ErrorKind::Value, "the index's shape {} does not broadcast with the array's {}",
           idx.shape().str(), a.shape().str());
    }
  }
  Layout index_l = idx.layout();
  for (int d = 0; d < a.ndim(); ++d) {
    const auto u = static_cast<size_t>(d);
    if (index_l.shape[u] != shape[d]) {
      index_l.shape[u] = shape[d];
      index_l.strides[u] = 0;
    }
  }
  const Launcher l = place_of(rt, a, stream);
  Array out = empty(rt, shape, a.dtype(), a.location(), l.stream());
  if (out.size() > 0 && a.layout().shape[static_cast<size_t>(axis)] == 0)
    fail(ErrorKind::Index, "indices are out of range for axis {} of size 0", axis + 1);
  run(l, make_call(GatherCall::Mode::Gather, axis, a, data_l, out, out.layout(), idx, index_l), a,
      out, idx);
  return out;
}

void put(Runtime& rt, const Array& a, const Array& index, const Array& values, int axis,
         Stream* stream) {
  a.check_alive();
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot index a 0-d array");
  check_axis(axis, a.ndim());
  check_same_place(a, values, "the values");
  const Array idx = int64_index(rt, index, a, stream);
  const Array flat = reshape(rt, idx, Shape{idx.size()}, stream);
  Shape target = a.shape();
  target.dims[static_cast<size_t>(axis)] = idx.size();
  if (Layout::contiguous(target).size() == 0) return;
  if (a.layout().shape[static_cast<size_t>(axis)] == 0)
    fail(ErrorKind::Index, "indices are out of range for axis {} of size 0", axis + 1);
  Array v = values.dtype() == a.dtype() ? values : astype(rt, values, a.dtype(), stream);
  const Layout v_l = broadcast_layout(v.layout(), target);
  const Layout i_l = index_along(flat, target, axis);
  // Every index is checked before the first write.
  const Launcher l = place_of(rt, a, stream);
  run(l, make_call(GatherCall::Mode::Check, axis, a, a.layout(), v, v_l, flat, i_l), a, v, flat);
  run(l, make_call(GatherCall::Mode::Scatter, axis, a, a.layout(), v, v_l, flat, i_l), a, v, flat);
}

Array mask_read(Runtime& rt, const Array& a, const Array& mask, Stream* stream) {
  a.check_alive();
  const std::vector<int64_t> pos = mask_positions(rt, a, mask);
  Shape rows{mask.size()};
  for (int d = mask.ndim(); d < a.ndim(); ++d) rows.push(a.layout().shape[static_cast<size_t>(d)]);
  std::optional<Layout> merged = merge_leading(a.layout(), mask.ndim());
  const Array flat = merged ? a.with_layout(*merged) : reshape(rt, a, rows, stream);
  return take(rt, flat, index_array(rt, pos, a, stream), 0, stream);
}

void mask_write(Runtime& rt, const Array& a, const Array& mask, const Array& values,
                Stream* stream) {
  a.check_alive();
  const std::vector<int64_t> pos = mask_positions(rt, a, mask);
  Shape rows{mask.size()};
  for (int d = mask.ndim(); d < a.ndim(); ++d) rows.push(a.layout().shape[static_cast<size_t>(d)]);
  Shape selected = rows;
  selected.dims[0] = static_cast<int64_t>(pos.size());
  broadcast_layout(values.layout(), selected);  // checks the values' shape before any work
  const Array idx = index_array(rt, pos, a, stream);
  if (std::optional<Layout> merged = merge_leading(a.layout(), mask.ndim())) {
    put(rt, a.with_layout(*merged), idx, values, 0, stream);
    return;
  }
  // A strided array whose leading dimensions cannot be one: through a contiguous copy.
  Array c = clone(rt, a, stream);
  put(rt, c.with_layout(c.layout().reshaped(rows)), idx, values, 0, stream);
  copy(rt, a, c, stream);
}

}  // namespace culua::detail
