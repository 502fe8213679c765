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

#include "core/backend/elementwise_call.hpp"
#include "core/backend/reduce_call.hpp"
#include "fuse/plan.hpp"

namespace culua::detail::fuse {

// The largest parameter block a fused kernel takes (the classic launch limit of 4 KiB).
inline constexpr size_t kMaxParamBytes = 4000;

// A group as a generated kernel sees it: the calls computed per element (a prologue's with views
// broadcast to the body's shape, fuse::element_calls), and optionally the epilogue: a reduction of
// a view of the body's shape and 0-d calls on its result (run by a second, one-block kernel).
struct GroupCalls {
  const ElementwiseCall* calls = nullptr;
  size_t count = 0;
  const ReduceCall* reduce = nullptr;
  // An axis reduction's input as a view of the calls' shape (their dimensions in the order of
  // Group::order): element row * R + j of it is element (row, j) of reduce->in. Null for a full
  // reduction (reduce->in is then of the calls' shape).
  const StridedView* reduce_in = nullptr;
  const ElementwiseCall* post = nullptr;
  size_t post_count = 0;
  // Memory whose values after the group are not needed (scratch arrays nothing reads later): a
  // view written in the group that lies inside one of these is computed but not stored.
  const Span* dead = nullptr;
  size_t dead_count = 0;
};

struct FusedKernel {
  bool ok = false;
  std::string why;                    // when !ok: why the group is not generated (it runs op by op)
  std::string key;                    // the canonical form (bytes): equal keys, equal sources
  std::string kernel;                 // the generated kernel (without the prelude), when asked for
  std::vector<unsigned char> params;  // the parameter block of this call (16-byte aligned size)
  int64_t elements = 0;
  int vector = 1;  // elements a thread does with vector loads and stores (1: one at a time)
  // With a reduction: the parameter block's offset of the partial results' pointer (then the
  // result's pointer and the number of blocks, 8 bytes each), the size of one partial result.
  bool reduces = false;
  size_t reduce_at = 0;
  size_t acc_bytes = 0;
  // The grid of the first kernel (blocks of kFusedThreads; with an axis reduction, blocks along
  // each row of the reduced elements by blocks of rows), the second kernel's blocks, and the
  // number of partial results.
  int64_t grid_x = 1, grid_y = 1, final_blocks = 1, partials = 0;
  int elided = 0;        // values written in the group and not stored (GroupCalls::dead)
  size_t scalar_at = 0;  // the parameter block's offset of the scalars (16 bytes each)
};

// The blocks (of kFusedThreads threads) and the most blocks of a kernel with a reduction (its
// partial results are combined by one block of the second kernel).
inline constexpr int kFusedThreads = 256;
inline constexpr int64_t kMaxReduceBlocks = 1024;

// The kernel's name in every generated source.
inline constexpr const char* kFusedKernelName = "culua_fused";
// The second kernel of a group with a reduction: combines the partial results, stores the result
// and runs the post-map (a full reduction: one block; along axes: a thread per result).
inline constexpr const char* kFusedFinalName = "culua_fused_final";

// The kernel of the calls (one group: one output shape): its key and this call's parameters, and
// with `source` its text (a repeated group needs only the key and the parameters).
FusedKernel generate(const GroupCalls& g, bool source = true);
inline FusedKernel generate(const ElementwiseCall* calls, size_t count, bool source = true) {
  return generate(GroupCalls{calls, count}, source);
}

// The whole source NVRTC compiles: the prelude and the kernel.
std::string full_source(const FusedKernel& k);

}  // namespace culua::detail::fuse
