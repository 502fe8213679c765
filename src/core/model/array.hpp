// An n-dimensional strided view over a shared Buffer. Copying an Array makes another view of the
// same memory; the memory lives while any view (or queued work) uses it.
#pragma once

#include <memory>
#include <string_view>

#include "core/model/buffer.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

class Array {
 public:
  Array() = default;
  Array(std::shared_ptr<Buffer> buffer, DType dtype, const Layout& layout);

  // Shares memory the caller owns (no copy, never freed by culua).
  static Array wrap(std::shared_ptr<Backend> backend, void* data, const Shape& shape, DType dtype,
                    Location loc, int device);

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  DType dtype() const { return dtype_; }
  const Layout& layout() const { return layout_; }
  Shape shape() const { return layout_.dims(); }
  int ndim() const { return layout_.ndim; }
  int64_t size() const { return layout_.size(); }
  size_t nbytes() const { return static_cast<size_t>(size()) * itemsize(dtype_); }
  Location location() const { return buffer_->location(); }
  int device() const { return buffer_->device(); }
  bool is_contiguous() const { return layout_.is_contiguous(); }

  // False for an empty handle and for views of freed memory.
  bool alive() const { return buffer_ && !buffer_->freed(); }
  // Throws Error(Released) when !alive(): "attempt to use a released array (<role>; free() was
  // called on it or on a view of its memory)". `role` names the array's place ("the out array",
  // "input 'x'"); without one the parentheses hold only the hint.
  void check_alive(std::string_view role = {}) const;

  // Pointer to the view's first element.
  void* data() const;
  StridedView view() const;

  // Views sharing the buffer (0-based dims and starts).
  Array with_layout(const Layout& l) const { return Array(buffer_, dtype_, l); }

  // Drops this handle's reference (the memory lives on while other views or queued work use it).
  void reset() { buffer_.reset(); }

 private:
  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::F32;
  Layout layout_;
};

}  // namespace culua::detail
