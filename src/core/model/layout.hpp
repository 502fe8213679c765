// Shapes, strided layouts over a buffer, and the plain strided views that kernels receive.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/model/dtype.hpp"

namespace culua::detail {

inline constexpr int kMaxDims = 8;

struct Shape {
  int ndim = 0;
  std::array<int64_t, kMaxDims> dims{};

  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  int64_t operator[](int i) const { return dims[static_cast<size_t>(i)]; }
  void push(int64_t d);  // throws past kMaxDims
  int64_t numel() const;
  bool operator==(const Shape& o) const;
  std::string str() const;  // "{2,3}"; "{}" for 0-d
};

// Checks every dimension and the byte size before anything is allocated; returns the element count.
int64_t checked_numel(const Shape& s, size_t itemsize);

// Strides and offset are in elements, not bytes.
struct Layout {
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape{};
  std::array<int64_t, kMaxDims> strides{};
  int64_t offset = 0;

  static Layout contiguous(const Shape& s);
  Shape dims() const;
  int64_t size() const;
  bool is_contiguous() const;
  // Smallest and one-past-largest element offsets touched (for bounds checks of views).
  int64_t extent_begin() const;
  int64_t extent_end() const;

  // Views; dims and starts are 0-based here, the bindings translate from Lua's 1-based ones.
  Layout narrow(int dim, int64_t start, int64_t length) const;
  Layout transpose(int d1, int d2) const;
  Layout select(int64_t index) const;     // row `index` of the first dimension
  Layout reshaped(const Shape& s) const;  // requires is_contiguous()
};

// Resolves one -1 in a requested shape against an element count and checks the count matches.
Shape resolve_reshape(const Shape& requested, int64_t numel, const Shape& from);

// What a kernel sees: a typed base pointer at the view's first element and its strides.
struct StridedView {
  void* data = nullptr;
  DType dtype = DType::F32;
  int ndim = 0;
  int64_t size = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  bool is_contiguous() const;
};

// Merges dimensions that are contiguous in every view and drops size-1 dimensions, so that most
// copies become one-dimensional. All views must have the same shape.
void coalesce(StridedView* views, int count);

}  // namespace culua::detail
