// Sorting, searching and sets (the Array API standard's sort, argsort, nonzero, count_nonzero,
// searchsorted, unique_*), numpy's order (core/backend/sort_call.hpp): stable, NaN last, -0.0 ==
// 0.0, complex numbers lexicographically. Indices are 1-based int64 like every culua index. Device
// arrays are processed on a stream; sort, argsort and searchsorted do not synchronize, while
// nonzero and unique_* do (the size of their result depends on the data). Host arrays (pinned or
// pageable) are processed on the calling thread; results are pageable host arrays.
#pragma once

#include <optional>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// The sorted copy of `a` along `axis` (0-based), or the 1-based positions that sort it (argsort:
// int64, the shape of `a`). Errors: Index for an axis out of range (a 0-d array has none).
Array sort(Runtime& rt, const Array& a, int axis, bool descending, Stream* stream = nullptr);
Array argsort(Runtime& rt, const Array& a, int axis, bool descending, Stream* stream = nullptr);

// One int64 array per dimension of `a` with the 1-based coordinates of its nonzero elements
// (NaN counts as nonzero), in row-major order. Errors: Value for a 0-d array.
std::vector<Array> nonzero(Runtime& rt, const Array& a, Stream* stream = nullptr);

// The number of nonzero elements over `axes` (0-based, distinct; none: all), int64.
Array count_nonzero(Runtime& rt, const Array& a, const std::vector<int>& axes, bool all,
                    bool keepdims, Stream* stream = nullptr);

// The distinct elements of `a` (flattened), sorted; NaNs are distinct from one another, -0.0 and
// 0.0 are one value (the first occurrence's). Which of the other results to compute: `counts`
// (int64 occurrences), `indices` (the 1-based flat position of each first occurrence), `inverse`
// (for each element of `a`, the 1-based position of its value in `values`; the shape of `a`).
struct UniqueResult {
  Array values;
  std::optional<Array> counts;
  std::optional<Array> indices;
  std::optional<Array> inverse;
};
UniqueResult unique(Runtime& rt, const Array& a, bool counts, bool indices, bool inverse,
                    Stream* stream = nullptr);

// For each element v of `x2`, the 1-based position p where v would be inserted into the sorted 1-D
// `x1` (in order after `sorter`, 1-based positions, when given) to keep it sorted: x1[p-1] < v <=
// x1[p] (side left), x1[p-1] <= v < x1[p] (right). Both are compared in their common dtype.
// Errors: Value for an x1 that is not 1-D, a sorter of the wrong length or with positions out of
// range; Type for a sorter that is not an integer array.
Array searchsorted(Runtime& rt, const Array& x1, const Array& x2, bool right, const Array* sorter,
                   Stream* stream = nullptr);

}  // namespace culua::detail
