// One kernel of a run-time compiled module: its parameters (from the declaration), its function
// on each device (loaded on first use and checked against the driver's parameter layout), the
// checks of a launch configuration, and the parameter value slots that a launch fills in place
// (nothing is allocated per launch).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/backend/rtc_types.hpp"
#include "core/model/array.hpp"
#include "rtc/kernel_signature.hpp"
#include "rtc/type_parser.hpp"

namespace culua::detail::rtc {

struct KernelParam {
  std::string name;  // "" when the declaration does not name it
  ParamType type;
};

// Throws Error(Value) unless `d` fits the device and the kernel: every dimension at least 1,
// block within the device's per-dimension limits and `max_threads` (the kernel's own limit) in
// all, grid within the device's limits, static + dynamic shared memory within the opt-in limit.
void check_launch_dims(const LaunchDims& d, const DeviceInfo& device, int max_threads,
                       size_t static_shared, const std::string& kernel);

// Throws unless array `a` may be passed to pointer parameter `p` of a launch on `device`: alive,
// device memory on that device, a dtype the pointer takes, contiguous, address aligned for the
// pointee. `what` starts the message ("saxpy: argument 2 (x: float const*)").
void check_pointer_argument(const ParamType& p, const Array& a, int device,
                            const std::string& what);

// Throws Error(Unsupported) saying run-time CUDA kernels need a GPU, unless `b` is the CUDA
// backend.
void require_run_time_kernels(const Backend& b);

// "argument 2 (x: float const*)", for messages.
std::string describe_argument(size_t index, const KernelParam& p);

// Parameter types come from the compiler: appended to the source, a template kernel instantiated
// with the kernel's function pointer type has a mangled name that spells every parameter's type
// exactly (typedefs resolved, also for extern "C" kernels).
extern const char kSignatureProbeSource[];
std::string signature_probe(const std::string& expression);  // its name expression

// The parameters of kernel `expression` of `binary`: types from the probe's symbol, else from the
// kernel's own mangled symbol, else from the declaration's text; names from `decl` (may be null).
// Throws Error(Value) when the types cannot be found.
std::vector<KernelParam> resolve_params(const RtcBinary& binary, const std::string& expression,
                                        const KernelDecl* decl);

class RtcKernel {
 public:
  RtcKernel(std::shared_ptr<const RtcBinary> binary, std::string expression, std::string symbol,
            std::vector<KernelParam> params);

  const std::string& name() const { return expression_; }
  const std::string& symbol() const { return symbol_; }
  const std::vector<KernelParam>& params() const { return params_; }
  const RtcBinary& binary() const { return *binary_; }
  // "saxpy(float a, float const* x, float* y, int n)"
  std::string signature() const;

  struct OnDevice {
    std::shared_ptr<RtcFunction> function;
    KernelAttributes attributes;
    DeviceInfo info;
    size_t reserved_shared = 48 << 10;  // dynamic shared memory allowed without asking again
    LaunchDims checked;                 // the last configuration that passed the checks
    bool have_checked = false;
  };
  // The kernel on `device`, loaded on first use.
  OnDevice& on_device(Backend& backend, int device) {
    if (static_cast<size_t>(device) < devices_.size() &&
        devices_[static_cast<size_t>(device)].function) {
      return devices_[static_cast<size_t>(device)];
    }
    return load(backend, device);
  }
  // check_launch_dims, then raises the kernel's dynamic shared memory limit when `d` asks for
  // more than it allows now. A configuration equal to the last one that passed is not checked
  // again (launch loops repeat theirs).
  void prepare(OnDevice& k, const LaunchDims& d) {
    if (k.have_checked && same(d, k.checked)) return;
    prepare_slow(k, d);
  }

  // Where the value of parameter i goes before a launch, and the pointer array to launch with.
  void* slot(size_t i) { return slots_[i].data(); }
  void** argv() { return argv_.data(); }

 private:
  static bool same(const LaunchDims& a, const LaunchDims& b) {
    return a.grid[0] == b.grid[0] && a.grid[1] == b.grid[1] && a.grid[2] == b.grid[2] &&
           a.block[0] == b.block[0] && a.block[1] == b.block[1] && a.block[2] == b.block[2] &&
           a.shared == b.shared;
  }
  void prepare_slow(OnDevice& k, const LaunchDims& d);
  OnDevice& load(Backend& backend, int device);

  std::shared_ptr<const RtcBinary> binary_;
  std::string expression_;
  std::string symbol_;
  std::vector<KernelParam> params_;
  std::vector<std::array<uint64_t, 2>> slots_;  // 16 bytes fit every parameter type
  std::vector<void*> argv_;
  std::vector<OnDevice> devices_;
};

}  // namespace culua::detail::rtc
