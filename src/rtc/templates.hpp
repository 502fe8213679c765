// cu.elementwise and cu.reduction: kernel templates in the manner of CuPy's ElementwiseKernel and
// ReductionKernel. templates.cpp parses their signatures ("f32 x, T y -> T z") and lays out the
// operands of a call (broadcasting, merged dimensions); template_source.cpp generates the CUDA
// source of each specialization from text templates (rtc/text_template.hpp); the Lua binding
// compiles (cached) and launches it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"

namespace culua::detail::rtc {

struct TemplateParam {
  std::string name;
  std::string type;  // a dtype name, or a placeholder such as "T" bound at call time
  bool raw = false;  // `raw f32 x`: the body gets the pointer and indexes it itself
  bool placeholder() const;
  // Set by parse_template_signature, so that a call parses and formats nothing: the dtype of a
  // fixed type, and the parameter for messages ("input 'x'", "out 'z'").
  std::optional<DType> fixed;
  std::string role;
  // `type` as a dtype (nullopt for a placeholder).
  std::optional<DType> dtype() const { return fixed ? fixed : parse_dtype(type); }
};

struct TemplateSignature {
  std::vector<TemplateParam> inputs;
  std::vector<TemplateParam> outputs;
};

// "f32 x, raw T w, T y -> T z, i64 k". Names must be C identifiers, unique, and not reserved (i, n,
// a, b in reductions and names starting with culua_ or _); outputs cannot be raw. Throws
// Error(Value) saying what is wrong.
TemplateSignature parse_template_signature(std::string_view text, bool reduction);

// The C++ storage type of a dtype in generated code ("float", "__half",
// "cuda::std::complex<float>") and the type the body sees (f16 and bf16 are computed as float).
// cuda::std::complex is the complex prelude's (rtc/template_prelude.hpp, rtc/nvrtc/complex.cuh),
// or libcu++'s when the preamble names a <cuda/std/...> header.
std::string storage_type(DType t);
std::string value_type(DType t);

// Does `body` read variable `name` (anything but plain assignments `name = ...`)? Outputs that the
// body only assigns are not loaded from memory.
bool reads_variable(std::string_view body, std::string_view name);

// One operand of a specialization: inputs in order, then outputs.
struct OperandSpec {
  DType dtype = DType::F32;
  bool scalar = false;  // an input given as a Lua value: passed by value
  bool raw = false;
  bool load = false;  // outputs: read before the body runs
};

struct ElementwiseSpec {
  std::vector<OperandSpec> operands;
  int vector = 1;        // contiguous path: elements per thread step (16-byte loads), 1 for scalar
  int ndim = 0;          // 0: every array operand contiguous with the output's shape; else strided
  bool index32 = false;  // strided path: sizes and offsets fit 32 bits
};

// The CUDA source of one elementwise specialization. The kernel is
//   extern "C" __global__ void culua_elementwise(...)
// with parameters, in order: one `void*` per non-scalar operand (raw ones included); per scalar
// input its value (complex: two values, real then imaginary); `long long n`; then for the strided
// path `long long` sizes of the ndim dimensions, then for each non-raw array operand its ndim
// strides in elements.
std::string elementwise_source(const TemplateSignature& sig, const ElementwiseSpec& spec,
                               std::string_view body, std::string_view preamble);

// What stands for a generated source in the kernel cache's key (RtcRequest::key_source): the
// complex prelude replaced by its hash when the source starts with it, else "" (the source
// itself).
std::string template_key_source(const std::string& source);

// NVRTC options of every template compile, before the template's own: the complex prelude's std
// shims hold constexpr functions without __device__.
inline constexpr const char* kTemplateOptions[] = {"-default-device"};

struct ReductionSpec {
  std::vector<OperandSpec> operands;  // inputs, then outputs
  DType acc = DType::F32;
  int kept = 0;     // number of kept (output) dimensions after merging
  int reduced = 0;  // number of reduced dimensions after merging
};

struct ReductionBodies {
  std::string map, reduce, post, identity, preamble;
};

// The CUDA source of one reduction specialization: three kernels, each
//   extern "C" __global__ void culua_reduce_block(...)   a block per (output, split)
//   extern "C" __global__ void culua_reduce_thread(...)  a thread per (output, split)
//   extern "C" __global__ void culua_reduce_finish(...)  a block per output, over the splits
// The first two take: one `void*` per non-scalar operand; per scalar input its value (complex:
// two); `long long` outputs O, reduced length N, splits G; `void* partial` (O*G accumulators,
// used when G > 1); the `kept` sizes; the `reduced` sizes; per array input its kept strides then
// its reduced strides; per output its kept strides. culua_reduce_finish takes the output
// pointers, the scalar inputs, O, N, G, `const void* partial`, the kept sizes and per output its
// kept strides. Blocks have 256 threads.
std::string reduction_source(const TemplateSignature& sig, const ReductionSpec& spec,
                             const ReductionBodies& bodies);
inline constexpr int kReductionBlock = 256;

// Merges dimensions for a reduction call: `shape` is the broadcast shape, `reduced[d]` marks the
// reduced dimensions, `strides[k]` the strides of array operand k over `shape` (0 where
// broadcast). Size-1 dimensions are dropped, and neighbours of the same kind merge when every
// operand's strides allow it. On return the kept dimensions come first, then the reduced ones,
// each outermost first.
struct ReduceLayout {
  std::vector<int64_t> kept_sizes, reduced_sizes;
  std::vector<std::vector<int64_t>> kept_strides, reduced_strides;  // per operand
};
ReduceLayout merge_reduce_dims(const Shape& shape, const std::vector<bool>& reduced,
                               const std::vector<std::vector<int64_t>>& strides);

}  // namespace culua::detail::rtc
