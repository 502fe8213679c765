#include "core/model/layout.hpp"

#include <algorithm>

#include "core/base/error.hpp"

namespace culua::detail {

namespace {

// Dense row-major order (size-1 dimensions may have any stride; an empty view touches nothing).
bool row_major(int ndim, const int64_t* shape, const int64_t* strides) {
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return true;
  }
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

}  // namespace

Shape::Shape(std::initializer_list<int64_t> d) {
  for (int64_t v : d) push(v);
}

void Shape::push(int64_t d) {
  if (ndim >= kMaxDims) fail(ErrorKind::Value, "arrays have at most {} dimensions", kMaxDims);
  dims[static_cast<size_t>(ndim++)] = d;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= dims[static_cast<size_t>(i)];
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (ndim != o.ndim) return false;
  for (int i = 0; i < ndim; ++i) {
    if (dims[static_cast<size_t>(i)] != o.dims[static_cast<size_t>(i)]) return false;
  }
  return true;
}

std::string Shape::str() const {
  std::string s = "{";
  for (int i = 0; i < ndim; ++i) {
    if (i) s += ",";
    s += std::to_string(dims[static_cast<size_t>(i)]);
  }
  return s + "}";
}

int64_t checked_numel(const Shape& s, size_t itemsize) {
  constexpr int64_t kMaxBytes = int64_t{1} << 62;
  int64_t n = 1;
  for (int i = 0; i < s.ndim; ++i) {
    const int64_t d = s[i];
    if (d < 0) fail(ErrorKind::Value, "size {} in shape {} is negative", d, s.str());
    // n * d > 2^62, without a division.
    int64_t product = 0;
    if (__builtin_mul_overflow(n, d, &product) || product > kMaxBytes) {
      fail(ErrorKind::Value, "shape {} overflows: more than 2^62 elements", s.str());
    }
    n = product;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(itemsize), &bytes) || bytes > kMaxBytes) {
    fail(ErrorKind::Value, "shape {} overflows: more than 2^62 bytes", s.str());
  }
  return n;
}

Layout Layout::contiguous(const Shape& s) {
  Layout l;
  l.ndim = s.ndim;
  int64_t stride = 1;
  for (int i = s.ndim - 1; i >= 0; --i) {
    l.shape[static_cast<size_t>(i)] = s[i];
    l.strides[static_cast<size_t>(i)] = stride;
    // Wraps instead of overflowing: only an empty array's huge dimensions can get here (others
    // passed the element-count check), and its strides address nothing.
    stride = static_cast<int64_t>(static_cast<uint64_t>(stride) *
                                  static_cast<uint64_t>(std::max<int64_t>(s[i], 1)));
  }
  return l;
}

Shape Layout::dims() const {
  Shape s;
  s.ndim = ndim;
  s.dims = shape;
  return s;
}

int64_t Layout::size() const {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

bool Layout::is_contiguous() const {
  return row_major(ndim, shape.data(), strides.data());
}

int64_t Layout::extent_begin() const {
  int64_t lo = offset;
  for (int i = 0; i < ndim; ++i) {
    const auto k = static_cast<size_t>(i);
    if (shape[k] == 0) return offset;
    if (strides[k] < 0) lo += strides[k] * (shape[k] - 1);
  }
  return lo;
}

int64_t Layout::extent_end() const {
  int64_t hi = offset;
  for (int i = 0; i < ndim; ++i) {
    const auto k = static_cast<size_t>(i);
    if (shape[k] == 0) return offset;
    if (strides[k] > 0) hi += strides[k] * (shape[k] - 1);
  }
  return hi + 1;
}

Layout Layout::narrow(int dim, int64_t start, int64_t length) const {
  if (dim < 0 || dim >= ndim)
    fail(ErrorKind::Index, "dimension {} out of range for a {}-d array", dim + 1, ndim);
  const auto k = static_cast<size_t>(dim);
  if (length < 0) fail(ErrorKind::Value, "narrow length {} is negative", length);
  if (start < 0 || start > shape[k] || length > shape[k] - start) {
    fail(ErrorKind::Index, "narrow({}, {}, {}) is outside dimension {} of size {}", dim + 1,
         start + 1, length, dim + 1, shape[k]);
  }
  Layout l = *this;
  l.offset += start * strides[k];
  l.shape[k] = length;
  return l;
}

Layout Layout::transpose(int d1, int d2) const {
  if (d1 < 0 || d1 >= ndim || d2 < 0 || d2 >= ndim) {
    fail(ErrorKind::Index, "transpose({}, {}): dimensions out of range for a {}-d array", d1 + 1,
         d2 + 1, ndim);
  }
  Layout l = *this;
  std::swap(l.shape[static_cast<size_t>(d1)], l.shape[static_cast<size_t>(d2)]);
  std::swap(l.strides[static_cast<size_t>(d1)], l.strides[static_cast<size_t>(d2)]);
  return l;
}

Layout Layout::select(int64_t index) const {
  if (ndim == 0) fail(ErrorKind::Index, "cannot index a 0-d array; use :item()");
  if (index < 0 || index >= shape[0]) {
    fail(ErrorKind::Index, "index {} out of range for dimension 1 of size {}", index + 1, shape[0]);
  }
  Layout l;
  l.ndim = ndim - 1;
  l.offset = offset + index * strides[0];
  for (int i = 1; i < ndim; ++i) {
    l.shape[static_cast<size_t>(i - 1)] = shape[static_cast<size_t>(i)];
    l.strides[static_cast<size_t>(i - 1)] = strides[static_cast<size_t>(i)];
  }
  return l;
}

Layout Layout::reshaped(const Shape& s) const {
  Layout l = contiguous(s);
  l.offset = offset;
  return l;
}

Shape resolve_reshape(const Shape& requested, int64_t numel, const Shape& from) {
  Shape s = requested;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < s.ndim; ++i) {
    const int64_t d = s[i];
    if (d == -1) {
      if (infer >= 0) fail(ErrorKind::Value, "shape {} has more than one -1", requested.str());
      infer = i;
    } else if (d < 0) {
      fail(ErrorKind::Value, "size {} in shape {} is negative", d, requested.str());
    } else {
      if (d != 0 && known > (int64_t{1} << 62) / d) {
        fail(ErrorKind::Value, "shape {} overflows: more than 2^62 elements", requested.str());
      }
      known *= d;
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      fail(ErrorKind::Value, "cannot reshape {} ({} elements) to {}", from.str(), numel,
           requested.str());
    }
    s.dims[static_cast<size_t>(infer)] = numel / known;
  }
  if (checked_numel(s, 1) != numel) {
    fail(ErrorKind::Value, "cannot reshape {} ({} elements) to {}", from.str(), numel, s.str());
  }
  return s;
}

bool StridedView::is_contiguous() const {
  return row_major(ndim, shape, strides);
}

void coalesce(StridedView* views, int count) {
  const int ndim = views[0].ndim;
  int out = 0;
  for (int i = 0; i < ndim; ++i) {
    if (views[0].shape[i] == 1) continue;
    bool merge = out > 0;
    for (int v = 0; v < count && merge; ++v) {
      const StridedView& w = views[v];
      merge = w.strides[out - 1] == w.shape[i] * w.strides[i];
    }
    for (int v = 0; v < count; ++v) {
      StridedView& w = views[v];
      if (merge) {
        w.shape[out - 1] *= w.shape[i];
        w.strides[out - 1] = w.strides[i];
      } else {
        w.shape[out] = w.shape[i];
        w.strides[out] = w.strides[i];
      }
    }
    if (!merge) ++out;
  }
  for (int v = 0; v < count; ++v) {
    views[v].ndim = out;
  }
}

}  // namespace culua::detail
