// Gathers and scatters along an axis: take, take_along_axis, integer-array and boolean-mask
// indexing. Axes are 0-based here; index values are Lua's (1..n, or -n..-1 from the end). An
// index out of range raises Error(Index) naming it, and nothing is read or written through it:
// the kernels check every index on the device, and the core reads back one flag per call (a
// synchronization with the call's stream).
#pragma once

#include <optional>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// numpy's take with a 1-based index array of any integer dtype and shape: the result has a's
// shape with dimension `axis` replaced by the index's shape. Without an axis, a must be 1-D.
Array take(Runtime& rt, const Array& a, const Array& index, std::optional<int> axis,
           Stream* stream = nullptr);
// numpy's take_along_axis: index has a's ndim; other dimensions broadcast.
Array take_along_axis(Runtime& rt, const Array& a, const Array& index, int axis,
                      Stream* stream = nullptr);
// a[index] = values along `axis` (values broadcast to the indexed part, converted to a's dtype).
// Every index is checked before anything is written.
void put(Runtime& rt, const Array& a, const Array& index, const Array& values, int axis,
         Stream* stream = nullptr);

// Boolean masks: mask's shape must be the leading dimensions of a's. mask_read gives the selected
// elements (or rows) as a new array of shape {count, rest of a's dims}; mask_write sets them to
// values (broadcast to that shape). The mask is read on the host (one copy of its bytes: the
// number of true elements decides the result's shape).
Array mask_read(Runtime& rt, const Array& a, const Array& mask, Stream* stream = nullptr);
void mask_write(Runtime& rt, const Array& a, const Array& mask, const Array& values,
                Stream* stream = nullptr);

// 1-based positions of a vector's values as an int64 array in `like`'s location and device.
Array index_array(Runtime& rt, const std::vector<int64_t>& positions, const Array& like,
                  Stream* stream = nullptr);

}  // namespace culua::detail
