// The description of one gather, scatter or index check (core/ops/gather.hpp) that a backend runs.
#pragma once

#include <cstdint>

#include "core/model/layout.hpp"

namespace culua::detail {

// For each element of `other` (coordinates c): j = index[c], a Lua index along `axis` of `data`
// (1..n, or -n..-1 from the end), and the element of `data` at c with c[axis] replaced by j.
//  Gather:  other[c] = data[c with j]   (other is the output)
//  Scatter: data[c with j] = other[c]   (other holds the values; a repeated index keeps one of
//           its values, the last one on the host backend)
//  Check:   only the indices are checked.
// An index out of range is never used: `bad` (two int64 in the memory of the call, zero on
// entry) gets bad[0] = 1 and bad[1] = the index. data and other have one dtype and the same
// ndim, and equal dims except along axis; index is int64 with other's shape (stride 0 where it
// is broadcast).
struct GatherCall {
  enum class Mode : uint8_t { Gather, Scatter, Check };
  Mode mode = Mode::Gather;
  int axis = 0;
  StridedView data;
  StridedView other;
  StridedView index;
  int64_t* bad = nullptr;

  const char* name() const {
    return mode == Mode::Gather ? "gather" : mode == Mode::Scatter ? "scatter" : "index check";
  }
};

}  // namespace culua::detail
