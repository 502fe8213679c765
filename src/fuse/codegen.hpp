// Generated kernels for fused groups (docs/fusion.md): one CUDA kernel per group that loads each
// array once, computes every operation of the group with the built-in kernels' own functors
// (kernels/elementwise_ops.cuh, through fuse/prelude.hpp) and stores every output, element by
// element. The source depends only on the group's canonical form (operations, compute dtypes,
// operand dtypes, which operands are the same view, the number of dimensions): pointers, strides,
// sizes and scalar values are the kernel's parameter, so a new shape or a new scalar never
// compiles again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/elementwise_call.hpp"

namespace culua::detail::fuse {

// The largest parameter block a fused kernel takes (the classic launch limit of 4 KiB).
inline constexpr size_t kMaxParamBytes = 4000;

struct FusedKernel {
  bool ok = false;
  std::string why;                    // when !ok: why the group is not generated (it runs op by op)
  std::string key;                    // the canonical form (bytes): equal keys, equal sources
  std::string kernel;                 // the generated kernel (without the prelude), when asked for
  std::vector<unsigned char> params;  // the parameter block of this call (16-byte aligned size)
  int64_t elements = 0;
  int vector = 1;  // elements a thread does with vector loads and stores (1: one at a time)
};

// The kernel's name in every generated source.
inline constexpr const char* kFusedKernelName = "culua_fused";

// The kernel of the calls (one group: one output shape): its key and this call's parameters, and
// with `source` its text (a repeated group needs only the key and the parameters).
FusedKernel generate(const ElementwiseCall* calls, size_t count, bool source = true);

// The whole source NVRTC compiles: the prelude and the kernel.
std::string full_source(const FusedKernel& k);

}  // namespace culua::detail::fuse
