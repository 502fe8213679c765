// Reductions of arrays: sum, mean, max, min, prod, norm, argmax and argmin over all elements or
// along one axis. Result dtypes follow numpy (see reduce_result_dtype in
// core/backend/reduce_call.hpp). Device arrays are reduced on a stream and nothing synchronizes:
// the result is a device array (0-d for full reductions) that later work on the stream sees. Host
// arrays (pinned or pageable) are reduced on the calling thread once queued work touching them is
// done; the result is a pageable host array.
#pragma once

#include <optional>
#include <vector>

#include "core/backend/reduce_call.hpp"
#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

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

// The options of the statistical functions (var, std, the nan* forms, sums with dtype=).
struct ReduceOptions {
  // The reduced axes (0-based, any order, each once); empty optional: all of them. An empty list
  // reduces nothing (each element is its own reduction, as numpy's axis=()).
  std::optional<std::vector<int>> axes;
  bool keepdims = false;
  double correction = 0;  // var, std (numpy's ddof)
  // sum, prod, nansum, nanprod: the elements are converted to this dtype first and the result has
  // it (numpy's dtype=: integers wrap in it).
  std::optional<DType> dtype;
};

// The result's shape for several axes (sorted, 0-based).
Shape reduce_shape(const Shape& in, const std::optional<std::vector<int>>& axes, bool keepdims);

// Reduces `a` over several axes at once. Reduced axes whose elements do not form one strided run
// (axes 1 and 3 of a contiguous array, say) are gathered into a contiguous temporary first.
// argmax/argmin take one axis. Errors as above, plus Value for a repeated axis and for `dtype`
// with ops other than sum/prod/nansum/nanprod.
Array reduce(Runtime& rt, ReduceOp op, const Array& a, const ReduceOptions& opt,
             const Array* out = nullptr, Stream* stream = nullptr);

}  // namespace culua::detail
