// Pieces of the generated kernels' text that fuse/codegen.cpp assembles: the element types, and
// for a group that ends with a reduction its functor, the first kernel's loop along axes and the
// second kernel (fuse/codegen_reduce.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/backend/reduce_call.hpp"
#include "core/model/dtype.hpp"

namespace culua::detail::fuse {

// The C++ element type of a dtype in the prelude ("float", "complex64", ...).
const char* storage(DType t);

// The block's combination of each thread's `acc` (256 threads, a fixed tree: the same order every
// run), left in culua_sh[0].
inline constexpr const char* kBlockReduce =
    R"(  __shared__ alignas(16) unsigned char culua_raw[256 * sizeof(Acc)];
  Acc* const culua_sh = reinterpret_cast<Acc*>(culua_raw);
  culua_sh[threadIdx.x] = acc;
  __syncthreads();
  for (int half = 128; half > 0; half >>= 1) {
    if (threadIdx.x < half) culua_sh[threadIdx.x] = rop.combine(culua_sh[threadIdx.x], culua_sh[threadIdx.x + half]);
    __syncthreads();
  }
)";

// The reduction's functor (the built-in reductions' own, kernels/reduce_ops.cuh) over elements of
// `in`: culua_reduce_op(correction), the types CuluaReduce and Acc, and along axes the lanes'
// shuffle of an accumulator.
std::string reduce_functor_text(ReduceOp op, DType in, bool axis);

// The first kernel's body along axes (after its opening line): rows by blocks, `unroll` elements
// a thread an iteration. `elem`: one element i (index j along the row); `loads(u)` and `rest(u)`:
// the loads, then the operations and stores, of element u of an unrolled iteration.
std::string axis_kernel_body(int unroll, const std::string& elem,
                             const std::function<std::string(int)>& loads,
                             const std::function<std::string(int)>& rest);

// A 0-d view of the post-map: its dtype, whether it is read before written, whether written.
struct PostView {
  DType dtype;
  bool loaded, written;
};

// The post-map's function (the 0-d operations `post_ops` on the values of `post`) and the second
// kernel: the partial results combined in a fixed order, the result stored through the functor's
// finalize, then (a whole-array reduction) the post-map run once.
std::string final_kernel_text(const ReduceCall& r, bool axis, int out_dims,
                              const std::vector<PostView>& post, const std::string& post_ops);

}  // namespace culua::detail::fuse
