// The text every generated fused kernel starts with (cmake/EmbedPrelude.cmake): std shims
// (src/fuse/nvrtc/), core/model/numeric.hpp, the dtype enum, core/backend/op_table.hpp,
// kernels/real_math.cuh, kernels/complex_math.cuh, kernels/elementwise_ops.cuh and
// kernels/reduce_ops.cuh, so that a fused kernel computes with the very functors the built-in
// kernels use, compiled by NVRTC without <cmath> or libcu++.
#pragma once

namespace culua::detail::fuse {

extern const char kFusePrelude[];
// The prelude's SHA-256 (hex): stands for it in the kernel cache's key (fuse/kernel_cache.cpp).
extern const char kFusePreludeHash[];

}  // namespace culua::detail::fuse
