#include "core/backend/elementwise_group.hpp"

#include <algorithm>

#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

int elementwise_inputs(const ElementwiseCall& c) {
  switch (c.kind) {
    case ElementwiseCall::Kind::Unary:
      return 1;
    case ElementwiseCall::Kind::Binary:
      return 2;
    case ElementwiseCall::Kind::Where:
      return 3;
  }
  return 0;
}

GroupTiles::GroupTiles(const ElementwiseCall* calls, size_t count, int64_t tile_elements)
    : calls_(calls), count_(count) {
  for (size_t k = 0; k < count; ++k) {
    const ElementwiseCall& c = calls[k];
    joint_.push_back(c.out);
    for (int i = 0; i < elementwise_inputs(c); ++i) {
      if (!c.in[i].is_scalar()) joint_.push_back(c.in[i].view);
    }
  }
  if (joint_.empty()) return;
  coalesce(joint_.data(), static_cast<int>(joint_.size()));
  const StridedView& space = joint_[0];
  nd_ = space.ndim;
  for (int j = 0; j < nd_; ++j) {
    if (space.shape[j] == 0) return;  // no elements: the calls as they are
  }
  int k = nd_;
  while (k > 0 && tail_ * space.shape[k - 1] <= tile_elements) tail_ *= space.shape[--k];
  if (k == 0) return;
  d_ = k - 1;
  block_ = std::max<int64_t>(1, tile_elements / tail_);
  per_row_ = (space.shape[d_] + block_ - 1) / block_;
  tiles_ = per_row_;
  for (int j = 0; j < d_; ++j) tiles_ *= space.shape[j];
}

void GroupTiles::tile(int64_t t, std::vector<ElementwiseCall>& out) const {
  out.assign(calls_, calls_ + count_);
  if (d_ < 0) return;
  const StridedView& space = joint_[0];
  const int64_t start = (t % per_row_) * block_;
  const int64_t len = std::min(block_, space.shape[d_] - start);
  int64_t index[kMaxDims] = {};
  int64_t rest = t / per_row_;
  for (int j = d_ - 1; j >= 0; --j) {
    index[j] = rest % space.shape[j];
    rest /= space.shape[j];
  }
  size_t v = 0;
  for (ElementwiseCall& c : out) {
    StridedView* views[4] = {&c.out, nullptr, nullptr, nullptr};
    int n = 1;
    for (int i = 0; i < elementwise_inputs(c); ++i) {
      if (!c.in[i].is_scalar()) views[n++] = &c.in[i].view;
    }
    for (int m = 0; m < n; ++m, ++v) {
      const StridedView& j = joint_[v];
      StridedView& w = *views[m];
      int64_t offset = start * j.strides[d_];
      for (int q = 0; q < d_; ++q) offset += index[q] * j.strides[q];
      w.data = static_cast<char*>(w.data) + offset * static_cast<int64_t>(itemsize(w.dtype));
      w.ndim = nd_ - d_;
      w.shape[0] = len;
      w.strides[0] = j.strides[d_];
      for (int q = d_ + 1; q < nd_; ++q) {
        w.shape[q - d_] = j.shape[q];
        w.strides[q - d_] = j.strides[q];
      }
      w.size = len * tail_;
    }
  }
}

}  // namespace culua::detail
