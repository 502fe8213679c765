#include "core/model/array.hpp"

#include "core/base/error.hpp"

namespace culua::detail {

Array::Array(std::shared_ptr<Buffer> buffer, DType dtype, const Layout& layout)
    : buffer_(std::move(buffer)), dtype_(dtype), layout_(layout) {}

Array Array::wrap(std::shared_ptr<Backend> backend, void* data, const Shape& shape, DType dtype,
                  Location loc, int device) {
  const int64_t n = checked_numel(shape, itemsize(dtype));
  if (!data && n > 0) fail(ErrorKind::Value, "cannot wrap a null pointer");
  auto buf =
      std::make_shared<Buffer>(std::move(backend), data, static_cast<size_t>(n) * itemsize(dtype),
                               loc, device, nullptr, false);
  return Array(std::move(buf), dtype, Layout::contiguous(shape));
}

void Array::check_alive(std::string_view role) const {
  if (alive()) return;
  // Both come from free(): on this handle (which empties it) or on a view of the same buffer.
  constexpr std::string_view kHint = "free() was called on it or on a view of its memory";
  if (role.empty()) fail_released(fmt::format("array ({})", kHint));
  fail_released(fmt::format("array ({}; {})", role, kHint));
}

void* Array::data() const {
  if (layout_.offset == 0) return buffer_->data();  // most arrays: no itemsize lookup
  return static_cast<char*>(buffer_->data()) +
         layout_.offset * static_cast<int64_t>(itemsize(dtype_));
}

StridedView Array::view() const {
  StridedView v;
  v.data = data();
  v.dtype = dtype_;
  v.ndim = layout_.ndim;
  v.size = layout_.size();
  for (int i = 0; i < layout_.ndim; ++i) {
    v.shape[i] = layout_.shape[static_cast<size_t>(i)];
    v.strides[i] = layout_.strides[static_cast<size_t>(i)];
  }
  return v;
}

}  // namespace culua::detail
