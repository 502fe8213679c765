// Scans: cumulative sums and products along an axis (cu.cumulative_sum, cu.cumsum, cu.cumprod).
// Device arrays are scanned on a stream (CUB on the CUDA backend) and nothing synchronizes; host
// arrays on the calling thread once queued work touching them is done (the result is pageable).
#pragma once

#include <optional>

#include "core/backend/scan_call.hpp"
#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

struct ScanOptions {
  // The scanned axis (0-based); empty: the array flattened in row-major order (numpy's axis=None;
  // a 0-d array counts as one element).
  std::optional<int> axis;
  // The elements are converted to this dtype first and the result has it (integers wrap in it).
  std::optional<DType> dtype;
  bool include_initial = false;  // a leading identity element along the axis (length n + 1)
};

// Errors: Index for an axis out of range; Type for dtype bool; Value for an unsuitable `out`
// (shape, location, device); Released for freed arrays.
Array scan(Runtime& rt, ScanOp op, const Array& a, const ScanOptions& opt,
           const Array* out = nullptr, Stream* stream = nullptr);

}  // namespace culua::detail
