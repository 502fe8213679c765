// Calls of cu.elementwise and cu.reduction templates planned without Lua or a GPU
// (rtc/template_plan.hpp): placeholder binding, the specialization key and source, the launch
// configuration, and the parameter values written for the generated kernel, checked against the
// kernel's own declaration as the scanner reads it from the generated source.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/template_plan.hpp"
#include "rtc/type_parser.hpp"

using namespace culua::detail;

namespace {

DeviceInfo h200() {
  DeviceInfo d;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

rtc::CallOperand array(void* data, DType t, const Shape& shape, std::vector<int64_t> strides = {}) {
  rtc::CallOperand o;
  o.view.data = data;
  o.view.dtype = t;
  o.view.ndim = shape.ndim;
  o.view.size = 1;
  int64_t next = 1;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    o.view.shape[d] = shape[d];
    o.view.strides[d] = strides.empty() ? next : strides[static_cast<size_t>(d)];
    next *= shape[d];
    o.view.size *= shape[d];
  }
  return o;
}

rtc::CallOperand scalar(Scalar v) {
  rtc::CallOperand o;
  o.scalar = true;
  o.value = v;
  return o;
}

// The declaration of `kernel` in generated `source`, as the scanner reads it.
rtc::KernelDecl declaration(const std::string& source, const std::string& kernel) {
  for (auto& d : rtc::scan_kernels(source)) {
    if (d.name == kernel) return d;
  }
  FAIL("no kernel " << kernel << " in\n" << source);
  return {};
}

// A kernel object with the parameters of `decl` (culua_index is the generated code's long long),
// to write arguments into without compiling anything.
std::shared_ptr<rtc::RtcKernel> kernel_of(const rtc::KernelDecl& decl) {
  std::vector<rtc::KernelParam> params;
  for (size_t i = 0; i < decl.param_types.size(); ++i) {
    const std::string& t = decl.param_types[i];
    params.push_back({decl.param_names[i], rtc::parse_type(t == "culua_index" ? "long long" : t)});
    REQUIRE(params.back().type.kind != rtc::ParamKind::Unsupported);
  }
  return std::make_shared<rtc::RtcKernel>(std::make_shared<const RtcBinary>(), decl.name, decl.name,
                                          std::move(params));
}

template <class T>
T slot_value(rtc::RtcKernel& k, size_t i) {
  T v;
  std::memcpy(&v, k.slot(i), sizeof v);
  return v;
}

}  // namespace

TEST_CASE("template plan: placeholders bind from the arguments", "[rtc][template_plan]") {
  const auto sig = rtc::parse_template_signature("T x, T y, f32 s -> U z", false);
  rtc::TypeBindings types;
  types.bind(sig.inputs[0], DType::F64, "input");
  CHECK(types.resolve(sig.inputs[1], "input") == DType::F64);
  CHECK(types.resolve(sig.inputs[2], "input") == DType::F32);
  CHECK_THAT(error_of([&] { types.bind(sig.inputs[1], DType::F32, "input"); }),
             Catch::Equals("T is f64 from an earlier argument but f32 from input 'y'"));
  CHECK_THAT(error_of([&] { types.bind(sig.inputs[2], DType::I32, "input"); }),
             Catch::Contains("input 's' must be a f32 array, got i32"));
  CHECK_THAT(error_of([&] { (void)types.resolve(sig.outputs[0], "output"); }),
             Catch::StartsWith("cannot tell the dtype U of output 'z' from the arguments"));
}

TEST_CASE("template plan: reduction defaults", "[rtc][template_plan]") {
  const auto one = rtc::parse_template_signature("f32 x, raw f32 w -> f32 y", true);
  CHECK(rtc::default_reduction_map(one) == "x");
  CHECK(rtc::default_reduction_post(one) == "y = a");
  const auto two = rtc::parse_template_signature("f32 x, f32 v -> f32 y, i64 k", true);
  CHECK_FALSE(rtc::default_reduction_map(two));
  CHECK_FALSE(rtc::default_reduction_post(two));
}

TEST_CASE("template plan: a contiguous elementwise call is vectorized", "[rtc][template_plan]") {
  rtc::KernelTemplate t = rtc::elementwise_template("f32 x, f32 s -> f32 z", "z = s * x");
  REQUIRE(t.reads_output == std::vector<bool>{false});
  alignas(16) float x[6] = {};
  alignas(16) float z[6] = {};
  const std::vector<rtc::CallOperand> ops = {array(x, DType::F32, Shape{2, 3}),
                                             scalar(Scalar::real(2.5)),
                                             array(z, DType::F32, Shape{2, 3})};
  const rtc::ElementwisePlan plan = rtc::plan_elementwise(t, ops, Shape{2, 3}, rtc::TypeBindings{});
  CHECK(plan.n == 6);
  CHECK(plan.spec.vector == 4);  // 16-byte loads of f32
  CHECK(plan.spec.ndim == 0);
  CHECK(plan.key == "f32,f32s,f32,v4d0");

  // The generated kernel's declaration is the parameter list the plan writes.
  const std::string src = rtc::elementwise_source(t, plan);
  const rtc::KernelDecl decl = declaration(src, rtc::kElementwiseKernel);
  CHECK(decl.extern_c);
  CHECK(decl.param_names ==
        std::vector<std::string>{"culua_v_x_p", "culua_v_z_p", "culua_v_s_s", "n"});
  CHECK(decl.param_types == std::vector<std::string>{"void*", "void*", "float", "culua_index"});
  auto k = kernel_of(decl);
  rtc::ArgumentWriter w(*k);
  rtc::write_elementwise_arguments(w, t, plan, ops);
  CHECK(slot_value<void*>(*k, 0) == static_cast<void*>(x));
  CHECK(slot_value<void*>(*k, 1) == static_cast<void*>(z));
  CHECK(slot_value<float>(*k, 2) == 2.5f);
  CHECK(slot_value<long long>(*k, 3) == 6);

  const LaunchDims d = rtc::elementwise_dims(plan, h200());
  CHECK(d.block[0] == 256);
  CHECK(d.grid[0] == 1);

  // Misaligned data falls back to one element a step: another specialization.
  const std::vector<rtc::CallOperand> shifted = {array(x + 1, DType::F32, Shape{5}),
                                                 scalar(Scalar::real(1.0)),
                                                 array(z, DType::F32, Shape{5})};
  CHECK(rtc::plan_elementwise(t, shifted, Shape{5}, rtc::TypeBindings{}).key ==
        "f32,f32s,f32,v1d0");
}

TEST_CASE("template plan: a strided elementwise call passes sizes and strides",
          "[rtc][template_plan]") {
  rtc::KernelTemplate t = rtc::elementwise_template("T x, T y -> T z", "z += x * y");
  REQUIRE(t.reads_output == std::vector<bool>{true});
  double x[6] = {}, y[3] = {}, z[6] = {};
  rtc::TypeBindings types;
  types.bind(t.sig.inputs[0], DType::F64, "input");
  // x is a transposed {2, 3} (strides {1, 2}), y a row broadcast over the rows.
  const std::vector<rtc::CallOperand> ops = {array(x, DType::F64, Shape{2, 3}, {1, 2}),
                                             array(y, DType::F64, Shape{3}),
                                             array(z, DType::F64, Shape{2, 3})};
  const rtc::ElementwisePlan plan = rtc::plan_elementwise(t, ops, Shape{2, 3}, types);
  CHECK(plan.spec.ndim == 2);
  CHECK(plan.spec.index32);
  CHECK(plan.spec.operands[2].load);
  CHECK(plan.key == "f64,f64,f64l,v1d2i");

  const rtc::KernelDecl decl = declaration(rtc::elementwise_source(t, plan), "culua_elementwise");
  REQUIRE(decl.param_types.size() == 3 + 1 + 2 + 3 * 2);
  auto k = kernel_of(decl);
  rtc::ArgumentWriter w(*k);
  rtc::write_elementwise_arguments(w, t, plan, ops);
  std::vector<long long> ints;
  for (size_t i = 3; i < decl.param_types.size(); ++i) ints.push_back(slot_value<long long>(*k, i));
  // n, the sizes {2, 3}, then the strides of x {1, 2}, y {0, 1} (broadcast) and z {3, 1}.
  CHECK(ints == std::vector<long long>{6, 2, 3, 1, 2, 0, 1, 3, 1});

  // A writer that is given too few values says so.
  auto short_k = kernel_of(decl);
  rtc::ArgumentWriter partial(*short_k);
  partial.put(static_cast<void*>(x));
  CHECK_THAT(error_of([&] { partial.done(); }), Catch::Contains("takes 12 parameters, got 1"));
}

TEST_CASE("template plan: reductions over the contiguous axis split long rows",
          "[rtc][template_plan]") {
  rtc::KernelTemplate t;
  t.reduction = true;
  t.name = "reduction";
  t.signature_text = "f32 x -> f32 y";
  t.sig = rtc::parse_template_signature(t.signature_text, true);
  // map, reduce, post, identity, preamble
  t.bodies = rtc::ReductionBodies{"x", "a + b", "y = a", "0", ""};
  const Shape shape{4, 100000};
  const std::vector<bool> reduced = {false, true};
  CHECK(rtc::reduction_shape(shape, reduced, false) == Shape{4});
  CHECK(rtc::reduction_shape(shape, reduced, true) == Shape{4, 1});
  std::vector<float> x(4 * 100000);
  float y[4] = {};
  const std::vector<rtc::CallOperand> ops = {array(x.data(), DType::F32, shape),
                                             array(y, DType::F32, Shape{4})};
  const rtc::ReductionPlan plan =
      rtc::plan_reduction(t, ops, shape, reduced, false, rtc::TypeBindings{});
  CHECK(plan.spec.acc == DType::F32);
  CHECK(plan.spec.kept == 1);
  CHECK(plan.spec.reduced == 1);
  CHECK(plan.outputs == 4);
  CHECK(plan.length == 100000);
  CHECK(plan.key == "accf32,f32,f32,k1r1");

  const rtc::ReductionLaunch l = rtc::reduction_launch(plan, h200());
  CHECK(l.block_mode);    // along contiguous memory
  CHECK(l.splits == 48);  // 132 SMs * 8 blocks wanted, at least 2048 elements a split
  CHECK(l.partial_bytes == 4 * 48 * sizeof(float));
  CHECK(l.main.grid[0] == 4 * 48);
  CHECK(l.finish.grid[0] == 4);

  const std::string src = rtc::reduction_source(t, plan);
  auto block = kernel_of(declaration(src, rtc::kReductionKernels[0]));
  rtc::ArgumentWriter w(*block);
  float partial[4 * 48];
  rtc::write_reduction_arguments(w, t, plan, l, ops, partial);
  CHECK(slot_value<void*>(*block, 0) == static_cast<void*>(x.data()));
  CHECK(slot_value<void*>(*block, 1) == static_cast<void*>(y));
  CHECK(slot_value<long long>(*block, 2) == 4);       // O
  CHECK(slot_value<long long>(*block, 3) == 100000);  // N
  CHECK(slot_value<long long>(*block, 4) == 48);      // G
  CHECK(slot_value<void*>(*block, 5) == static_cast<void*>(partial));

  auto finish = kernel_of(declaration(src, rtc::kReductionKernels[2]));
  rtc::ArgumentWriter fw(*finish);
  rtc::write_reduction_finish_arguments(fw, t, plan, l, ops, partial);
  CHECK(slot_value<void*>(*finish, 0) == static_cast<void*>(y));
  CHECK(slot_value<long long>(*finish, 3) == 48);
}

TEST_CASE("template plan: calls of one layout have one fingerprint", "[rtc][template_plan]") {
  alignas(16) float x[64] = {};
  alignas(16) float y[64] = {};
  alignas(16) double w[64] = {};
  auto fp = [](const std::vector<rtc::CallOperand>& ops, const Shape& shape) {
    std::vector<int64_t> out = {42};  // overwritten, not appended to
    rtc::elementwise_fingerprint(ops, shape, out);
    return out;
  };
  const Shape s{4, 8};
  const auto base =
      fp({array(x, DType::F32, s), scalar(Scalar::real(1)), array(y, DType::F32, s)}, s);
  // Other data of the same alignment and other scalar values: the same plan.
  CHECK(base ==
        fp({array(y, DType::F32, s), scalar(Scalar::real(-3)), array(x + 32, DType::F32, s)}, s));
  // Anything the plan depends on differs.
  CHECK(base != fp({array(x + 1, DType::F32, s), scalar(Scalar::real(1)), array(y, DType::F32, s)},
                   s));  // 4 bytes past 16: no vector loads
  CHECK(base != fp({array(x, DType::F32, s), array(w, DType::F32, s), array(y, DType::F32, s)}, s));
  CHECK(base != fp({array(w, DType::F64, s), scalar(Scalar::real(1)), array(y, DType::F32, s)}, s));
  CHECK(base !=
        fp({array(x, DType::F32, s, {1, 4}), scalar(Scalar::real(1)), array(y, DType::F32, s)},
           s));  // transposed strides
  const Shape t{8, 4};
  CHECK(base != fp({array(x, DType::F32, t), scalar(Scalar::real(1)), array(y, DType::F32, t)}, t));
  const Shape b{1, 8};  // x broadcast along the rows
  CHECK(base != fp({array(x, DType::F32, b), scalar(Scalar::real(1)), array(y, DType::F32, s)}, s));
}

TEST_CASE("template plan: the compile request of a complex specialization",
          "[rtc][template_plan]") {
  rtc::KernelTemplate t = rtc::elementwise_template("c64 x -> c64 z", "z = x * x");
  t.options = {"--fmad=false"};
  alignas(16) float x[8] = {};
  alignas(16) float z[8] = {};
  const std::vector<rtc::CallOperand> ops = {array(x, DType::C64, Shape{4}),
                                             array(z, DType::C64, Shape{4})};
  const rtc::ElementwisePlan plan = rtc::plan_elementwise(t, ops, Shape{4}, rtc::TypeBindings{});
  const std::string src = rtc::elementwise_source(t, plan);
  const RtcRequest r = rtc::template_request(t, src, {rtc::kElementwiseKernel});
  // The complex prelude's shims need -default-device; the template's own options follow.
  CHECK(r.options == std::vector<std::string>{"-default-device", "--fmad=false"});
  CHECK(r.source == src + rtc::kSignatureProbeSource);
  // In the cache's key the prelude is its hash: a short key, the kernel's own text in full.
  CHECK(r.key_source.size() < src.size() / 4);
  CHECK_THAT(r.key_source, Catch::StartsWith("culua template; complex prelude sha256 "));
  CHECK_THAT(r.key_source, Catch::Contains("z = x * x"));
  // A real specialization keeps its source as the key.
  rtc::KernelTemplate real = rtc::elementwise_template("f32 x -> f32 z", "z = x * x");
  const std::vector<rtc::CallOperand> rops = {array(x, DType::F32, Shape{8}),
                                              array(z, DType::F32, Shape{8})};
  const std::string rsrc = rtc::elementwise_source(
      real, rtc::plan_elementwise(real, rops, Shape{8}, rtc::TypeBindings{}));
  CHECK(rtc::template_request(real, rsrc, {rtc::kElementwiseKernel}).key_source.empty());
}
