#include "rtc/rtc_kernel.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/base/error.hpp"
#include "rtc/arguments.hpp"

namespace culua::detail::rtc {

namespace {

std::string dims_text(const uint32_t v[3]) {
  if (v[1] == 1 && v[2] == 1) return fmt::format("{}", v[0]);
  if (v[2] == 1) return fmt::format("{{{}, {}}}", v[0], v[1]);
  return fmt::format("{{{}, {}, {}}}", v[0], v[1], v[2]);
}

}  // namespace

void check_launch_dims(const LaunchDims& d, const DeviceInfo& device, int max_threads,
                       size_t static_shared, const std::string& kernel) {
  static constexpr const char* kAxis[3] = {"x", "y", "z"};
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (d.block[i] == 0 || d.grid[i] == 0) {
      fail(ErrorKind::Value, "{}: grid and block sizes must be at least 1 (grid {}, block {})",
           kernel, dims_text(d.grid), dims_text(d.block));
    }
    if (d.block[i] > static_cast<uint32_t>(device.max_block[i])) {
      fail(ErrorKind::Value, "{}: block {} is {}; the device allows at most {}", kernel, kAxis[i],
           d.block[i], device.max_block[i]);
    }
    if (d.grid[i] > static_cast<uint32_t>(device.max_grid[i])) {
      fail(ErrorKind::Value, "{}: grid {} is {}; the device allows at most {}", kernel, kAxis[i],
           d.grid[i], device.max_grid[i]);
    }
    threads *= d.block[i];
  }
  if (threads > static_cast<uint64_t>(device.max_threads_per_block)) {
    fail(ErrorKind::Value, "{}: a block of {} threads is more than the device's {}", kernel,
         threads, device.max_threads_per_block);
  }
  if (threads > static_cast<uint64_t>(max_threads)) {
    fail(ErrorKind::Value,
         "{}: a block of {} threads is more than this kernel can run ({}: its registers or "
         "__launch_bounds__ limit it)",
         kernel, threads, max_threads);
  }
  if (static_shared + d.shared > device.shared_per_block_optin) {
    fail(ErrorKind::Value,
         "{}: {} bytes of dynamic shared memory{} exceed the device's limit of {} bytes per block",
         kernel, d.shared,
         static_shared ? fmt::format(" plus {} static", static_shared) : std::string(),
         device.shared_per_block_optin);
  }
}

void require_run_time_kernels(const Backend& b) {
  if (b.kind() == BackendKind::Cuda) return;
  fail(ErrorKind::Unsupported,
       "run-time compiled CUDA kernels (cu.compile, cu.elementwise, cu.reduction) need a GPU; the "
       "{} backend cannot run CUDA source (run on a machine with an NVIDIA GPU, or use the "
       "built-in operations)",
       backend_name(b.kind()));
}

std::string describe_argument(size_t index, const KernelParam& p) {
  if (p.name.empty()) return fmt::format("argument {} ({})", index + 1, p.type.spelling);
  return fmt::format("argument {} ({}: {})", index + 1, p.name, p.type.spelling);
}

void check_pointer_argument(const ParamType& p, const Array& a, int device,
                            const std::string& what) {
  a.check_alive(what);
  if (a.location() != Location::Device) {
    fail(ErrorKind::Value, "{} must be a device array, got a {} host array: call to_device() first",
         what, location_name(a.location()));
  }
  if (a.device() != device) {
    fail(ErrorKind::Value, "{}: the array is on device {}, the launch on device {}", what,
         a.device(), device);
  }
  if (!pointer_accepts(p, a.dtype())) {
    fail(ErrorKind::Type, "{} takes {} arrays, got {}", what, accepted_dtypes(p), name(a.dtype()));
  }
  if (!a.is_contiguous()) {
    fail(ErrorKind::Value,
         "{}: the array is a non-contiguous view; a kernel sees only a pointer, so pass "
         "a:contiguous()",
         what);
  }
  const auto address = reinterpret_cast<uintptr_t>(a.data());
  if (p.pointee_align > 1 && address % p.pointee_align != 0) {
    fail(ErrorKind::Value, "{}: the address is not {}-byte aligned, as {} requires", what,
         p.pointee_align, p.spelling);
  }
}

const char kSignatureProbeSource[] =
    "\ntemplate <class culua_F> __global__ void culua_signature_probe_(culua_F) {}\n";

std::string signature_probe(const std::string& expression) {
  return "culua_signature_probe_<decltype(&" + expression + ")>";
}

std::vector<KernelParam> resolve_params(const RtcBinary& binary, const std::string& expression,
                                        const KernelDecl* decl) {
  std::optional<std::vector<std::string>> types;
  if (const std::string* probe = binary.symbol(signature_probe(expression))) {
    if (auto fn = template_argument(demangle(*probe))) {
      types = demangled_parameters(*fn);
    }
  }
  if (!types) {
    if (const std::string* symbol = binary.symbol(expression)) {
      if (const std::string d = demangle(*symbol); !d.empty()) {
        types = demangled_parameters(d);
      }
    }
  }
  if (!types && decl && !decl->is_template) types = decl->param_types;
  if (!types) fail(ErrorKind::Value, "cannot find the parameter types of kernel '{}'", expression);
  std::vector<KernelParam> params;
  params.reserve(types->size());
  const bool named = decl && decl->param_names.size() == types->size();
  for (size_t i = 0; i < types->size(); ++i) {
    params.push_back(
        KernelParam{named ? decl->param_names[i] : std::string(), parse_type((*types)[i])});
  }
  return params;
}

RtcKernel::RtcKernel(std::shared_ptr<const RtcBinary> binary, std::string expression,
                     std::string symbol, std::vector<KernelParam> params)
    : binary_(std::move(binary)),
      expression_(std::move(expression)),
      symbol_(std::move(symbol)),
      params_(std::move(params)),
      slots_(params_.size()) {
  argv_.reserve(params_.size());
  for (auto& s : slots_) argv_.push_back(s.data());
}

std::string RtcKernel::signature() const {
  std::string s = expression_ + "(";
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i) s += ", ";
    s += params_[i].type.spelling;
    if (!params_[i].name.empty()) s += " " + params_[i].name;
  }
  return s + ")";
}

RtcKernel::OnDevice& RtcKernel::load(Backend& backend, int device) {
  if (device < 0) fail(ErrorKind::Index, "device {} does not exist", device);
  OnDevice k;
  k.info = backend.device_info(device);
  std::shared_ptr<RtcModule> module = backend.load_module(*binary_, device);
  k.function = module->function(symbol_);
  k.attributes = k.function->attributes();
  k.reserved_shared = k.attributes.max_dynamic_shared;

  // The driver knows the real parameter layout: it must be the one the declaration gives, or
  // culua would fill the wrong bytes.
  std::vector<ParamLayout> layout;
  bool known = true;
  for (const auto& p : params_) known = known && p.type.kind != ParamKind::Unsupported;
  if (known && k.function->parameter_layout(params_.size(), layout)) {
    bool same = layout.size() == params_.size();
    size_t offset = 0;
    for (size_t i = 0; same && i < params_.size(); ++i) {
      const auto& t = params_[i].type;
      offset = (offset + t.align - 1) / t.align * t.align;
      same = layout[i].size == t.size && layout[i].offset == offset;
      offset += t.size;
    }
    if (!same) {
      std::string ours, theirs;
      for (const auto& p : params_)
        ours += fmt::format("{}{}", ours.empty() ? "" : ", ", p.type.size);
      for (const auto& l : layout)
        theirs += fmt::format("{}{}", theirs.empty() ? "" : ", ", l.size);
      fail(ErrorKind::Value,
           "{}: the compiled kernel's parameters have sizes ({}) but its declaration gives ({}); "
           "culua cannot check its arguments",
           expression_, theirs, ours);
    }
  }
  if (devices_.size() <= static_cast<size_t>(device))
    devices_.resize(static_cast<size_t>(device) + 1);
  devices_[static_cast<size_t>(device)] = std::move(k);
  return devices_[static_cast<size_t>(device)];
}

void RtcKernel::prepare_slow(OnDevice& k, const LaunchDims& d) {
  check_launch_dims(d, k.info, k.attributes.max_threads_per_block, k.attributes.static_shared,
                    expression_);
  if (d.shared > k.reserved_shared) {
    k.function->reserve_dynamic_shared(d.shared);
    k.reserved_shared = d.shared;
  }
  k.checked = d;
  k.have_checked = true;
}

}  // namespace culua::detail::rtc
