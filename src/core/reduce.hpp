// Reductions of arrays: sum, mean, max, min, prod, norm, argmax and argmin over all elements or
// along one axis. Result dtypes follow numpy (see reduce_result_dtype in core/reduce_call.hpp).
// Device arrays are reduced on a stream and nothing synchronizes: the result is a device array
// (0-d for full reductions) that later work on the stream sees. Host arrays (pinned or pageable)
// are reduced on the calling thread once queued work touching them is done; the result is a
// pageable host array.
#pragma once

#include <optional>

#include "core/array.hpp"
#include "core/reduce_call.hpp"
#include "core/runtime.hpp"

namespace culua::detail {

// The shape of the result: without the reduced axis (all axes when `axis` is empty), or with it
// kept as size 1 when `keepdims`.
Shape reduce_shape(const Shape& in, std::optional<int> axis, bool keepdims);

// Reduces `a` along `axis` (0-based; empty: all elements). `out`, when given, receives the result
// and is returned: an array of exactly the result's shape, of any dtype (converted as astype
// does), in the same kind of location as `a` (device or host) and on the same device. `stream`:
// an explicit stream for device arrays, else the current stream of the array's device.
// Errors: Type for complex inputs of max/min/argmax/argmin; Index for an axis out of range; Value
// for max/min/argmax/argmin over an empty axis and for an unsuitable `out`; Released for freed
// arrays.
Array reduce(Runtime& rt, ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims,
             const Array* out = nullptr, Stream* stream = nullptr);

}  // namespace culua::detail
