#include "rtc/template_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "core/base/error.hpp"
#include "rtc/arguments.hpp"

namespace culua::detail::rtc {

KernelTemplate elementwise_template(std::string signature, std::string body) {
  KernelTemplate t;
  t.name = "elementwise";
  t.sig = parse_template_signature(signature, false);
  t.signature_text = std::move(signature);
  t.body = std::move(body);
  for (const auto& o : t.sig.outputs) t.reads_output.push_back(reads_variable(t.body, o.name));
  return t;
}

std::optional<std::string> default_reduction_map(const TemplateSignature& sig) {
  const TemplateParam* only = nullptr;
  int arrays = 0;
  for (const auto& p : sig.inputs) {
    if (p.raw) continue;
    ++arrays;
    only = &p;
  }
  if (arrays != 1) return std::nullopt;
  return only->name;
}

std::optional<std::string> default_reduction_post(const TemplateSignature& sig) {
  if (sig.outputs.size() != 1) return std::nullopt;
  return sig.outputs[0].name + " = a";
}

void TypeBindings::bind(const TemplateParam& p, DType t, const char* what) {
  if (const std::optional<DType> fixed = p.dtype()) {
    if (*fixed != t) {
      fail(ErrorKind::Type, "{} '{}' must be a {} array, got {} (convert with :astype(\"{}\"))",
           what, p.name, p.type, name(t), p.type);
    }
    return;
  }
  auto [it, inserted] = bound_.emplace(p.type, t);
  if (!inserted && it->second != t) {
    fail(ErrorKind::Type, "{} is {} from an earlier argument but {} from {} '{}'", p.type,
         name(it->second), name(t), what, p.name);
  }
}

DType TypeBindings::resolve(const TemplateParam& p, const char* what) const {
  if (const std::optional<DType> fixed = p.dtype()) return *fixed;
  auto it = bound_.find(p.type);
  if (it == bound_.end()) {
    fail(ErrorKind::Value,
         "cannot tell the dtype {} of {} '{}' from the arguments: pass an array for an input of "
         "type {}, or out=",
         p.type, what, p.name, p.type);
  }
  return it->second;
}

RtcRequest template_request(const KernelTemplate& t, const std::string& source,
                            const std::vector<std::string>& kernels) {
  RtcRequest r;
  r.source = source + kSignatureProbeSource;
  if (std::string key = template_key_source(source); !key.empty()) {
    r.key_source = std::move(key) + kSignatureProbeSource;
  }
  r.name = t.reduction ? "culua_reduction.cu" : "culua_elementwise.cu";
  r.options.assign(std::begin(kTemplateOptions), std::end(kTemplateOptions));
  r.options.insert(r.options.end(), t.options.begin(), t.options.end());
  for (const auto& k : kernels) {
    r.name_expressions.push_back(k);
    r.name_expressions.push_back(signature_probe(k));
  }
  return r;
}

void ArgumentWriter::put(const void* value, size_t size) {
  if (next_ >= k_.params().size() || k_.params()[next_].type.size != size) {
    fail(ErrorKind::Value, "internal error: parameter {} of generated kernel {} does not match",
         next_ + 1, k_.name());
  }
  std::memcpy(k_.slot(next_++), value, size);
}

void ArgumentWriter::scalar(const Scalar& v, DType t, const TemplateParam& p) {
  const std::string_view what = p.role;
  if (is_complex(t)) {
    const Scalar re = Scalar::real(v.kind == Scalar::Kind::Complex ? v.re : v.as_double());
    const Scalar im = Scalar::real(v.kind == Scalar::Kind::Complex ? v.im : 0.0);
    for (const Scalar& part : {re, im}) {
      encode_param(k_.params()[next_].type, part, k_.slot(next_), what);
      ++next_;
    }
    return;
  }
  if (next_ >= k_.params().size()) fail(ErrorKind::Value, "internal error: too few parameters");
  encode_param(k_.params()[next_].type, v, k_.slot(next_), what);
  ++next_;
}

void ArgumentWriter::done() {
  if (next_ != k_.params().size()) {
    fail(ErrorKind::Value, "internal error: generated kernel {} takes {} parameters, got {}",
         k_.name(), k_.params().size(), next_);
  }
}

namespace {

uint32_t blocks_for(int64_t work, int threads, int cap) {
  const int64_t b = (work + threads - 1) / threads;
  return static_cast<uint32_t>(std::clamp<int64_t>(b, 1, cap));
}

const TemplateParam& param_of(const KernelTemplate& t, size_t k) {
  const size_t nin = t.sig.inputs.size();
  return k < nin ? t.sig.inputs[k] : t.sig.outputs[k - nin];
}

// Pointers of the non-scalar operands, then the values of the scalar inputs.
void write_operands(ArgumentWriter& w, const KernelTemplate& t,
                    const std::vector<OperandSpec>& spec,
                    const std::vector<CallOperand>& operands) {
  for (const CallOperand& o : operands) {
    if (!o.scalar) w.put(o.view.data);
  }
  for (size_t i = 0; i < t.sig.inputs.size(); ++i) {
    if (operands[i].scalar) w.scalar(operands[i].value, spec[i].dtype, t.sig.inputs[i]);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Elementwise calls.

ElementwisePlan plan_elementwise(const KernelTemplate& t, const std::vector<CallOperand>& operands,
                                 const Shape& shape, const TypeBindings& types) {
  const size_t nin = t.sig.inputs.size();
  ElementwisePlan plan;
  plan.n = checked_numel(shape, 1);
  ElementwiseSpec& spec = plan.spec;
  std::vector<StridedView>& views = plan.views;
  spec.operands.reserve(operands.size());
  views.reserve(operands.size());
  for (size_t k = 0; k < operands.size(); ++k) {
    const CallOperand& o = operands[k];
    const TemplateParam& p = param_of(t, k);
    OperandSpec os;
    os.dtype = o.scalar ? types.resolve(p, "input") : o.view.dtype;
    os.scalar = o.scalar;
    os.raw = p.raw;
    os.load = k >= nin && t.reads_output[k - nin];
    spec.operands.push_back(os);
    if (o.scalar || p.raw) continue;
    const StridedView& v = o.view;
    // Broadcast to the output shape: leading dimensions added, size-1 dimensions get stride 0.
    StridedView b;
    b.data = v.data;
    b.dtype = v.dtype;
    b.ndim = shape.ndim;
    b.size = plan.n;
    const int lead = shape.ndim - v.ndim;
    for (int d = 0; d < shape.ndim; ++d) {
      b.shape[d] = shape[d];
      b.strides[d] = d < lead || v.shape[d - lead] == 1 ? 0 : v.strides[d - lead];
    }
    views.push_back(b);
  }
  if (!views.empty()) coalesce(views.data(), static_cast<int>(views.size()));
  const int ndim = views.empty() ? 0 : views[0].ndim;
  bool flat = ndim == 0;
  if (ndim == 1) {
    flat = true;
    for (const auto& v : views) flat = flat && v.strides[0] == 1;
  }
  if (flat) {
    size_t widest = 1;
    for (const auto& v : views) widest = std::max(widest, itemsize(v.dtype));
    int vec = static_cast<int>(16 / widest);
    for (const auto& v : views) {
      if (reinterpret_cast<uintptr_t>(v.data) % (static_cast<size_t>(vec) * itemsize(v.dtype))) {
        vec = 1;
      }
    }
    spec.vector = vec;  // sizes below one vector run in the tail loop
  } else {
    spec.ndim = ndim;
    int64_t max_offset = plan.n;
    for (const auto& v : views) {
      int64_t off = 0;
      for (int d = 0; d < v.ndim; ++d) off += (v.shape[d] - 1) * std::abs(v.strides[d]);
      max_offset = std::max(max_offset, off);
    }
    spec.index32 = max_offset < (int64_t{1} << 31);
  }
  // The key: a few appends, not a format (it is built on every call).
  plan.key.reserve(8 * spec.operands.size() + 8);
  for (const auto& o : spec.operands) {
    plan.key += name(o.dtype);
    if (o.scalar) plan.key += 's';
    if (o.raw) plan.key += 'r';
    if (o.load) plan.key += 'l';
    plan.key += ',';
  }
  plan.key += 'v';
  plan.key += std::to_string(spec.vector);
  plan.key += 'd';
  plan.key += std::to_string(spec.ndim);
  if (spec.index32) plan.key += 'i';
  return plan;
}

void elementwise_fingerprint(const std::vector<CallOperand>& operands, const Shape& shape,
                             std::vector<int64_t>& out) {
  out.clear();
  out.push_back(shape.ndim);
  for (int d = 0; d < shape.ndim; ++d) out.push_back(shape[d]);
  for (const CallOperand& o : operands) {
    // A scalar's dtype is the signature's, or a placeholder's that the arrays' dtypes bind.
    if (o.scalar) {
      out.push_back(-1);
      continue;
    }
    const StridedView& v = o.view;
    out.push_back(static_cast<int64_t>(v.dtype) | static_cast<int64_t>(v.ndim) << 8 |
                  static_cast<int64_t>(reinterpret_cast<uintptr_t>(v.data) % 16) << 16);
    for (int d = 0; d < v.ndim; ++d) {
      out.push_back(v.shape[d]);
      out.push_back(v.strides[d]);
    }
  }
}

std::string elementwise_source(const KernelTemplate& t, const ElementwisePlan& plan) {
  return elementwise_source(t.sig, plan.spec, t.body, t.bodies.preamble);
}

LaunchDims elementwise_dims(const ElementwisePlan& plan, const DeviceInfo& device) {
  LaunchDims d;
  d.block[0] = 256;
  d.grid[0] = blocks_for(plan.n / plan.spec.vector, 256,
                         device.sm_count * (device.max_threads_per_sm / 256));
  return d;
}

void write_elementwise_arguments(ArgumentWriter& w, const KernelTemplate& t,
                                 const ElementwisePlan& plan,
                                 const std::vector<CallOperand>& operands) {
  write_operands(w, t, plan.spec.operands, operands);
  w.put(static_cast<long long>(plan.n));
  if (plan.spec.ndim > 0) {
    for (int d = 0; d < plan.spec.ndim; ++d) w.put(static_cast<long long>(plan.views[0].shape[d]));
    for (const auto& v : plan.views) {
      for (int d = 0; d < plan.spec.ndim; ++d) w.put(static_cast<long long>(v.strides[d]));
    }
  }
  w.done();
}

// ---------------------------------------------------------------------------------------------
// Reduction calls.

Shape reduction_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (int d = 0; d < shape.ndim; ++d) {
    if (!reduced[static_cast<size_t>(d)]) {
      out.push(shape[d]);
    } else if (keepdims) {
      out.push(1);
    }
  }
  return out;
}

ReductionPlan plan_reduction(const KernelTemplate& t, const std::vector<CallOperand>& operands,
                             const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                             const TypeBindings& types) {
  const size_t nin = t.sig.inputs.size();
  const int D = shape.ndim;
  ReductionPlan plan;
  ReductionSpec& spec = plan.spec;
  std::vector<std::vector<int64_t>> strides;  // array inputs, then outputs, over `shape`
  for (size_t k = 0; k < operands.size(); ++k) {
    const CallOperand& o = operands[k];
    const TemplateParam& p = param_of(t, k);
    OperandSpec os;
    os.dtype = o.scalar ? types.resolve(p, "input") : o.view.dtype;
    os.scalar = o.scalar;
    os.raw = p.raw;
    spec.operands.push_back(os);
    if (o.scalar || p.raw) continue;
    const StridedView& v = o.view;
    std::vector<int64_t> st(static_cast<size_t>(D), 0);
    if (k < nin) {
      const int lead = D - v.ndim;
      for (int d = lead; d < D; ++d) {
        st[static_cast<size_t>(d)] = v.shape[d - lead] == 1 ? 0 : v.strides[d - lead];
      }
    } else {
      int od = 0;
      for (int d = 0; d < D; ++d) {
        if (!reduced[static_cast<size_t>(d)]) {
          st[static_cast<size_t>(d)] = v.strides[od++];
        } else if (keepdims) {
          ++od;
        }
      }
    }
    strides.push_back(std::move(st));
  }
  if (t.acc.empty()) {
    spec.acc = spec.operands[nin].dtype;
    if (spec.acc == DType::F16 || spec.acc == DType::BF16) spec.acc = DType::F32;
  } else {
    TemplateParam acc;
    acc.name = "acc";
    acc.type = t.acc;
    spec.acc = types.resolve(acc, "accumulator");
  }
  for (size_t k = 0; k < nin && plan.first_array < 0; ++k) {
    if (!spec.operands[k].scalar && !spec.operands[k].raw) plan.first_array = static_cast<int>(k);
  }
  plan.layout = merge_reduce_dims(shape, reduced, strides);
  spec.kept = static_cast<int>(plan.layout.kept_sizes.size());
  spec.reduced = static_cast<int>(plan.layout.reduced_sizes.size());
  for (int64_t v : plan.layout.kept_sizes) plan.outputs *= v;
  for (int64_t v : plan.layout.reduced_sizes) plan.length *= v;
  plan.key = "acc";
  plan.key += name(spec.acc);
  plan.key += ',';
  for (const auto& o : spec.operands) {
    plan.key += name(o.dtype);
    if (o.scalar) plan.key += 's';
    if (o.raw) plan.key += 'r';
    plan.key += ',';
  }
  plan.key += 'k';
  plan.key += std::to_string(spec.kept);
  plan.key += 'r';
  plan.key += std::to_string(spec.reduced);
  return plan;
}

std::string reduction_source(const KernelTemplate& t, const ReductionPlan& plan) {
  return reduction_source(t.sig, plan.spec, t.bodies);
}

ReductionLaunch reduction_launch(const ReductionPlan& plan, const DeviceInfo& device) {
  const ReductionSpec& spec = plan.spec;
  const int sms = std::max(1, device.sm_count);
  const int64_t O = plan.outputs, N = plan.length;
  // Blocks along contiguous memory, threads across outputs otherwise; split long reductions.
  ReductionLaunch l;
  const bool along =
      spec.reduced > 0 && plan.first_array >= 0 &&
      std::abs(plan.layout.reduced_strides[static_cast<size_t>(plan.first_array)].back()) == 1;
  l.block_mode = spec.reduced > 0 && (along || O < int64_t{sms} * 8);
  int64_t G = 1;
  if (l.block_mode) {
    const int64_t target = int64_t{sms} * 8;
    if (O < target) {
      G = std::clamp<int64_t>((target + O - 1) / O, 1, std::max<int64_t>(1, N / 2048));
    }
  } else if (spec.reduced > 0) {
    const int64_t target = int64_t{sms} * 2048;
    if (O < target) G = std::clamp<int64_t>((target + O - 1) / O, 1, std::max<int64_t>(1, N / 64));
  }
  l.splits = G;
  if (G > 1) l.partial_bytes = static_cast<size_t>(O * G) * itemsize(spec.acc);
  l.main.block[0] = kReductionBlock;
  l.main.grid[0] =
      l.block_mode ? blocks_for(O * G, 1, sms * 32) : blocks_for(O * G, kReductionBlock, sms * 8);
  l.finish.block[0] = kReductionBlock;
  l.finish.grid[0] = blocks_for(O, 1, sms * 32);
  return l;
}

void write_reduction_arguments(ArgumentWriter& w, const KernelTemplate& t,
                               const ReductionPlan& plan, const ReductionLaunch& launch,
                               const std::vector<CallOperand>& operands, void* partial) {
  const size_t nin = t.sig.inputs.size();
  const ReduceLayout& l = plan.layout;
  write_operands(w, t, plan.spec.operands, operands);
  w.put(static_cast<long long>(plan.outputs));
  w.put(static_cast<long long>(plan.length));
  w.put(static_cast<long long>(launch.splits));
  w.put(launch.splits > 1 ? partial : static_cast<void*>(nullptr));
  for (int64_t v : l.kept_sizes) w.put(static_cast<long long>(v));
  for (int64_t v : l.reduced_sizes) w.put(static_cast<long long>(v));
  size_t a = 0;
  for (size_t i = 0; i < nin; ++i) {
    if (plan.spec.operands[i].scalar || plan.spec.operands[i].raw) continue;
    for (int64_t v : l.kept_strides[a]) w.put(static_cast<long long>(v));
    for (int64_t v : l.reduced_strides[a]) w.put(static_cast<long long>(v));
    ++a;
  }
  for (size_t i = nin; i < operands.size(); ++i, ++a) {
    for (int64_t v : l.kept_strides[a]) w.put(static_cast<long long>(v));
  }
  w.done();
}

void write_reduction_finish_arguments(ArgumentWriter& w, const KernelTemplate& t,
                                      const ReductionPlan& plan, const ReductionLaunch& launch,
                                      const std::vector<CallOperand>& operands,
                                      const void* partial) {
  const size_t nin = t.sig.inputs.size();
  const size_t nout = operands.size() - nin;
  const ReduceLayout& l = plan.layout;
  for (size_t i = nin; i < operands.size(); ++i) w.put(operands[i].view.data);
  for (size_t i = 0; i < nin; ++i) {
    if (operands[i].scalar) {
      w.scalar(operands[i].value, plan.spec.operands[i].dtype, t.sig.inputs[i]);
    }
  }
  w.put(static_cast<long long>(plan.outputs));
  w.put(static_cast<long long>(plan.length));
  w.put(static_cast<long long>(launch.splits));
  w.put(partial);
  for (int64_t v : l.kept_sizes) w.put(static_cast<long long>(v));
  for (size_t i = 0; i < nout; ++i) {
    for (int64_t v : l.kept_strides[l.kept_strides.size() - nout + i]) {
      w.put(static_cast<long long>(v));
    }
  }
  w.done();
}

}  // namespace culua::detail::rtc
