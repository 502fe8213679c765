// Calls of cu.elementwise and cu.reduction templates without Lua: placeholder dtypes bound by the
// arguments, the specialization a call needs (its key, source and compile request), the launch
// configuration and the generated kernel's parameter values. The Lua binding
// (lua/kernel_template.cpp) reads arguments, allocates outputs, compiles and launches; an
// embedding can do the same from C++.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/backend/rtc_types.hpp"
#include "core/model/dtype.hpp"
#include "core/model/layout.hpp"
#include "core/model/scalar.hpp"
#include "rtc/rtc_kernel.hpp"
#include "rtc/templates.hpp"

namespace culua::detail::rtc {

// A template as its arguments gave it.
struct KernelTemplate {
  bool reduction = false;
  std::string name;  // for messages: "elementwise", "reduction" or the name= option
  std::string signature_text;
  TemplateSignature sig;
  std::string body;        // elementwise
  ReductionBodies bodies;  // reductions; bodies.preamble serves both kinds
  std::string acc;         // reductions: accumulator dtype or placeholder ("" = the output's)
  std::vector<std::string> options;
  std::vector<bool> reads_output;  // elementwise: per output, does the body read it
};

// The elementwise template of `signature` and `body`; throws Error(Value) for a bad signature.
KernelTemplate elementwise_template(std::string signature, std::string body);

// A reduction's map when none is given: the name of its single non-raw input; nullopt when it
// has several (then map= is required). Its post when none is given: "<output> = a" for a single
// output; nullopt otherwise.
std::optional<std::string> default_reduction_map(const TemplateSignature& sig);
std::optional<std::string> default_reduction_post(const TemplateSignature& sig);

// Placeholder dtypes ("T") bound by a call's arguments.
class TypeBindings {
 public:
  // Binds `p`'s placeholder to `t`, or checks `t` against its fixed dtype; `what` is "input" or
  // "out". Throws Error(Type) on a mismatch.
  void bind(const TemplateParam& p, DType t, const char* what);
  // The dtype of `p`; throws Error(Value) when its placeholder is not bound.
  DType resolve(const TemplateParam& p, const char* what) const;

 private:
  std::map<std::string, DType> bound_;
};

// One operand of a call: an array (its view over its own shape) or a scalar input.
struct CallOperand {
  bool scalar = false;
  Scalar value;      // scalar inputs
  StridedView view;  // arrays: view.data is the array's first element
};

// The kernels a specialization compiles.
inline constexpr const char* kElementwiseKernel = "culua_elementwise";
inline constexpr const char* kReductionKernels[3] = {"culua_reduce_block", "culua_reduce_thread",
                                                     "culua_reduce_finish"};

// What NVRTC compiles for one specialization: `source` with the signature probe appended,
// kTemplateOptions then the template's options, and each kernel with its probe as name
// expressions; in the kernel cache's key the complex prelude stands as its hash.
RtcRequest template_request(const KernelTemplate& t, const std::string& source,
                            const std::vector<std::string>& kernels);

// Writes the parameter values of a generated kernel in order; each value's size must be what the
// compiled kernel declares (an internal error otherwise).
class ArgumentWriter {
 public:
  explicit ArgumentWriter(RtcKernel& k) : k_(k) {}
  void put(const void* value, size_t size);
  template <class T>
  void put(const T& v) {
    put(&v, sizeof(T));
  }
  // The value of scalar input `p` as dtype `t` (complex: real, then imaginary part).
  void scalar(const Scalar& v, DType t, const TemplateParam& p);
  // Throws unless every parameter was written.
  void done();

 private:
  RtcKernel& k_;
  size_t next_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Elementwise calls.

struct ElementwisePlan {
  ElementwiseSpec spec;
  std::string key;                 // names the specialization among a template's compiled ones
  int64_t n = 0;                   // elements of the output shape
  std::vector<StridedView> views;  // the non-scalar, non-raw operands over the shape, coalesced
};

// `operands`: the inputs, then the outputs (all arrays, of `shape`); `types` binds the placeholders
// of scalar inputs.
ElementwisePlan plan_elementwise(const KernelTemplate& t, const std::vector<CallOperand>& operands,
                                 const Shape& shape, const TypeBindings& types);
// What a plan depends on besides the data pointers and the scalars' values: the call's shape,
// each operand's kind and dtype, each array's shape, strides and address modulo 16 (the vector
// loads). Calls of one template with equal fingerprints have equal plans, so that a binding may
// keep the last plan; `out` is overwritten (its capacity reused).
void elementwise_fingerprint(const std::vector<CallOperand>& operands, const Shape& shape,
                             std::vector<int64_t>& out);
std::string elementwise_source(const KernelTemplate& t, const ElementwisePlan& plan);
// A grid of 256-thread blocks over the elements, at most what the device runs at once.
LaunchDims elementwise_dims(const ElementwisePlan& plan, const DeviceInfo& device);
// The parameters of culua_elementwise (see rtc::elementwise_source).
void write_elementwise_arguments(ArgumentWriter& w, const KernelTemplate& t,
                                 const ElementwisePlan& plan,
                                 const std::vector<CallOperand>& operands);

// ---------------------------------------------------------------------------------------------
// Reduction calls.

// The output shape: `shape` without the `reduced` dimensions (size 1 with keepdims).
Shape reduction_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims);

struct ReductionPlan {
  ReductionSpec spec;
  ReduceLayout layout;
  std::string key;       // names the specialization among a template's compiled ones
  int64_t outputs = 1;   // O: output elements
  int64_t length = 1;    // N: elements reduced into each
  int first_array = -1;  // the operand index of the first array input (-1: none)
};

// `operands`: the inputs, then the outputs (arrays of reduction_shape(shape, reduced, keepdims)).
ReductionPlan plan_reduction(const KernelTemplate& t, const std::vector<CallOperand>& operands,
                             const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                             const TypeBindings& types);
std::string reduction_source(const KernelTemplate& t, const ReductionPlan& plan);

// How a reduction runs on a device: a block per output (along contiguous memory, or with few
// outputs) or a thread per output, split `splits` ways for long reductions; the splits' partial
// accumulators (partial_bytes) are combined by culua_reduce_finish.
struct ReductionLaunch {
  bool block_mode = false;
  int64_t splits = 1;  // G
  size_t partial_bytes = 0;
  LaunchDims main;    // culua_reduce_block (block_mode) or culua_reduce_thread
  LaunchDims finish;  // culua_reduce_finish, when splits > 1
};
ReductionLaunch reduction_launch(const ReductionPlan& plan, const DeviceInfo& device);
// The parameters of culua_reduce_block / culua_reduce_thread, and of culua_reduce_finish.
void write_reduction_arguments(ArgumentWriter& w, const KernelTemplate& t,
                               const ReductionPlan& plan, const ReductionLaunch& launch,
                               const std::vector<CallOperand>& operands, void* partial);
void write_reduction_finish_arguments(ArgumentWriter& w, const KernelTemplate& t,
                                      const ReductionPlan& plan, const ReductionLaunch& launch,
                                      const std::vector<CallOperand>& operands,
                                      const void* partial);

}  // namespace culua::detail::rtc
