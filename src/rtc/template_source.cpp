// The CUDA source of cu.elementwise and cu.reduction specializations (declared in
// rtc/templates.hpp). The kernels are text templates (rtc/text_template.hpp) that read as the CUDA
// they generate; the C++ computes only their values: parameter lists, and the lines repeated per
// operand or per dimension. The text is part of the on-disk compile cache's key: a change to it
// compiles every specialization again.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dtype.hpp"
#include "rtc/template_prelude.hpp"
#include "rtc/templates.hpp"
#include "rtc/text_template.hpp"

namespace culua::detail::rtc {

namespace {

// ---- Shared by both kinds of kernel

// The complex prelude (rtc/template_prelude.hpp) under a file name of its own, so that compiler
// messages about it say where they come from; then the generated file's numbering resumes. It is
// the first text of the source (template_key_source finds it there).
constexpr std::string_view kComplexHead = R"(#line 1 "culua_complex.cuh"
)";
constexpr std::string_view kComplexTail = R"(#line ${next_line} "${file}"
)";

// Headers and the load/store helpers every template kernel uses; f16 and bf16 are loaded as float
// and stored rounded to nearest.
constexpr std::string_view kPrelude = R"(${includes}
typedef long long culua_index;
template <class T, int N> struct alignas(sizeof(T) * N) culua_vec { T v[N]; };
template <class T> __device__ __forceinline__ T culua_value(const T& v) { return v; }
template <class T, class V> __device__ __forceinline__ void culua_store(T& d, const V& v) { d = static_cast<T>(v); }
${half_helpers}
${bfloat_helpers}
)";

constexpr std::string_view kHalfHelpers =
    R"(__device__ __forceinline__ float culua_value(const __half& v) { return __half2float(v); }
template <class V> __device__ __forceinline__ void culua_store(__half& d, const V& v) { d = __float2half_rn(static_cast<float>(v)); }
)";

constexpr std::string_view kBfloatHelpers =
    R"(__device__ __forceinline__ float culua_value(const __nv_bfloat16& v) { return __bfloat162float(v); }
template <class V> __device__ __forceinline__ void culua_store(__nv_bfloat16& d, const V& v) { d = __float2bfloat16_rn(static_cast<float>(v)); }
)";

// The user's preamble; compiler messages name it by its own lines, then the generated file's
// numbering resumes.
constexpr std::string_view kPreamble = R"(#line 1 "preamble"
${preamble}
#line ${next_line} "${file}"
)";

// An operand's pointer parameter as its element type (const for inputs).
constexpr std::string_view kTypedPointer =
    R"(${constness}${type}* const culua_v_${name} = static_cast<${constness}${type}*>(culua_v_${name}_p);
)";

// One operand of a specialization with its name: inputs in order, then outputs.
struct Operand {
  const std::string& name;
  const OperandSpec& spec;
  bool input;
  bool array() const { return !spec.scalar && !spec.raw; }  // indexed by the generated code
};

std::vector<Operand> operands_of(const TemplateSignature& sig,
                                 const std::vector<OperandSpec>& ops) {
  std::vector<Operand> out;
  const size_t nin = sig.inputs.size();
  for (size_t k = 0; k < ops.size(); ++k) {
    const bool input = k < nin;
    out.push_back({input ? sig.inputs[k].name : sig.outputs[k - nin].name, ops[k], input});
  }
  return out;
}

// The user's code as a block of lines: a newline after it always (its last line may lack one, or
// be a // comment that must not swallow the generated text after it).
std::string code_lines(std::string_view code) {
  std::string s(code);
  s += '\n';
  return s;
}

// Complex values are cuda::std::complex: culua's own (the complex prelude), unless the preamble
// brings in libcu++ itself (any <cuda/std/...> header), whose complex then serves as before.
void add_prelude(std::string& s, const std::vector<OperandSpec>& ops, DType acc,
                 std::string_view preamble, std::string_view file) {
  bool half = false, bfloat = false, complex = false;
  auto note = [&](DType t) {
    half = half || t == DType::F16;
    bfloat = bfloat || t == DType::BF16;
    complex = complex || is_complex(t);
  };
  for (const OperandSpec& o : ops) note(o.dtype);
  note(acc);
  const bool libcu = complex && preamble.find("cuda/std/") != std::string_view::npos;
  if (complex && !libcu) {
    s += kComplexHead;
    s += kComplexPrelude;
    fill_into(s, kComplexTail, {{"file", file}});
  }
  std::string includes;
  if (half) includes += "#include <cuda_fp16.h>\n";
  if (bfloat) includes += "#include <cuda_bf16.h>\n";
  if (libcu) includes += "#include <cuda/std/complex>\n";
  fill_into(s, kPrelude,
            {{"includes", includes},
             {"half_helpers", half ? kHalfHelpers : ""},
             {"bfloat_helpers", bfloat ? kBfloatHelpers : ""}});
}

void add_preamble(std::string& s, std::string_view preamble, std::string_view file) {
  if (!preamble.empty()) {
    fill_into(s, kPreamble, {{"preamble", code_lines(preamble)}, {"file", file}});
  }
}

// The kernel parameters of the scalar inputs, each after a comma: the value, or real and imaginary
// parts.
std::string scalar_params(const std::vector<Operand>& ops) {
  std::string s;
  for (const Operand& o : ops) {
    if (!o.spec.scalar) continue;
    if (is_complex(o.spec.dtype)) {
      s += fill(", ${part} culua_v_${name}_re, ${part} culua_v_${name}_im",
                {{"part", o.spec.dtype == DType::C64 ? "float" : "double"}, {"name", o.name}});
    } else {
      s += fill(", ${type} culua_v_${name}_s",
                {{"type", value_type(o.spec.dtype)}, {"name", o.name}});
    }
  }
  return s;
}

// The value of a scalar input inside the kernel.
std::string scalar_value(const Operand& o) {
  if (is_complex(o.spec.dtype)) {
    return fill("${type}(culua_v_${name}_re, culua_v_${name}_im)",
                {{"type", value_type(o.spec.dtype)}, {"name", o.name}});
  }
  return fill("culua_v_${name}_s", {{"name", o.name}});
}

// The pointer parameters of the operands that are not scalars, separated by commas (never empty:
// every specialization has an array output).
std::string pointer_params(const std::vector<Operand>& ops) {
  std::string s;
  for (const Operand& o : ops) {
    if (o.spec.scalar) continue;
    if (!s.empty()) s += ", ";
    s += fill("void* culua_v_${name}_p", {{"name", o.name}});
  }
  return s;
}

std::string typed_pointers(const std::vector<Operand>& ops) {
  std::string s;
  for (const Operand& o : ops) {
    if (o.spec.scalar) continue;
    s += fill(kTypedPointer, {{"constness", o.input ? "const " : ""},
                              {"type", storage_type(o.spec.dtype)},
                              {"name", o.name}});
  }
  return s;
}

// ---- cu.elementwise

// The body as a function (inputs by value, raw ones as pointers, outputs by reference), then the
// kernel: a grid-stride loop over the elements.
constexpr std::string_view kElementwise =
    R"(__device__ __forceinline__ void culua_body(const culua_index i, const culua_index n${operands}) {
#line 1 "body"
${body}
;
}
#line ${next_line} "culua_elementwise.cu"
extern "C" __global__ void culua_elementwise(${pointer_params}${scalar_params}, culua_index n${sizes}${strides}) {
${pointers}
const culua_index culua_stride = (culua_index)gridDim.x * blockDim.x;
const culua_index culua_first = (culua_index)blockIdx.x * blockDim.x + threadIdx.x;
${loop}
}
)";

// Every operand contiguous with the output's shape: element i of each at index i.
constexpr std::string_view kFlatLoop =
    R"(for (culua_index culua_i = culua_first; culua_i < n; culua_i += culua_stride) {
${element}
}
)";

// Contiguous, a chunk of `vector` elements a step (one 16-byte load or store per operand), then
// the elements past the last whole chunk one by one.
constexpr std::string_view kVectorLoop = R"(const culua_index culua_chunks = n / ${vector};
for (culua_index culua_c = culua_first; culua_c < culua_chunks; culua_c += culua_stride) {
${chunk_loads}
#pragma unroll
for (int culua_j = 0; culua_j < ${vector}; ++culua_j) {
${chunk_element}
}
${chunk_stores}
}
for (culua_index culua_i = culua_chunks * ${vector} + culua_first; culua_i < n; culua_i += culua_stride) {
${element}
}
)";

constexpr std::string_view kChunkLoad =
    "const ${vec} culua_v_${name}_in = reinterpret_cast<const "
    "${vec}*>(culua_v_${name})[culua_c];\n";
constexpr std::string_view kChunkOutput = "${vec} culua_v_${name}_out;\n";
constexpr std::string_view kChunkStore =
    "reinterpret_cast<${vec}*>(culua_v_${name})[culua_c] = culua_v_${name}_out;\n";

// Strided: the flat index decomposed into one coordinate per dimension, innermost first, each
// moving every array operand's offset by its stride.
constexpr std::string_view kStridedLoop =
    R"(for (culua_index culua_i = culua_first; culua_i < n; culua_i += culua_stride) {
${index} culua_rem = (${index})culua_i;
${offsets}
${dimensions}
${element}
}
)";

constexpr std::string_view kStridedDimension = R"({
${coordinate}
${steps}
}
)";
constexpr std::string_view kStridedCoordinate =
    R"(const ${index} culua_c = culua_rem % (${index})culua_d${d}; culua_rem /= (${index})culua_d${d};
)";
constexpr std::string_view kStridedOutermost = R"(const ${index} culua_c = culua_rem;
)";

// One element: the outputs' values (loaded when the body reads them), the body, the stores.
constexpr std::string_view kElement = R"(${output_values}
culua_body(${index}, n${arguments});
${stores}
)";

// Where the element's operands are: `load(o)` and `store(o)` name an array operand's element.
template <class Load, class Store>
std::string element(const std::vector<Operand>& ops, std::string_view index, Load load,
                    Store store) {
  std::string values, arguments, stores;
  for (const Operand& o : ops) {
    if (o.input) {
      if (o.spec.scalar) {
        arguments += ", " + scalar_value(o);
      } else if (o.spec.raw) {
        arguments += fill(", culua_v_${name}", {{"name", o.name}});
      } else {
        arguments += fill(", culua_value(${at})", {{"at", load(o)}});
      }
      continue;
    }
    const std::string type = value_type(o.spec.dtype);
    values += o.spec.load
                  ? fill("${type} culua_v_${name}_v = culua_value(${at});\n",
                         {{"type", type}, {"name", o.name}, {"at", load(o)}})
                  : fill("${type} culua_v_${name}_v{};\n", {{"type", type}, {"name", o.name}});
    arguments += fill(", culua_v_${name}_v", {{"name", o.name}});
    stores +=
        fill("culua_store(${at}, culua_v_${name}_v);\n", {{"at", store(o)}, {"name", o.name}});
  }
  return fill(
      kElement,
      {{"output_values", values}, {"index", index}, {"arguments", arguments}, {"stores", stores}});
}

std::string vector_loop(const std::vector<Operand>& ops, int vector, const std::string& flat) {
  std::string loads, stores;
  for (const Operand& o : ops) {
    if (!o.array()) continue;
    const std::string vec = fill("culua_vec<${type}, ${vector}>",
                                 {{"type", storage_type(o.spec.dtype)}, {"vector", vector}});
    if (o.input || o.spec.load) loads += fill(kChunkLoad, {{"vec", vec}, {"name", o.name}});
    if (!o.input) {
      loads += fill(kChunkOutput, {{"vec", vec}, {"name", o.name}});
      stores += fill(kChunkStore, {{"vec", vec}, {"name", o.name}});
    }
  }
  const std::string chunk = fill("culua_c * ${vector} + culua_j", {{"vector", vector}});
  const std::string chunk_element = element(
      ops, chunk,
      [](const Operand& o) {
        return fill("culua_v_${name}_in.v[culua_j]", {{"name", o.name}});
      },
      [](const Operand& o) {
        return fill("culua_v_${name}_out.v[culua_j]", {{"name", o.name}});
      });
  return fill(kVectorLoop, {{"vector", vector},
                            {"chunk_loads", loads},
                            {"chunk_element", chunk_element},
                            {"chunk_stores", stores},
                            {"element", flat}});
}

std::string strided_loop(const std::vector<Operand>& ops, const ElementwiseSpec& spec) {
  const char* index = spec.index32 ? "unsigned int" : "culua_index";
  std::string offsets;
  for (const Operand& o : ops) {
    if (o.array()) offsets += fill("culua_index culua_v_${name}_o = 0;\n", {{"name", o.name}});
  }
  std::string dimensions;
  for (int d = spec.ndim - 1; d >= 0; --d) {
    const std::string coordinate = d > 0 ? fill(kStridedCoordinate, {{"index", index}, {"d", d}})
                                         : fill(kStridedOutermost, {{"index", index}});
    std::string steps;
    for (const Operand& o : ops) {
      if (o.array()) {
        steps += fill("culua_v_${name}_o += (culua_index)culua_c * culua_v_${name}_s${d};\n",
                      {{"name", o.name}, {"d", d}});
      }
    }
    dimensions += fill(kStridedDimension, {{"coordinate", coordinate}, {"steps", steps}});
  }
  const auto at = [](const Operand& o) {
    return fill("culua_v_${name}[culua_v_${name}_o]", {{"name", o.name}});
  };
  return fill(kStridedLoop, {{"index", index},
                             {"offsets", offsets},
                             {"dimensions", dimensions},
                             {"element", element(ops, "culua_i", at, at)}});
}

}  // namespace

std::string elementwise_source(const TemplateSignature& sig, const ElementwiseSpec& spec,
                               std::string_view body, std::string_view preamble) {
  const std::vector<Operand> ops = operands_of(sig, spec.operands);
  std::string operands;
  for (const Operand& o : ops) {
    const TemplateArg type{"type",
                           o.spec.raw ? storage_type(o.spec.dtype) : value_type(o.spec.dtype)};
    const TemplateArg name{"name", o.name};
    operands += o.spec.raw ? fill(", const ${type}* __restrict__ ${name}", {type, name})
                : o.input  ? fill(", const ${type} ${name}", {type, name})
                           : fill(", ${type}& ${name}", {type, name});
  }
  // The strided path's sizes, then each array operand's strides.
  std::string sizes, strides;
  for (int d = 0; d < spec.ndim; ++d) sizes += fill(", culua_index culua_d${d}", {{"d", d}});
  for (const Operand& o : ops) {
    if (!o.array()) continue;
    for (int d = 0; d < spec.ndim; ++d) {
      strides += fill(", culua_index culua_v_${name}_s${d}", {{"name", o.name}, {"d", d}});
    }
  }

  std::string loop;
  if (spec.ndim > 0) {
    loop = strided_loop(ops, spec);
  } else {
    const auto at = [](const Operand& o) {
      return fill("culua_v_${name}[culua_i]", {{"name", o.name}});
    };
    const std::string flat = element(ops, "culua_i", at, at);
    loop = spec.vector > 1 ? vector_loop(ops, spec.vector, flat)
                           : fill(kFlatLoop, {{"element", flat}});
  }

  std::string s;
  add_prelude(s, spec.operands, DType::F32, preamble, "culua_elementwise.cu");
  add_preamble(s, preamble, "culua_elementwise.cu");
  fill_into(s, kElementwise,
            {{"operands", operands},
             {"body", code_lines(body)},
             {"pointer_params", pointer_params(ops)},
             {"scalar_params", scalar_params(ops)},
             {"sizes", sizes},
             {"strides", strides},
             {"pointers", typed_pointers(ops)},
             {"loop", loop}});
  return s;
}

namespace {

// ---- cu.reduction

// The user's functions: identity, map (the inputs of one element to an accumulator), reduce (two
// accumulators to one), post (the result to the outputs); then the block-wide combination through
// shared memory, which serves any accumulator type.
constexpr std::string_view kReductionFunctions = R"(typedef ${acc} culua_acc;
__device__ __forceinline__ culua_acc culua_identity() {
return static_cast<culua_acc>(
#line 1 "identity"
${identity}
);
}
#line ${next_line} "culua_reduction.cu"
__device__ __forceinline__ culua_acc culua_map(const culua_index n${map_inputs}) {
return static_cast<culua_acc>(
#line 1 "map"
${map}
);
}
#line ${next_line} "culua_reduction.cu"
__device__ __forceinline__ culua_acc culua_reduce(const culua_acc a, const culua_acc b) {
return static_cast<culua_acc>(
#line 1 "reduce"
${reduce}
);
}
#line ${next_line} "culua_reduction.cu"
__device__ __forceinline__ void culua_post(const culua_acc a, const culua_index n${post_scalars}${post_outputs}) {
#line 1 "post"
${post}
;
}
#line ${next_line} "culua_reduction.cu"
__device__ __forceinline__ culua_acc culua_block_reduce(culua_acc v) {
  __shared__ alignas(16) unsigned char culua_raw[${block} * sizeof(culua_acc)];
  culua_acc* const sm = reinterpret_cast<culua_acc*>(culua_raw);
  __syncthreads();
  sm[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int s = ${block} / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sm[threadIdx.x] = culua_reduce(sm[threadIdx.x], sm[threadIdx.x + s]);
    __syncthreads();
  }
  return sm[0];
}
)";

// The three kernels. Output o of split g reduces elements [N*g/G, N*(g+1)/G) of its row; with one
// split it stores the result, else its accumulator in `partial` for culua_reduce_finish.
//  - culua_reduce_block: a block per (output, split), its threads striding along the row.
//  - culua_reduce_thread: a thread per (output, split); neighbouring threads take neighbouring
//    outputs.
//  - culua_reduce_finish: a block per output, combining its splits.
constexpr std::string_view kReductionKernels =
    R"(extern "C" __global__ void culua_reduce_block(${pointer_params}${scalar_params}, culua_index O, culua_index N, culua_index G, void* culua_partial_p${kept_sizes}${reduced_sizes}${input_strides}${output_strides}) {
${pointers}
culua_acc* const culua_partial = static_cast<culua_acc*>(culua_partial_p);
for (culua_index culua_b = blockIdx.x; culua_b < O * G; culua_b += gridDim.x) {
const culua_index culua_o = culua_b / G, culua_g = culua_b % G;
${input_bases}
const culua_index culua_begin = N * culua_g / G, culua_end = N * (culua_g + 1) / G;
culua_acc culua_a = culua_identity();
for (culua_index culua_r = culua_begin + threadIdx.x; culua_r < culua_end; culua_r += blockDim.x) {
${map_element}
}
culua_a = culua_block_reduce(culua_a);
if (threadIdx.x == 0) {
if (G == 1) {
${finish}
} else {
culua_partial[culua_o * G + culua_g] = culua_a;
}
}
}
}
extern "C" __global__ void culua_reduce_thread(${pointer_params}${scalar_params}, culua_index O, culua_index N, culua_index G, void* culua_partial_p${kept_sizes}${reduced_sizes}${input_strides}${output_strides}) {
${pointers}
culua_acc* const culua_partial = static_cast<culua_acc*>(culua_partial_p);
const culua_index culua_stride = (culua_index)gridDim.x * blockDim.x;
for (culua_index culua_t = (culua_index)blockIdx.x * blockDim.x + threadIdx.x; culua_t < O * G; culua_t += culua_stride) {
const culua_index culua_o = culua_t % O, culua_g = culua_t / O;
${input_bases}
const culua_index culua_begin = N * culua_g / G, culua_end = N * (culua_g + 1) / G;
culua_acc culua_a = culua_identity();
for (culua_index culua_r = culua_begin; culua_r < culua_end; ++culua_r) {
${map_element}
}
if (G == 1) {
${finish}
} else {
culua_partial[culua_o * G + culua_g] = culua_a;
}
}
}
extern "C" __global__ void culua_reduce_finish(${output_pointer_params}${scalar_params}, culua_index O, culua_index N, culua_index G, const void* culua_partial_p${kept_sizes}${output_strides}) {
${output_pointers}
const culua_acc* const culua_partial = static_cast<const culua_acc*>(culua_partial_p);
for (culua_index culua_o = blockIdx.x; culua_o < O; culua_o += gridDim.x) {
culua_acc culua_a = culua_identity();
for (culua_index culua_g = threadIdx.x; culua_g < G; culua_g += blockDim.x) {
culua_a = culua_reduce(culua_a, culua_partial[culua_o * G + culua_g]);
}
culua_a = culua_block_reduce(culua_a);
if (threadIdx.x == 0) {
${finish}
}
}
}
)";

// A flat index culua_<rem> split into coordinates over the sizes culua_<size>0, 1, ... (the
// outermost first), innermost first: each coordinate's steps (`step(d)`) move the operands'
// offsets; the outermost takes what is left.
constexpr std::string_view kCoordinate =
    R"({ const culua_index culua_c = culua_${rem} % culua_${size}${d}; culua_${rem} /= culua_${size}${d};
)";
constexpr std::string_view kOutermostCoordinate = R"({ const culua_index culua_c = culua_${rem};
)";

template <class Step>
std::string coordinates(std::string_view rem, std::string_view size, int dims, Step step) {
  std::string s;
  for (int d = dims - 1; d >= 0; --d) {
    s += d > 0 ? fill(kCoordinate, {{"rem", rem}, {"size", size}, {"d", d}})
               : fill(kOutermostCoordinate, {{"rem", rem}});
    s += step(d);
    s += "}\n";
  }
  return s;
}

// The offsets of the kept coordinates of output index culua_o (culua_<name>_base) for the array
// operands among `ops`.
constexpr std::string_view kKeptOffsets = R"(culua_index culua_krem = culua_o;
${bases}
${coordinates}
)";

std::string kept_offsets(const std::vector<Operand>& ops, int kept) {
  std::string bases;
  for (const Operand& o : ops) {
    if (o.array()) bases += fill("culua_index culua_v_${name}_base = 0;\n", {{"name", o.name}});
  }
  const std::string steps = coordinates("krem", "kd", kept, [&](int d) {
    std::string s;
    for (const Operand& o : ops) {
      if (o.array()) {
        s += fill("culua_v_${name}_base += culua_c * culua_v_${name}_k${d};\n",
                  {{"name", o.name}, {"d", d}});
      }
    }
    return s;
  });
  return fill(kKeptOffsets, {{"bases", bases}, {"coordinates", steps}});
}

// Element culua_r of the row: the inputs' offsets along the reduced dimensions, then the map's
// value combined into culua_a.
constexpr std::string_view kMapElement = R"(culua_index culua_rrem = culua_r;
${offsets}
${coordinates}
culua_a = culua_reduce(culua_a, culua_map(N${arguments}));
)";

std::string map_element(const std::vector<Operand>& inputs, int reduced) {
  std::string offsets, arguments;
  for (const Operand& o : inputs) {
    if (o.spec.scalar) {
      arguments += ", " + scalar_value(o);
    } else if (o.spec.raw) {
      arguments += fill(", culua_v_${name}", {{"name", o.name}});
    } else {
      offsets +=
          fill("culua_index culua_v_${name}_off = culua_v_${name}_base;\n", {{"name", o.name}});
      arguments += fill(", culua_value(culua_v_${name}[culua_v_${name}_off])", {{"name", o.name}});
    }
  }
  const std::string steps = coordinates("rrem", "rd", reduced, [&](int d) {
    std::string s;
    for (const Operand& o : inputs) {
      if (o.array()) {
        s += fill("culua_v_${name}_off += culua_c * culua_v_${name}_r${d};\n",
                  {{"name", o.name}, {"d", d}});
      }
    }
    return s;
  });
  return fill(kMapElement,
              {{"offsets", offsets}, {"coordinates", steps}, {"arguments", arguments}});
}

// The result culua_a of output index culua_o through culua_post into the outputs.
constexpr std::string_view kFinish = R"(${output_bases}
${output_values}
culua_post(culua_a, N${arguments});
${stores}
)";

std::string finish(const std::vector<Operand>& inputs, const std::vector<Operand>& outputs,
                   int kept) {
  std::string values, arguments, stores;
  for (const Operand& o : inputs) {
    if (o.spec.scalar) arguments += ", " + scalar_value(o);
  }
  for (const Operand& o : outputs) {
    values += fill("${type} culua_v_${name}_v{};\n",
                   {{"type", value_type(o.spec.dtype)}, {"name", o.name}});
    arguments += fill(", culua_v_${name}_v", {{"name", o.name}});
    stores += fill("culua_store(culua_v_${name}[culua_v_${name}_base], culua_v_${name}_v);\n",
                   {{"name", o.name}});
  }
  return fill(kFinish, {{"output_bases", kept_offsets(outputs, kept)},
                        {"output_values", values},
                        {"arguments", arguments},
                        {"stores", stores}});
}

}  // namespace

std::string reduction_source(const TemplateSignature& sig, const ReductionSpec& spec,
                             const ReductionBodies& b) {
  const std::vector<Operand> ops = operands_of(sig, spec.operands);
  const auto first_output = ops.begin() + static_cast<std::ptrdiff_t>(sig.inputs.size());
  const std::vector<Operand> inputs(ops.begin(), first_output);
  const std::vector<Operand> outputs(first_output, ops.end());
  const int K = spec.kept, R = spec.reduced;

  std::string map_inputs, post_scalars, post_outputs;
  for (const Operand& o : inputs) {
    const TemplateArg name{"name", o.name};
    map_inputs += o.spec.raw
                      ? fill(", const ${type}* __restrict__ ${name}",
                             {{"type", storage_type(o.spec.dtype)}, name})
                      : fill(", const ${type} ${name}", {{"type", value_type(o.spec.dtype)}, name});
    if (o.spec.scalar) {
      post_scalars += fill(", const ${type} ${name}", {{"type", value_type(o.spec.dtype)}, name});
    }
  }
  for (const Operand& o : outputs) {
    post_outputs +=
        fill(", ${type}& ${name}", {{"type", value_type(o.spec.dtype)}, {"name", o.name}});
  }
  // The kernels' sizes and strides (rtc/templates.hpp states their order).
  std::string kept_sizes, reduced_sizes, input_strides, output_strides;
  for (int d = 0; d < K; ++d) kept_sizes += fill(", culua_index culua_kd${d}", {{"d", d}});
  for (int d = 0; d < R; ++d) reduced_sizes += fill(", culua_index culua_rd${d}", {{"d", d}});
  for (const Operand& o : inputs) {
    if (!o.array()) continue;
    for (int d = 0; d < K; ++d) {
      input_strides += fill(", culua_index culua_v_${name}_k${d}", {{"name", o.name}, {"d", d}});
    }
    for (int d = 0; d < R; ++d) {
      input_strides += fill(", culua_index culua_v_${name}_r${d}", {{"name", o.name}, {"d", d}});
    }
  }
  for (const Operand& o : outputs) {
    for (int d = 0; d < K; ++d) {
      output_strides += fill(", culua_index culua_v_${name}_k${d}", {{"name", o.name}, {"d", d}});
    }
  }

  std::string s;
  add_prelude(s, spec.operands, spec.acc, b.preamble, "culua_reduction.cu");
  add_preamble(s, b.preamble, "culua_reduction.cu");
  fill_into(s, kReductionFunctions,
            {{"acc", value_type(spec.acc)},
             {"identity", code_lines(b.identity)},
             {"map_inputs", map_inputs},
             {"map", code_lines(b.map)},
             {"reduce", code_lines(b.reduce)},
             {"post_scalars", post_scalars},
             {"post_outputs", post_outputs},
             {"post", code_lines(b.post)},
             {"block", kReductionBlock}});
  fill_into(s, kReductionKernels,
            {{"pointer_params", pointer_params(ops)},
             {"scalar_params", scalar_params(ops)},
             {"kept_sizes", kept_sizes},
             {"reduced_sizes", reduced_sizes},
             {"input_strides", input_strides},
             {"output_strides", output_strides},
             {"pointers", typed_pointers(ops)},
             {"input_bases", kept_offsets(inputs, K)},
             {"map_element", map_element(inputs, R)},
             {"finish", finish(inputs, outputs, K)},
             {"output_pointer_params", pointer_params(outputs)},
             {"output_pointers", typed_pointers(outputs)}});
  return s;
}

std::string template_key_source(const std::string& source) {
  const std::string_view head = kComplexHead, prelude = kComplexPrelude;
  const std::string_view text = source;
  if (text.substr(0, head.size()) != head || text.substr(head.size(), prelude.size()) != prelude) {
    return {};
  }
  return std::string("culua template; complex prelude sha256 ") + kComplexPreludeHash + "\n" +
         source.substr(head.size() + prelude.size());
}

}  // namespace culua::detail::rtc
