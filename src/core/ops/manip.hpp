// Array manipulation, creation helpers and small linear algebra of the Array API standard:
// views where numpy returns views (permute_dims, flip, expand_dims, squeeze, broadcast_to, slices,
// matrix_transpose), copies otherwise. Axes are 0-based here; the bindings translate Lua's.
#pragma once

#include <optional>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// numpy broadcasting of a layout to `to` (stride 0 along new and stretched dimensions).
Layout broadcast_layout(const Layout& l, const Shape& to);
Array broadcast_to(const Array& a, const Shape& to);
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);

Array permute_dims(const Array& a, const std::vector<int>& axes);
Array moveaxis(const Array& a, const std::vector<int>& source, const std::vector<int>& dest);
Array expand_dims(const Array& a, int axis);  // axis in [0, ndim]
// Removes the given size-1 axes (all of them when `axes` is empty and `all`).
Array squeeze(const Array& a, const std::vector<int>& axes, bool all);
Array flip(const Array& a, const std::vector<int>& axes);  // empty: every axis
Array matrix_transpose(const Array& a);
// Elements start, start+step, ... (count of them) along `dim`; step may be negative.
Array slice(const Array& a, int dim, int64_t start, int64_t count, int64_t step);
std::vector<Array> unstack(const Array& a, int axis);

// Copies.
Array concat(Runtime& rt, const std::vector<Array>& arrays, std::optional<int> axis,
             Stream* stream = nullptr);
Array stack(Runtime& rt, const std::vector<Array>& arrays, int axis, Stream* stream = nullptr);
// Shifts along `axes` (the flattened array when empty; then one shift).
Array roll(Runtime& rt, const Array& a, const std::vector<int64_t>& shifts,
           const std::vector<int>& axes, Stream* stream = nullptr);
// repeats: one count for every element, or one per element along `axis` (the flattened array
// without an axis).
Array repeat(Runtime& rt, const Array& a, const std::vector<int64_t>& repeats,
             std::optional<int> axis, Stream* stream = nullptr);
Array tile(Runtime& rt, const Array& a, const std::vector<int64_t>& reps, Stream* stream = nullptr);

// Creation.
Array eye(Runtime& rt, int64_t n, int64_t m, int64_t k, DType dtype, Location loc,
          Stream* stream = nullptr);
// The lower (elements on and below diagonal k) or upper triangle of the last two dimensions.
Array triangle(Runtime& rt, const Array& a, int64_t k, bool lower, Stream* stream = nullptr);
std::vector<Array> meshgrid(Runtime& rt, const std::vector<Array>& arrays, bool ij,
                            Stream* stream = nullptr);

// Linear algebra. vecdot: sum of conj(a) * b along `axis` of the broadcast shape.
Array vecdot(Runtime& rt, const Array& a, const Array& b, int axis, Stream* stream = nullptr);
Array outer(Runtime& rt, const Array& a, const Array& b, Stream* stream = nullptr);
Array tensordot(Runtime& rt, const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b, Stream* stream = nullptr);

}  // namespace culua::detail
