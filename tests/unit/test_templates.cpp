// Run-time kernels without a GPU: launch-configuration and pointer-argument checks, parameters
// resolved from compiler symbols, cu.elementwise/cu.reduction signatures, dimension merging, and
// the generated CUDA source (compiled with NVRTC when the build has CUDA and NVRTC loads: no GPU
// is needed to compile).
#include "helpers.hpp"

#include <functional>
#include <iterator>
#include <string>

#include "rtc/rtc_kernel.hpp"
#include "rtc/templates.hpp"
#ifdef CULUA_HAVE_CUDA
#include "cuda/rtc.hpp"
#endif

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

DeviceInfo h200() {
  DeviceInfo d;
  d.name = "test";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.max_threads_per_block = 1024;
  d.shared_per_block_optin = 227 * 1024;
  return d;
}

LaunchDims dims(uint32_t g, uint32_t b, uint32_t shared = 0) {
  LaunchDims d;
  d.grid[0] = g;
  d.block[0] = b;
  d.shared = shared;
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

}  // namespace

TEST_CASE("rtc: launch configurations are checked against device and kernel limits", "[rtc]") {
  const DeviceInfo d = h200();
  CHECK_NOTHROW(rtc::check_launch_dims(dims(1, 1), d, 1024, 0, "k"));
  CHECK_NOTHROW(rtc::check_launch_dims(dims(2147483647, 1024, 100 * 1024), d, 1024, 0, "k"));
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(dims(0, 32), d, 1024, 0, "k"); }),
             Catch::Contains("at least 1"));
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(dims(1, 0), d, 1024, 0, "k"); }),
             Catch::Contains("at least 1"));
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(dims(1, 1025), d, 1024, 0, "k"); }),
             Catch::Contains("block x is 1025; the device allows at most 1024"));
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(dims(1, 512), d, 384, 0, "k"); }),
             Catch::Contains("more than this kernel can run (384"));
  LaunchDims z = dims(1, 16);
  z.block[1] = 16;
  z.block[2] = 8;
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(z, d, 1024, 0, "k"); }),
             Catch::Contains("a block of 2048 threads"));
  LaunchDims gy = dims(1, 1);
  gy.grid[1] = 65536;
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(gy, d, 1024, 0, "k"); }),
             Catch::Contains("grid y is 65536"));
  CHECK_THAT(error_of([&] { rtc::check_launch_dims(dims(1, 32, 227 * 1024), d, 1024, 1, "k"); }),
             Catch::Contains("plus 1 static exceed the device's limit of 232448"));
}

TEST_CASE("rtc: pointer arguments need live, contiguous, aligned device arrays of a matching dtype",
          "[rtc]") {
  Runtime rt(host_options());
  const rtc::ParamType f = rtc::parse_type("float const*");
  const rtc::ParamType f4 = rtc::parse_type("float4*");
  const rtc::ParamType v = rtc::parse_type("void*");
  Array a = empty(rt, Shape{64}, DType::F32);
  CHECK_NOTHROW(rtc::check_pointer_argument(f, a, 0, "x"));
  CHECK_NOTHROW(rtc::check_pointer_argument(v, empty(rt, Shape{3}, DType::C128), 0, "x"));
  CHECK_THAT(
      error_of([&] { rtc::check_pointer_argument(f, empty(rt, Shape{4}, DType::F64), 0, "x"); }),
      Catch::Contains("x takes f32") && Catch::Contains("got f64"));
  CHECK_THAT(error_of([&] { rtc::check_pointer_argument(f, a, 1, "x"); }),
             Catch::Contains("the array is on device 0, the launch on device 1"));
  Array m = empty(rt, Shape{8, 8}, DType::F32);
  Layout t = m.layout();
  std::swap(t.shape[0], t.shape[1]);
  std::swap(t.strides[0], t.strides[1]);
  CHECK_THAT(error_of([&] { rtc::check_pointer_argument(f, m.with_layout(t), 0, "x"); }),
             Catch::Contains("non-contiguous"));
  Layout off = Layout::contiguous(Shape{60});
  off.offset = 1;
  CHECK_NOTHROW(rtc::check_pointer_argument(f, a.with_layout(off), 0, "x"));
  CHECK_THAT(error_of([&] { rtc::check_pointer_argument(f4, a.with_layout(off), 0, "x"); }),
             Catch::Contains("not 16-byte aligned"));
  Array pinned = empty(rt, Shape{4}, DType::F32, Location::Pinned);
  CHECK_THAT(error_of([&] { rtc::check_pointer_argument(f, pinned, 0, "x"); }),
             Catch::Contains("got a pinned host array"));
  Array freed = empty(rt, Shape{4}, DType::F32);
  freed.buffer()->release();
  CHECK(error_kind_of([&] { rtc::check_pointer_argument(f, freed, 0, "x"); }) ==
        ErrorKind::Released);
}

TEST_CASE("rtc: parameters come from the signature probe, the mangled name, or the declaration",
          "[rtc]") {
  RtcBinary b;
  // What NVRTC reports for extern "C" saxpy(float, const float*, float*, size_t) and its probe.
  b.lowered_names = {
      {"saxpy", "saxpy"},
      {rtc::signature_probe("saxpy"), "_Z22culua_signature_probe_IPFvfPKfPfmEEvT_"},
      {"scale<float, 3>", "_Z5scaleIfLi3EEvPT_S0_i"},
  };
  rtc::KernelDecl decl;
  decl.name = "saxpy";
  decl.param_names = {"a", "x", "y", "n"};
  decl.param_types = {"float", "const float*", "float*", "size_t"};
  const auto p = rtc::resolve_params(b, "saxpy", &decl);
  REQUIRE(p.size() == 4);
  CHECK(p[0].name == "a");
  CHECK(p[1].type.spelling == "float const*");
  CHECK(p[1].type.pointee_const);
  CHECK(p[3].type.kind == rtc::ParamKind::Unsigned);
  CHECK(p[3].type.size == 8);
  const auto s = rtc::resolve_params(b, "scale<float, 3>", nullptr);
  REQUIRE(s.size() == 3);
  CHECK(s[0].type.spelling == "float*");
  CHECK(s[2].type.spelling == "int");
  CHECK(s[0].name.empty());
  CHECK(rtc::describe_argument(0, s[0]) == "argument 1 (float*)");
  CHECK(rtc::describe_argument(1, p[1]) == "argument 2 (x: float const*)");
  // No symbol information: the declaration's text.
  RtcBinary plain;
  plain.lowered_names = {{"saxpy", "saxpy"}};
  CHECK(rtc::resolve_params(plain, "saxpy", &decl).size() == 4);
  CHECK_THROWS_AS(rtc::resolve_params(plain, "saxpy", nullptr), Error);
}

TEST_CASE("templates: signatures", "[rtc][template]") {
  const auto sig = rtc::parse_template_signature("f32 x, raw T w,T y -> T z , i64 k", false);
  REQUIRE(sig.inputs.size() == 3);
  REQUIRE(sig.outputs.size() == 2);
  CHECK(sig.inputs[1].raw);
  CHECK(sig.inputs[1].placeholder());
  CHECK_FALSE(sig.inputs[0].placeholder());
  CHECK(sig.outputs[1].name == "k");
  CHECK(rtc::parse_template_signature("-> f32 z", false).inputs.empty());
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 x", false); }),
             Catch::Contains("needs one '->'"));
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 x -> f32 x", false); }),
             Catch::Contains("used twice"));
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 a -> f32 z", true); }),
             Catch::Contains("reserved"));
  CHECK_NOTHROW(rtc::parse_template_signature("f32 a -> f32 z", false));
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 x -> raw f32 z", false); }),
             Catch::Contains("outputs cannot be raw"));
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 x y -> f32 z", false); }),
             Catch::Contains("'TYPE NAME'"));
  CHECK_THAT(error_of([] { rtc::parse_template_signature("f32 2x -> f32 z", false); }),
             Catch::Contains("not a valid name"));
}

TEST_CASE("templates: which outputs the body reads", "[rtc][template]") {
  CHECK_FALSE(rtc::reads_variable("z = 2*x + y", "z"));
  CHECK_FALSE(rtc::reads_variable("z=x; zz = z2", "z"));
  CHECK(rtc::reads_variable("z += x", "z"));
  CHECK(rtc::reads_variable("z = z * x", "z"));
  CHECK(rtc::reads_variable("if (z == 0) z = 1", "z"));
  CHECK_FALSE(rtc::reads_variable("s.z = 1; p->z = 2; z = 3", "z"));
}

TEST_CASE("templates: reduction dimensions merge", "[rtc][template]") {
  // A contiguous {4, 5, 6} summed over everything: one reduced dimension of 120.
  auto l = rtc::merge_reduce_dims(Shape{4, 5, 6}, {true, true, true}, {{30, 6, 1}});
  CHECK(l.kept_sizes.empty());
  CHECK(l.reduced_sizes == std::vector<int64_t>{120});
  CHECK(l.reduced_strides[0] == std::vector<int64_t>{1});
  // Over the middle axis: kept {4, 6}, reduced {5}.
  l = rtc::merge_reduce_dims(Shape{4, 5, 6}, {false, true, false}, {{30, 6, 1}, {6, 0, 1}});
  CHECK(l.kept_sizes == std::vector<int64_t>{4, 6});
  CHECK(l.reduced_sizes == std::vector<int64_t>{5});
  CHECK(l.kept_strides[1] == std::vector<int64_t>{6, 1});
  CHECK(l.reduced_strides[1] == std::vector<int64_t>{0});
  // Size-1 dimensions vanish; a transposed operand stops merging.
  l = rtc::merge_reduce_dims(Shape{1, 8, 8}, {false, true, true}, {{64, 1, 8}});
  CHECK(l.reduced_sizes == std::vector<int64_t>{8, 8});
}

namespace {

std::vector<rtc::OperandSpec> operands(std::initializer_list<std::pair<DType, const char*>> list) {
  std::vector<rtc::OperandSpec> out;
  for (const auto& [t, flags] : list) {
    rtc::OperandSpec o;
    o.dtype = t;
    const std::string f = flags;
    o.scalar = f.find('s') != std::string::npos;
    o.raw = f.find('r') != std::string::npos;
    o.load = f.find('l') != std::string::npos;
    out.push_back(o);
  }
  return out;
}

#ifdef CULUA_HAVE_CUDA
// Compiles with NVRTC for sm_90 (no GPU needed); true when compiled, false when NVRTC is missing.
bool compiles(const std::string& source, const std::vector<std::string>& kernels) {
  RtcRequest r;
  r.source = source + rtc::kSignatureProbeSource;
  r.use_cache = false;
  r.options.assign(std::begin(rtc::kTemplateOptions), std::end(rtc::kTemplateOptions));
  for (const auto& k : kernels) {
    r.name_expressions.push_back(k);
    r.name_expressions.push_back(rtc::signature_probe(k));
  }
  RtcBinary b;
  try {
    b = cuda::compile(r, h200());
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Unsupported) return false;  // no NVRTC here
    FAIL("compile failed: " << e.what() << "\n" << source);
  }
  for (const auto& k : kernels) {
    const auto params = rtc::resolve_params(b, k, nullptr);
    for (const auto& p : params) CHECK(p.type.kind != rtc::ParamKind::Unsupported);
  }
  return true;
}
#endif

}  // namespace

TEST_CASE("templates: generated elementwise and reduction sources compile", "[rtc][template]") {
  const auto sig = rtc::parse_template_signature("T x, f32 s, raw f64 w -> T z, f64 q", false);
  std::vector<std::pair<std::string, rtc::ElementwiseSpec>> specs;
  rtc::ElementwiseSpec flat;
  flat.operands = operands({{DType::F32, ""},
                            {DType::F32, "s"},
                            {DType::F64, "r"},
                            {DType::F32, ""},
                            {DType::F64, "l"}});
  flat.vector = 2;
  specs.emplace_back("flat vectorized", flat);
  rtc::ElementwiseSpec strided = flat;
  strided.vector = 1;
  strided.ndim = 3;
  strided.index32 = true;
  specs.emplace_back("strided", strided);
  rtc::ElementwiseSpec half = flat;
  half.operands = operands(
      {{DType::F16, ""}, {DType::F32, "s"}, {DType::F64, "r"}, {DType::F16, ""}, {DType::F64, ""}});
  half.vector = 2;
  specs.emplace_back("half", half);
  for (const auto& [what, spec] : specs) {
    INFO(what);
    const std::string src = rtc::elementwise_source(sig, spec, "z = x * s + w[i]; q = z", "");
    CHECK_THAT(src, Catch::Contains("extern \"C\" __global__ void culua_elementwise("));
    CHECK_THAT(src, Catch::Contains("#line 1 \"body\""));
#ifdef CULUA_HAVE_CUDA
    if (!compiles(src, {"culua_elementwise"})) WARN("NVRTC is not available: not compiled");
#endif
  }

  const auto rsig = rtc::parse_template_signature("T x, f32 y -> T r", true);
  rtc::ReductionSpec rs;
  rs.operands = operands({{DType::F16, ""}, {DType::F32, "s"}, {DType::F16, ""}});
  rs.acc = DType::F32;
  rs.kept = 2;
  rs.reduced = 1;
  rtc::ReductionBodies bodies{"x * y", "a + b", "r = a / n", "0", "// helpers"};
  const std::string rsrc = rtc::reduction_source(rsig, rs, bodies);
  CHECK_THAT(rsrc, Catch::Contains("culua_reduce_block"));
  CHECK_THAT(rsrc, Catch::Contains("culua_reduce_finish"));
#ifdef CULUA_HAVE_CUDA
  compiles(rsrc, {"culua_reduce_block", "culua_reduce_thread", "culua_reduce_finish"});
#endif
}

namespace {

// What user code of cu.elementwise and cu.reduction does with complex values: the whole interface
// of std::complex the complex prelude gives (rtc/nvrtc/complex.cuh), the documented spellings
// (cuda::std::conj, cuda::std::abs) and the RK4 stages of scripts/device_resident_loop.lua.
constexpr const char* kComplexBody = R"(
const cuda::std::complex<float> I(0.0f, 1.0f);
const cuda::std::complex<float> kF = -2.0f * I * x - I * w * (2.0f * x - 1.0f);
const cuda::std::complex<float> kG = -I * (cuda::std::conj(w) * x - w * cuda::std::conj(x));
cuda::std::complex<float> t = kF + h * kG;
t += 1; t -= 2.0f; t *= w; t /= 3; t = t / x + 2 * t - t * 0.5;
t.real(t.real() + real(x)); t.imag(t.imag() - imag(x));
const float m = abs(t) + cuda::std::abs(t) + arg(t) + norm(t) + cuda::std::sqrt(h) + cuda::std::abs(h);
t = t + conj(t) + proj(t) + cuda::std::polar(m, 0.5f) + cuda::std::polar(2.0f);
t = t + exp(t) + log(t) + log10(t) + sqrt(t) + sin(t) + cos(t) + tan(t) + asin(t) + acos(t)
  + atan(t) + sinh(t) + cosh(t) + tanh(t) + asinh(t) + acosh(t) + atanh(t);
t = pow(t, x) + pow(t, 2.0f) + pow(2.0f, t) + cuda::std::pow(t, 3.0f);
const cuda::std::complex<double> wide = t;
const cuda::std::complex<double> d = wide * t + cuda::std::exp(wide);
z = static_cast<cuda::std::complex<float>>(d) + (t == x ? 1.0f : 0.0f) + (t != 0.0f ? I : -I);
if (cuda::std::isnan(z.real()) || !cuda::std::isfinite(h)) z = cuda::std::complex<float>(cuda::std::numeric_limits<float>::max());
)";

}  // namespace

TEST_CASE("templates: complex operands compile with culua's complex, not libcu++",
          "[rtc][template]") {
  const auto sig = rtc::parse_template_signature("c64 x, c64 w, f32 h -> c64 z", false);
  rtc::ElementwiseSpec flat;
  flat.operands =
      operands({{DType::C64, ""}, {DType::C64, "s"}, {DType::F32, "s"}, {DType::C64, ""}});
  flat.vector = 2;
  rtc::ElementwiseSpec strided = flat;
  strided.vector = 1;
  strided.ndim = 2;
  // f16 and bf16 beside complex: CUDA's headers after the complex prelude's std shims.
  rtc::ElementwiseSpec half = flat;
  half.operands =
      operands({{DType::C64, ""}, {DType::C64, "s"}, {DType::F16, ""}, {DType::C64, ""}});
  rtc::ElementwiseSpec bfloat = half;
  bfloat.operands[2].dtype = DType::BF16;
  for (const auto* spec : {&flat, &strided, &half, &bfloat}) {
    const std::string src = rtc::elementwise_source(sig, *spec, kComplexBody, "");
    CHECK_THAT(src, Catch::StartsWith("#line 1 \"culua_complex.cuh\""));
    CHECK_THAT(src, !Catch::Contains("cuda/std/"));
    // A sandboxed compile refuses "include" anywhere but culua's own CUDA header lines.
    std::string rest = src;
    for (const char* allowed : {"#include <cuda_fp16.h>\n", "#include <cuda_bf16.h>\n"}) {
      if (const size_t at = rest.find(allowed); at != std::string::npos) {
        rest.erase(at, std::string(allowed).size());
      }
    }
    CHECK_THAT(rest, !Catch::Contains("include"));
    // In the kernel cache's key the prelude is its hash: equal for equal sources, the kernel's
    // own text after it.
    const std::string key = rtc::template_key_source(src);
    CHECK_THAT(key, Catch::StartsWith("culua template; complex prelude sha256 "));
    CHECK(key.size() < 20000);
    CHECK_THAT(key, Catch::Contains("extern \"C\" __global__ void culua_elementwise("));
#ifdef CULUA_HAVE_CUDA
    if (!compiles(src, {"culua_elementwise"})) WARN("NVRTC is not available: not compiled");
#endif
  }
  // Real operands: no prelude, the source stands for itself in the key.
  const auto rsig = rtc::parse_template_signature("f32 x -> f32 y", false);
  rtc::ElementwiseSpec real;
  real.operands = operands({{DType::F32, ""}, {DType::F32, ""}});
  const std::string rsrc = rtc::elementwise_source(rsig, real, "y = x", "");
  CHECK_THAT(rsrc, !Catch::Contains("culua_complex"));
  CHECK(rtc::template_key_source(rsrc).empty());

  // A reduction over complex values, a complex accumulator of another width.
  const auto qsig = rtc::parse_template_signature("c64 x -> c128 y", true);
  rtc::ReductionSpec rs;
  rs.operands = operands({{DType::C64, ""}, {DType::C128, ""}});
  rs.acc = DType::C128;
  rs.kept = 1;
  rs.reduced = 1;
  const rtc::ReductionBodies bodies{"x * conj(x) + cuda::std::complex<double>(abs(x))", "a + b",
                                    "y = a / (double)n", "0", ""};
  const std::string qsrc = rtc::reduction_source(qsig, rs, bodies);
  CHECK_THAT(qsrc, Catch::StartsWith("#line 1 \"culua_complex.cuh\""));
  CHECK_THAT(qsrc, !Catch::Contains("cuda/std/"));
#ifdef CULUA_HAVE_CUDA
  compiles(qsrc, {"culua_reduce_block", "culua_reduce_thread", "culua_reduce_finish"});
#endif

  // A preamble that brings in libcu++ itself keeps libcu++'s complex (the two cannot coexist).
  const std::string lsrc =
      rtc::elementwise_source(sig, flat, "z = x * w + h", "#include <cuda/std/complex>\n");
  CHECK_THAT(lsrc, Catch::StartsWith("#include <cuda/std/complex>"));
  CHECK_THAT(lsrc, !Catch::Contains("culua_complex"));
  CHECK(rtc::template_key_source(lsrc).empty());
}
