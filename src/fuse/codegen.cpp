#include "fuse/codegen.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/backend/cuda_text.hpp"
#include "core/backend/elementwise_group.hpp"
#include "core/backend/op_table.hpp"
#include "core/backend/reduce_acc.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"
#include "fuse/codegen_text.hpp"
#include "fuse/plan.hpp"
#include "fuse/prelude.hpp"

namespace culua::detail::fuse {

namespace {

#define CULUA_FUNCTOR_NAME(e, name, functor, ...) #functor,
constexpr const char* kBinaryFunctors[] = {CULUA_BINARY_OPS(CULUA_FUNCTOR_NAME)};
constexpr const char* kUnaryFunctors[] = {CULUA_UNARY_OPS(CULUA_FUNCTOR_NAME)};
#undef CULUA_FUNCTOR_NAME

struct View {
  const StridedView* first;  // the coalesced view
  bool written = false;
  bool loaded = false;
};

bool same_view(const StridedView& a, const StridedView& b, int nd) {
  if (a.data != b.data || a.dtype != b.dtype) return false;
  for (int d = 0; d < nd; ++d) {
    if (a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

void put(std::vector<unsigned char>& block, size_t offset, const void* value, size_t bytes) {
  if (block.size() < offset + bytes) block.resize(offset + bytes);
  std::memcpy(block.data() + offset, value, bytes);
}

}  // namespace

const char* storage(DType t) {
  return cuda_type_name(t, TypeSpelling::Culua);
}

namespace {

bool all_broadcast(const StridedView& v, int nd) {
  for (int d = 0; d < nd; ++d) {
    if (v.strides[d] != 0) return false;
  }
  return true;
}

// The operations of one element of `calls`, on the values v0, v1, ... of `views` (slot_view: the
// view of each operand slot, in order: out, then each array input). Marks views loaded (read
// before written) and written. Scalars are p.scalar[scalar], counted on.
std::string element_ops(const ElementwiseCall* calls, size_t count,
                        const std::vector<int>& slot_view, std::vector<View>& views, int& scalar) {
  std::string ops;
  size_t slot = 0;
  for (size_t c = 0; c < count; ++c) {
    const ElementwiseCall& call = calls[c];
    const int out_view = slot_view[slot++];
    const char* S = storage(call.compute);
    ops += fmt::format("  {{  // {}\n    using S = {};\n    using C = compute_t<S>;\n", call.name(),
                       S);
    for (int i = 0; i < elementwise_inputs(call); ++i) {
      const bool cond = call.kind == ElementwiseCall::Kind::Where && i == 0;
      const char* type = cond ? "bool" : "C";
      if (call.in[i].is_scalar()) {
        ops += fmt::format(
            "    const C a{} = to_compute(*reinterpret_cast<const S*>(p.scalar[{}]));\n", i,
            scalar);
        ++scalar;
      } else {
        const int v = slot_view[slot++];
        View& view = views[static_cast<size_t>(v)];
        if (!view.written) view.loaded = true;
        ops += fmt::format("    const {} a{} = convert<{}>(v{});\n", type, i, type, v);
      }
    }
    const std::string out_type = storage(views[static_cast<size_t>(out_view)].first->dtype);
    switch (call.kind) {
      case ElementwiseCall::Kind::Where:
        // As the built-in kernel: the chosen compute value converted to the output's type.
        ops += fmt::format("    v{} = convert<{}>(a0 ? a1 : a2);\n", out_view, out_type);
        break;
      case ElementwiseCall::Kind::Binary:
      case ElementwiseCall::Kind::Unary: {
        const bool binary = call.kind == ElementwiseCall::Kind::Binary;
        const OpRule& r =
            binary ? rule(static_cast<BinaryOp>(call.op)) : rule(static_cast<UnaryOp>(call.op));
        const char* functor = binary ? kBinaryFunctors[call.op] : kUnaryFunctors[call.op];
        // As the built-in kernel: the result as a compute value, then as the result's own type
        // (bool, the real type, or the storage type: f16 results round once), then converted to
        // the output's dtype.
        const char* result = storage(result_dtype(r, call.compute));
        ops += fmt::format("    const C x = convert<C>({}::apply({}));\n", functor,
                           binary ? "a0, a1" : "a0");
        ops += fmt::format("    v{} = convert<{}>(convert<{}>(x));\n", out_view, out_type, result);
        break;
      }
    }
    views[static_cast<size_t>(out_view)].written = true;
    ops += "  }\n";
  }
  return ops;
}

}  // namespace

FusedKernel generate(const GroupCalls& g, bool source) {
  FusedKernel k;
  const ElementwiseCall* calls = g.calls;
  const size_t count = g.count;
  // Every array operand of every call, coalesced together (all have the output's shape), then the
  // reduction's input.
  std::vector<StridedView> joint;
  for (size_t c = 0; c < count; ++c) {
    joint.push_back(calls[c].out);
    for (int i = 0; i < elementwise_inputs(calls[c]); ++i) {
      if (!calls[c].in[i].is_scalar()) joint.push_back(calls[c].in[i].view);
    }
  }
  const bool axis = g.reduce && !g.reduce->full;
  if (g.reduce) joint.push_back(axis && g.reduce_in ? *g.reduce_in : g.reduce->in);
  if (axis && !g.reduce_in) {
    k.why = "an axis reduction without its view of the group's shape";
    return k;
  }
  coalesce(joint.data(), static_cast<int>(joint.size()));
  int nd = joint[0].ndim;
  int64_t shape[kMaxDims] = {};
  for (int d = 0; d < nd; ++d) shape[d] = joint[0].shape[d];
  if (nd == 0) {  // one element
    nd = 1;
    shape[0] = 1;
    for (StridedView& v : joint) v.strides[0] = 0;
  }
  k.elements = 1;
  for (int d = 0; d < nd; ++d) k.elements *= shape[d];
  // An axis reduction: rows of `run` elements, each reduced by `tpr` threads (a power of two; a
  // block holds 256 / tpr rows), the result of row r at its offset in the coalesced output view.
  int64_t run = 0, rows = 1, tpr = 1;
  int unroll = 1;
  StridedView out_view;
  int ond = 0;
  if (axis) {
    const StridedView& in = g.reduce->in;
    run = in.shape[in.ndim - 1];
    if (run <= 0 || k.elements % run != 0) {
      k.why = "an axis reduction of no elements";
      return k;
    }
    rows = k.elements / run;
    // Neighbouring threads on neighbouring memory: a run of strided elements whose rows start
    // one element apart (a column sum) takes a thread a row; else a row's threads read along it
    // (a power of two: about its length over 8, 32 to 256; a short row's over 4, each thread
    // loading its elements together).
    const int64_t rs = in.strides[in.ndim - 1];
    const bool columns = rs != 1 && rs != -1 && in.ndim >= 2 && in.strides[in.ndim - 2] == 1 &&
                         in.shape[in.ndim - 2] > 1;
    if (!columns) {
      const int64_t want = run <= 32 ? run / 4 : std::max<int64_t>(32, (run + 7) / 8);
      while (tpr < kFusedThreads && tpr < want) tpr *= 2;
    }
    // Several elements a thread loaded before any is computed (stores in between would keep the
    // loads apart): 4 for light groups, fewer for heavy ones (each is a copy of the group's code).
    int weight = 0;
    for (size_t c = 0; c < count; ++c) weight += op_weight(calls[c]);
    unroll = weight <= kMaxChunkWeight / 4 ? 4 : weight <= kMaxChunkWeight / 2 ? 2 : 1;
    out_view = g.reduce->out;
    coalesce(&out_view, 1);
    ond = out_view.ndim;
    if (ond == 0) {
      ond = 1;
      out_view.shape[0] = 1;
      out_view.strides[0] = 0;
    }
  }
  // Distinct views: slot -> view index.
  std::vector<View> views;
  std::vector<int> slot_view(joint.size());
  for (size_t s = 0; s < joint.size(); ++s) {
    int found = -1;
    for (size_t v = 0; v < views.size(); ++v) {
      if (same_view(*views[v].first, joint[s], nd)) found = static_cast<int>(v);
    }
    if (found < 0) {
      found = static_cast<int>(views.size());
      views.push_back(View{&joint[s]});
    }
    slot_view[s] = found;
  }
  // The post-map's views: 0-d, one per distinct element (address and dtype).
  std::vector<StridedView> post_joint;
  for (size_t c = 0; c < g.post_count; ++c) {
    post_joint.push_back(g.post[c].out);
    for (int i = 0; i < elementwise_inputs(g.post[c]); ++i) {
      if (!g.post[c].in[i].is_scalar()) post_joint.push_back(g.post[c].in[i].view);
    }
  }
  std::vector<View> post_views;
  std::vector<int> post_slot(post_joint.size());
  for (size_t s = 0; s < post_joint.size(); ++s) {
    int found = -1;
    for (size_t v = 0; v < post_views.size(); ++v) {
      const StridedView& a = *post_views[v].first;
      if (a.data == post_joint[s].data && a.dtype == post_joint[s].dtype)
        found = static_cast<int>(v);
    }
    if (found < 0) {
      found = static_cast<int>(post_views.size());
      post_views.push_back(View{&post_joint[s]});
    }
    post_slot[s] = found;
  }
  int scalars = 0;
  const auto count_scalars = [&](const ElementwiseCall* cs, size_t n) {
    for (size_t c = 0; c < n; ++c) {
      for (int i = 0; i < elementwise_inputs(cs[c]); ++i) {
        if (cs[c].in[i].is_scalar()) ++scalars;
      }
      if (cs[c].kind == ElementwiseCall::Kind::Where && cs[c].in[0].is_scalar()) return false;
    }
    return true;
  };
  if (!count_scalars(calls, count) || !count_scalars(g.post, g.post_count)) {
    k.why = "cu.where with a scalar condition";
    return k;
  }
  const size_t nv = views.size();
  const size_t npv = post_views.size();
  const int reduce_view = g.reduce ? slot_view.back() : -1;
  // Vector access: one dimension, every view contiguous (or one element broadcast, stride 0), each
  // contiguous pointer aligned for a chunk: each thread then does `vec` consecutive elements with
  // vector loads and stores (16 bytes of the narrowest contiguous type a chunk).
  int vec = 1;
  if (nd == 1 && !axis) {
    size_t narrowest = 16;
    bool contiguous = true;
    for (const View& v : views) {
      const int64_t st = v.first->strides[0];
      if (st != 0 && st != 1) contiguous = false;
      if (st == 1) narrowest = std::min(narrowest, itemsize(v.first->dtype));
    }
    // Each element of a chunk is a copy of the group's code: light groups only (NVRTC's time).
    int weight = 0;
    for (size_t c = 0; c < count; ++c) weight += op_weight(calls[c]);
    if (contiguous && narrowest < 16 && k.elements >= 2) {
      vec = static_cast<int>(16 / narrowest);
      while (vec > 1 && vec * weight > kMaxChunkWeight) vec /= 2;
      for (const View& v : views) {
        if (v.first->strides[0] != 1) continue;
        const size_t align =
            std::min<size_t>(16, itemsize(v.first->dtype) * static_cast<size_t>(vec));
        if (reinterpret_cast<uintptr_t>(v.first->data) % align != 0) vec = 1;
      }
    }
  }
  k.vector = vec;
  const size_t ptr_at = 8 + 8 * static_cast<size_t>(nd);
  const size_t stride_at = ptr_at + 8 * nv;
  const size_t reduce_at = stride_at + 8 * nv * static_cast<size_t>(nd);
  // partials, result, blocks, correction; along axes then rows, run, tpr, the output's shape and
  // strides.
  const size_t post_at =
      reduce_at + (g.reduce ? 32 : 0) + (axis ? 24 + 16 * static_cast<size_t>(ond) : 0);
  const size_t fixed_end = post_at + 8 * npv;
  const size_t scalar_at = (fixed_end + 15) / 16 * 16;
  const size_t end = scalars ? scalar_at + 16 * static_cast<size_t>(scalars) : fixed_end;
  const size_t total = (end + 15) / 16 * 16;
  if (total > kMaxParamBytes) {
    k.why = fmt::format("its parameters would take {} bytes (at most {})", total, kMaxParamBytes);
    return k;
  }
  // The parameter block.
  k.params.assign(total, 0);
  k.scalar_at = scalar_at;
  put(k.params, 0, &k.elements, 8);
  put(k.params, 8, shape, 8 * static_cast<size_t>(nd));
  for (size_t v = 0; v < nv; ++v) {
    const void* p = views[v].first->data;
    put(k.params, ptr_at + 8 * v, &p, 8);
    put(k.params, stride_at + 8 * v * static_cast<size_t>(nd), views[v].first->strides,
        8 * static_cast<size_t>(nd));
  }
  if (g.reduce) {
    k.reduces = true;
    k.reduce_at = reduce_at;
    k.acc_bytes = reduce_acc_bytes(g.reduce->op, g.reduce->in.dtype);
    put(k.params, reduce_at + 24, &g.reduce->correction, 8);
    const void* out = g.reduce->out.data;
    put(k.params, reduce_at + 8, &out, 8);
    const int64_t threads = kFusedThreads;
    if (axis) {
      put(k.params, reduce_at + 32, &rows, 8);
      put(k.params, reduce_at + 40, &run, 8);
      put(k.params, reduce_at + 48, &tpr, 8);
      put(k.params, reduce_at + 56, out_view.shape, 8 * static_cast<size_t>(ond));
      put(k.params, reduce_at + 56 + 8 * static_cast<size_t>(ond), out_view.strides,
          8 * static_cast<size_t>(ond));
      // Rows by blocks of 256 / tpr; long rows also across blocks, as many as keep about 1024
      // blocks in all with 8 elements a thread at least (their partial results combined by the
      // second kernel).
      const int64_t per = threads / tpr;
      const int64_t row_blocks = (rows + per - 1) / per;
      const int64_t across = std::max<int64_t>(
          1, std::min<int64_t>((run + tpr * 8 - 1) / (tpr * 8), kMaxReduceBlocks / row_blocks));
      k.grid_x = across;
      k.grid_y = std::min<int64_t>(row_blocks, 65535);
      k.final_blocks = std::min<int64_t>((rows + threads - 1) / threads, 1 << 20);
      k.partials = rows * across;
    } else {
      const int64_t blocks = (k.elements / vec + threads - 1) / threads;
      k.grid_x = std::max<int64_t>(1, std::min<int64_t>(blocks, kMaxReduceBlocks));
      k.partials = k.grid_x;
    }
  } else {
    const int64_t blocks = (k.elements / vec + kFusedThreads - 1) / kFusedThreads;
    k.grid_x = std::max<int64_t>(1, std::min<int64_t>(blocks, 1 << 20));
  }
  for (size_t v = 0; v < npv; ++v) {
    const void* p = post_views[v].first->data;
    put(k.params, post_at + 8 * v, &p, 8);
  }
  // Written views inside dead memory: computed, not stored.
  std::vector<char> elide(nv, 0);
  {
    size_t at = 0;
    for (size_t c = 0; c < count; ++c) {
      const auto v = static_cast<size_t>(slot_view[at++]);
      for (int i = 0; i < elementwise_inputs(calls[c]); ++i) {
        if (!calls[c].in[i].is_scalar()) ++at;
      }
      const Span span = span_of(*views[v].first);
      for (size_t d = 0; d < g.dead_count && !elide[v]; ++d) {
        if (span.hi > span.lo && g.dead[d].contains(span)) {
          elide[v] = 1;
          ++k.elided;
        }
      }
    }
  }
  // The scalars, in the order the kernels read them; the key: what the source depends on.
  std::string& key = k.key;
  const auto byte = [&](int v) { key.push_back(static_cast<char>(v)); };
  byte(nd);
  byte(static_cast<int>(nv));
  byte(vec);
  for (const View& v : views) {
    byte(static_cast<int>(v.first->dtype));
    if (vec > 1) byte(v.first->strides[0] == 0 ? 0 : 1);  // broadcast or contiguous
    byte(all_broadcast(*v.first, nd) ? 1 : 0);            // a prologue's value: stored once
  }
  for (size_t v = 0; v < nv; ++v) byte(elide[v]);
  int next_scalar = 0;
  const auto key_calls = [&](const ElementwiseCall* cs, size_t n, const std::vector<int>& slots) {
    size_t at = 0;
    for (size_t c = 0; c < n; ++c) {
      const ElementwiseCall& call = cs[c];
      byte(static_cast<int>(call.kind));
      byte(call.op);
      byte(static_cast<int>(call.compute));
      byte(slots[at++]);
      for (int i = 0; i < elementwise_inputs(call); ++i) {
        if (call.in[i].is_scalar()) {
          put(k.params, scalar_at + 16 * static_cast<size_t>(next_scalar++), call.in[i].scalar, 16);
          byte(255);
        } else {
          byte(slots[at++]);
        }
      }
    }
  };
  key_calls(calls, count, slot_view);
  if (g.reduce) {
    byte(axis ? 253 : 254);
    if (axis) {
      byte(ond);
      byte(unroll);
    }
    byte(static_cast<int>(g.reduce->op));
    byte(static_cast<int>(g.reduce->in.dtype));
    byte(reduce_view);
    byte(static_cast<int>(npv));
    for (const View& v : post_views) byte(static_cast<int>(v.first->dtype));
    key_calls(g.post, g.post_count, post_slot);
  }
  k.ok = true;
  if (!source) return k;

  // The operations of one element, on the values v0, v1, ... of the views (those read before
  // they are written are loaded by the caller, those written are stored by it).
  int scalar = 0;
  const std::string ops = element_ops(calls, count, slot_view, views, scalar);
  if (g.reduce && !views[static_cast<size_t>(reduce_view)].written)
    views[static_cast<size_t>(reduce_view)].loaded = true;
  for (const View& v : views) {
    if (v.written && v.loaded && all_broadcast(*v.first, nd)) {
      k.ok = false;  // the planner never makes such a group: every element would store it
      k.why = "a broadcast value is read before the group writes it";
      return k;
    }
  }
  const std::string post_ops =
      g.reduce ? element_ops(g.post, g.post_count, post_slot, post_views, scalar) : std::string();

  std::string& s = k.kernel;
  s += "using namespace culua::detail;\nusing namespace culua::detail::kernels;\n\n";
  s += "struct Params {\n  long long n;\n";
  s += fmt::format("  long long shape[{}];\n  const void* ptr[{}];\n  long long stride[{}][{}];\n",
                   nd, nv, nv, nd);
  if (g.reduce)
    s += "  void* partials;\n  void* result;\n  long long blocks;\n  double correction;\n";
  if (axis) {
    s += fmt::format(
        "  long long rows;\n  long long run;\n  long long tpr;\n  long long oshape[{0}];\n"
        "  long long ostride[{0}];\n",
        ond);
  }
  if (npv) s += fmt::format("  void* post[{}];\n", npv);
  if (scalars) s += fmt::format("  alignas(16) unsigned char scalar[{}][16];\n", scalars);
  s += "};\n\n";
  const auto type_of = [&](size_t v) { return storage(views[v].first->dtype); };
  const auto is_bool = [&](size_t v) { return views[v].first->dtype == DType::Bool; };
  const auto stored = [&](size_t v) { return views[v].written && !elide[v]; };
  const auto broadcast_written = [&](size_t v) {
    return stored(v) && all_broadcast(*views[v].first, nd);
  };
  // The element's operations as a function of the view values.
  s += "__device__ __forceinline__ void culua_element(const Params& p";
  for (size_t v = 0; v < nv; ++v) s += fmt::format(", {}& v{}", type_of(v), v);
  s += ") {\n";
  s += ops;
  s += "}\n\n";
  std::string call_args = "p";
  for (size_t v = 0; v < nv; ++v) call_args += fmt::format(", v{}", v);
  if (vec > 1) {
    s += "template <class T, int K>\nstruct alignas(sizeof(T) * K < 16 ? sizeof(T) * K : 16) "
         "CuluaChunk {\n  T v[K];\n};\n\n";
  }
  // The reduction: the built-in reductions' own functor (kernels/reduce_ops.cuh) over elements
  // of the reduced view's type: rop.load(value, index) each element (its index along the
  // reduction), rop.combine in a fixed tree, rop.finalize(acc, count) into the result's type.
  const auto accumulate = [&](const std::string& value, const std::string& index) {
    return fmt::format("acc = rop.combine(acc, rop.load({}, {}));\n", value, index);
  };
  if (g.reduce) {
    s += reduce_functor_text(g.reduce->op, views[static_cast<size_t>(reduce_view)].first->dtype,
                             axis);
  }
  // Element `idx`: its offset in each view and its loads (names with the suffix `sfx`), then the
  // operations and the stores.
  const auto element_loads = [&](const std::string& idx, const std::string& sfx) {
    std::string e;
    for (size_t v = 0; v < nv; ++v) e += fmt::format("    long long o{}{} = 0;\n", v, sfx);
    if (nd == 1) {
      for (size_t v = 0; v < nv; ++v)
        e += fmt::format("    o{0}{1} = {2} * p.stride[{0}][0];\n", v, sfx, idx);
    } else {
      e += fmt::format("    long long rest{} = {};\n", sfx, idx);
      for (int d = nd - 1; d >= 0; --d) {
        e += fmt::format(
            "    {{\n      const long long c = rest{1} % p.shape[{0}];\n"
            "      rest{1} /= p.shape[{0}];\n",
            d, sfx);
        for (size_t v = 0; v < nv; ++v)
          e += fmt::format("      o{0}{2} += c * p.stride[{0}][{1}];\n", v, d, sfx);
        e += "    }\n";
      }
    }
    for (size_t v = 0; v < nv; ++v) {
      if (!views[v].loaded) {
        e += fmt::format("    {} v{}{};\n", type_of(v), v, sfx);
      } else if (is_bool(v)) {
        e += fmt::format(
            "    bool v{0}{1} = static_cast<const unsigned char*>(p.ptr[{0}])[o{0}{1}] != 0;\n", v,
            sfx);
      } else {
        e += fmt::format("    {0} v{1}{2} = static_cast<const {0}*>(p.ptr[{1}])[o{1}{2}];\n",
                         type_of(v), v, sfx);
      }
    }
    return e;
  };
  // `along`: the element's index along the reduction.
  const auto element_rest = [&](const std::string& idx, const std::string& sfx,
                                const std::string& along) {
    std::string e = "    culua_element(p";
    for (size_t v = 0; v < nv; ++v) e += fmt::format(", v{}{}", v, sfx);
    e += ");\n";
    for (size_t v = 0; v < nv; ++v) {
      if (!stored(v)) continue;
      e += fmt::format(
          "    {2}static_cast<{0}*>(const_cast<void*>(p.ptr[{1}]))[o{1}{3}] = v{1}{3};\n",
          type_of(v), v, broadcast_written(v) ? fmt::format("if ({} == 0) ", idx) : "", sfx);
    }
    if (g.reduce) e += "    " + accumulate(fmt::format("v{}{}", reduce_view, sfx), along);
    return e;
  };
  // Element i (along a full reduction, its index is i; along an axis, j).
  const std::string elem = element_loads("i", "") + element_rest("i", "", axis ? "j" : "i");

  s += fmt::format("extern \"C\" __global__ void {}(const Params p) {{\n", kFusedKernelName);
  if (axis) {
    s += axis_kernel_body(
        unroll, elem,
        [&](int u) { return element_loads(fmt::format("i_{}", u), fmt::format("_{}", u)); },
        [&](int u) {
          return element_rest(fmt::format("i_{}", u), fmt::format("_{}", u),
                              fmt::format("(j + {} * step)", u));
        });
  } else {
    s += "  const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  const long long step = (long long)gridDim.x * blockDim.x;\n"
         "  long long done = 0;\n";
    if (g.reduce)
      s +=
          "  const CuluaReduce rop = culua_reduce_op(p.correction);\n  Acc acc = rop.identity();\n";
    if (vec > 1) {
      s += fmt::format("  constexpr int K = {};\n  const long long chunks = p.n / K;\n", vec);
      s += "  for (long long c = first; c < chunks; c += step) {\n    const long long b = c * K;\n";
      for (size_t v = 0; v < nv; ++v) {
        const bool contiguous = views[v].first->strides[0] == 1;
        const char* load_type = is_bool(v) ? "unsigned char" : type_of(v);
        if (views[v].loaded) {
          if (contiguous) {
            s += fmt::format(
                "    const CuluaChunk<{0}, K> l{1} = *reinterpret_cast<const CuluaChunk<{0}, "
                "K>*>(\n"
                "        static_cast<const {0}*>(p.ptr[{1}]) + b);\n",
                load_type, v);
          } else {
            s += fmt::format("    const {0} l{1} = static_cast<const {0}*>(p.ptr[{1}])[0];\n",
                             load_type, v);
          }
        }
        if (broadcast_written(v)) {
          s += fmt::format("    {} w{};\n", type_of(v), v);
        } else if (stored(v)) {
          s += fmt::format("    CuluaChunk<{}, K> w{};\n", type_of(v), v);
        }
      }
      s += "#pragma unroll\n    for (int j = 0; j < K; ++j) {\n";
      for (size_t v = 0; v < nv; ++v) {
        if (views[v].loaded) {
          const bool contiguous = views[v].first->strides[0] == 1;
          const std::string value = contiguous ? fmt::format("l{}.v[j]", v) : fmt::format("l{}", v);
          s += is_bool(v) ? fmt::format("      bool v{} = {} != 0;\n", v, value)
                          : fmt::format("      {} v{} = {};\n", type_of(v), v, value);
        } else {
          s += fmt::format("      {} v{};\n", type_of(v), v);
        }
      }
      s += fmt::format("      culua_element({});\n", call_args);
      for (size_t v = 0; v < nv; ++v) {
        if (broadcast_written(v)) {
          s += fmt::format("      w{0} = v{0};\n", v);
        } else if (stored(v)) {
          s += fmt::format("      w{0}.v[j] = v{0};\n", v);
        }
      }
      if (g.reduce) s += "      " + accumulate(fmt::format("v{}", reduce_view), "b + j");
      s += "    }\n";
      for (size_t v = 0; v < nv; ++v) {
        if (broadcast_written(v)) {
          s += fmt::format(
              "    if (b == 0) *static_cast<{0}*>(const_cast<void*>(p.ptr[{1}])) = w{1};\n",
              type_of(v), v);
        } else if (stored(v)) {
          s += fmt::format(
              "    *reinterpret_cast<CuluaChunk<{0}, "
              "K>*>(static_cast<{0}*>(const_cast<void*>(p.ptr[{1}]))"
              " + b) = w{1};\n",
              type_of(v), v);
        }
      }
      s += "  }\n  done = chunks * K;\n";
    }
    // Element by element: every element (strided views), or the tail after the chunks.
    s += "  for (long long i = done + first; i < p.n; i += step) {\n";
    s += elem;
    s += "  }\n";
    if (g.reduce) {
      s += kBlockReduce;
      s += "  if (threadIdx.x == 0) static_cast<Acc*>(p.partials)[blockIdx.x] = culua_sh[0];\n";
    }
    s += "}\n";
  }
  if (!g.reduce) return k;

  // The second kernel (fuse/codegen_reduce.cpp).
  std::vector<PostView> post;
  for (const View& v : post_views) post.push_back({v.first->dtype, v.loaded, v.written});
  s += final_kernel_text(*g.reduce, axis, ond, post, post_ops);
  return k;
}

std::string full_source(const FusedKernel& k) {
  return std::string(kFusePrelude) + "\n" + k.kernel;
}

}  // namespace culua::detail::fuse
