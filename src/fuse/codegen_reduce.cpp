// The text of a fused group's reduction (fuse/codegen_text.hpp): the built-in functor, the first
// kernel's loop along axes, the second kernel.
#include <fmt/format.h>

#include "core/backend/op_table.hpp"
#include "fuse/codegen.hpp"
#include "fuse/codegen_text.hpp"

namespace culua::detail::fuse {

namespace {

#define CULUA_REDUCE_ENUMERATOR(e, ...) #e,
constexpr const char* kReduceEnumerators[] = {CULUA_REDUCE_OPS(CULUA_REDUCE_ENUMERATOR)};
#undef CULUA_REDUCE_ENUMERATOR

}  // namespace

std::string reduce_functor_text(ReduceOp op, DType in, bool axis) {
  std::string s = fmt::format(
      "__device__ __forceinline__ auto culua_reduce_op(double correction) {{\n"
      "  return reduce::reduce_functor<ReduceOp::{}, {}>(correction);\n}}\n"
      "using CuluaReduce = decltype(culua_reduce_op(0.0));\n"
      "using Acc = CuluaReduce::Acc;\n\n",
      kReduceEnumerators[static_cast<int>(op)], storage(in));
  if (axis) {
    // An accumulator moves between lanes as 32-bit words (their sizes are multiples of 4).
    s += R"(__device__ __forceinline__ Acc culua_shfl_down(Acc a, int d) {
  union Words {
    Acc acc;
    unsigned w[sizeof(Acc) / 4];
    __device__ Words() {}
  } u;
  u.acc = a;
#pragma unroll
  for (int k = 0; k < static_cast<int>(sizeof(Acc) / 4); ++k) u.w[k] = __shfl_down_sync(0xffffffffu, u.w[k], d);
  return u.acc;
}

)";
  }
  return s;
}

std::string axis_kernel_body(int unroll, const std::string& elem,
                             const std::function<std::string(int)>& loads,
                             const std::function<std::string(int)>& rest) {
  std::string s;
  // Rows of the reduction by blocks of 256 / tpr rows, tpr threads a row (with gridDim.x > 1,
  // a long row across blocks too); each row's threads combine their values in a fixed tree
  // (shuffles within a warp, else shared memory), the same order every run.
  s += R"(  __shared__ alignas(16) unsigned char culua_raw[256 * sizeof(Acc)];
  Acc* const culua_sh = reinterpret_cast<Acc*>(culua_raw);
  const CuluaReduce rop = culua_reduce_op(p.correction);
  const int tpr = static_cast<int>(p.tpr);
  const int lane = threadIdx.x & (tpr - 1);
  const int sub = threadIdx.x / tpr;
  const int per = blockDim.x / tpr;
  const long long step = (long long)gridDim.x * tpr;
  for (long long rb = blockIdx.y; rb * per < p.rows; rb += gridDim.y) {
    const long long row = rb * per + sub;
    Acc acc = rop.identity();
    if (row < p.rows) {
      for (long long j = (long long)blockIdx.x * tpr + lane; j < p.run; j += )";
  s += fmt::format("{} * step) {{\n", unroll);
  if (unroll == 1) {
    s += "        const long long i = row * p.run + j;\n";
    s += elem;
  } else {
    // All loads first (an element past the row loads element j again and is dropped): the
    // stores between them would keep the compiler from issuing them together.
    for (int u = 0; u < unroll; ++u) {
      s += fmt::format(
          "    const bool in_{0} = j + {0} * step < p.run;\n"
          "    const long long i_{0} = row * p.run + (in_{0} ? j + {0} * step : j);\n",
          u);
      s += loads(u);
    }
    for (int u = 0; u < unroll; ++u) {
      s += fmt::format("    if (in_{}) {{\n", u);
      s += rest(u);
      s += "    }\n";
    }
  }
  s += R"(      }
    }
    if (tpr <= 32) {  // a row's threads in one warp: a tree of shuffles
      for (int half = tpr / 2; half > 0; half >>= 1)
        acc = rop.combine(acc, culua_shfl_down(acc, half));
      if (lane == 0 && row < p.rows) static_cast<Acc*>(p.partials)[row * gridDim.x + blockIdx.x] = acc;
      continue;
    }
    culua_sh[threadIdx.x] = acc;
    __syncthreads();
    for (int half = tpr / 2; half > 0; half >>= 1) {
      if (lane < half) culua_sh[threadIdx.x] = rop.combine(culua_sh[threadIdx.x], culua_sh[threadIdx.x + half]);
      __syncthreads();
    }
    if (lane == 0 && row < p.rows) static_cast<Acc*>(p.partials)[row * gridDim.x + blockIdx.x] = culua_sh[threadIdx.x];
    __syncthreads();
  }
}
)";
  return s;
}

std::string final_kernel_text(const ReduceCall& r, bool axis, int out_dims,
                              const std::vector<PostView>& post, const std::string& post_ops) {
  std::string s;
  // The second kernel: one block combines the partial results in a fixed order, stores the
  // result (as kernels/reduce.cuh SumOp::finalize), then runs the post-map once.
  const DType out_dtype = r.out.dtype;
  const char* out_type = storage(out_dtype);
  s += "\n__device__ __forceinline__ void culua_post(const Params& p";
  for (size_t v = 0; v < post.size(); ++v) s += fmt::format(", {}& v{}", storage(post[v].dtype), v);
  s += ") {\n" + post_ops + "}\n\n";
  s += fmt::format("extern \"C\" __global__ void {}(const Params p) {{\n", kFusedFinalName);
  // The result r stored at `target` (as kernels/reduce.cuh SumOp::finalize: a mean divides by
  // `divisor`).
  const auto store = [&](const std::string& target, const char* elements) {
    s += fmt::format("  {1} = convert<{0}>(rop.finalize(r, {2}));\n", out_type, target, elements);
  };
  s += "  const CuluaReduce rop = culua_reduce_op(p.correction);\n";
  if (axis) {
    // A thread a row: its partial results combined in order, stored at the row's offset.
    s += "  for (long long row = blockIdx.x * (long long)blockDim.x + threadIdx.x; row < p.rows;\n"
         "       row += (long long)gridDim.x * blockDim.x) {\n"
         "  Acc r = rop.identity();\n"
         "  for (long long b = 0; b < p.blocks; ++b)\n"
         "    r = rop.combine(r, static_cast<const Acc*>(p.partials)[row * p.blocks + b]);\n"
         "  long long o = 0, rest = row;\n";
    s += fmt::format(
        "  for (int d = {}; d >= 0; --d) {{\n"
        "    o += (rest % p.oshape[d]) * p.ostride[d];\n    rest /= p.oshape[d];\n  }}\n",
        out_dims - 1);
    store(fmt::format("static_cast<{}*>(p.result)[o]", out_type), "p.run");
    s += "  }\n}\n";
    return s;
  }
  s += "  Acc acc = rop.identity();\n"
       "  for (long long b = threadIdx.x; b < p.blocks; b += blockDim.x)\n"
       "    acc = rop.combine(acc, static_cast<const Acc*>(p.partials)[b]);\n";
  s += kBlockReduce;
  s += "  if (threadIdx.x != 0) return;\n  const Acc r = culua_sh[0];\n";
  store(fmt::format("*static_cast<{}*>(p.result)", out_type), "p.n");
  if (!post.empty()) {
    for (size_t v = 0; v < post.size(); ++v) {
      const char* t = storage(post[v].dtype);
      if (!post[v].loaded) {
        s += fmt::format("  {} v{};\n", t, v);
      } else if (post[v].dtype == DType::Bool) {
        s +=
            fmt::format("  bool v{0} = *static_cast<const unsigned char*>(p.post[{0}]) != 0;\n", v);
      } else {
        s += fmt::format("  {0} v{1} = *static_cast<const {0}*>(p.post[{1}]);\n", t, v);
      }
    }
    s += "  culua_post(p";
    for (size_t v = 0; v < post.size(); ++v) s += fmt::format(", v{}", v);
    s += ");\n";
    for (size_t v = 0; v < post.size(); ++v) {
      if (post[v].written)
        s += fmt::format("  *static_cast<{0}*>(p.post[{1}]) = v{1};\n", storage(post[v].dtype), v);
    }
  }
  s += "}\n";
  return s;
}

}  // namespace culua::detail::fuse
