// A group of elementwise calls over one iteration space that may run tile by tile (cu.fuse,
// src/fuse/plan.hpp states when): every operation over tile 1, then every operation over tile 2,
// ... Each tile is a box of the iteration space (its trailing dimensions whole, a block of the
// dimension before them, one index of each dimension before that) of about `tile_elements`
// elements, after the dimensions contiguous in every view of every call are merged.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend/elementwise_call.hpp"

namespace culua::detail {

class GroupTiles {
 public:
  // The calls must share the output shape (their array operands have it, broadcast).
  GroupTiles(const ElementwiseCall* calls, size_t count, int64_t tile_elements);

  int64_t tiles() const { return tiles_; }
  // The calls restricted to tile `t` (0 <= t < tiles()), in order, into `out` (resized).
  void tile(int64_t t, std::vector<ElementwiseCall>& out) const;

 private:
  const ElementwiseCall* calls_;
  size_t count_;
  std::vector<StridedView> joint_;  // each call's output, then its array inputs, coalesced
  int nd_ = 0;
  int d_ = -1;  // the dimension tiled in blocks (-1: one tile, the calls as they are)
  int64_t block_ = 0, per_row_ = 1, tail_ = 1, tiles_ = 1;
};

// The number of inputs of a call (unary 1, binary 2, where 3).
int elementwise_inputs(const ElementwiseCall& c);

}  // namespace culua::detail
