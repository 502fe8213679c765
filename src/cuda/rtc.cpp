#include "cuda/rtc.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/model/stream.hpp"
#include "cuda/driver_api.hpp"
#include "cuda/nvrtc_api.hpp"
#include "cuda/scoped.hpp"
#include "rtc/kernel_cache.hpp"

namespace culua::detail::cuda {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void check_nvrtc(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) {
    fail(ErrorKind::Device, "{} failed: {}", call, nvrtc_api().get_error_string(r));
  }
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The folder with the toolkit's headers (cuda_fp16.h, cuComplex.h), next to the NVRTC library.
const std::string& cuda_include_dir() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    std::vector<std::filesystem::path> candidates;
    const std::filesystem::path lib = nvrtc_api().library;
    if (lib.has_parent_path()) candidates.push_back(lib.parent_path().parent_path() / "include");
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* home = std::getenv(var); home && *home) {
        candidates.push_back(std::filesystem::path(home) / "include");
      }
    }
    candidates.emplace_back("/usr/local/cuda/include");
    for (const auto& c : candidates) {
      std::error_code ec;
      if (std::filesystem::exists(c / "cuda_fp16.h", ec)) {
        dir = c.string();
        return;
      }
    }
  });
  return dir;
}

struct Versions {
  int nvrtc_major = 0, nvrtc_minor = 0, driver = 0;
  std::vector<int> archs;  // supported by NVRTC, ascending
};

const Versions& versions() {
  static std::once_flag once;
  static Versions v;
  std::call_once(once, [] {
    const NvrtcApi& nv = nvrtc_api();
    nv.version(&v.nvrtc_major, &v.nvrtc_minor);
    int n = 0;
    if (nv.num_supported_archs(&n) == NVRTC_SUCCESS && n > 0) {
      v.archs.resize(static_cast<size_t>(n));
      nv.supported_archs(v.archs.data());
      std::sort(v.archs.begin(), v.archs.end());
    }
    if (cudaDriverGetVersion(&v.driver) != cudaSuccess) cudaGetLastError();
  });
  return v;
}

bool has_option(const std::vector<std::string>& options, std::initializer_list<const char*> names) {
  for (const std::string& o : options) {
    for (const char* n : names) {
      if (starts_with(o, n)) return true;
    }
  }
  return false;
}

// The architecture option: the device's own (a cubin) when NVRTC knows it, else PTX for the newest
// one NVRTC knows, which the driver compiles for the device.
std::string arch_option(const DeviceInfo& device, bool* ptx) {
  const int cc = device.cc_major * 10 + device.cc_minor;
  const std::vector<int>& archs = versions().archs;
  *ptx = false;
  if (archs.empty() || std::find(archs.begin(), archs.end(), cc) != archs.end()) {
    return fmt::format("-arch=sm_{}", cc);
  }
  int best = archs.front();
  for (int a : archs) {
    if (a <= cc) best = a;
  }
  *ptx = true;
  return fmt::format("-arch=compute_{}", best);
}

std::string program_log(nvrtcProgram prog) {
  const NvrtcApi& nv = nvrtc_api();
  size_t n = 0;
  if (nv.get_program_log_size(prog, &n) != NVRTC_SUCCESS || n <= 1) return {};
  std::string log(n, '\0');
  if (nv.get_program_log(prog, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// A program exists only where NVRTC was loaded: nvrtc_api() does not throw here.
struct DestroyProgram {
  void operator()(nvrtcProgram p) const noexcept { nvrtc_api().destroy_program(&p); }
};
using UniqueProgram = UniqueHandle<nvrtcProgram, DestroyProgram>;

rtc::CacheEntry run_nvrtc(const RtcRequest& request, const std::vector<std::string>& options,
                          bool ptx) {
  const NvrtcApi& nv = nvrtc_api();
  nvrtcProgram raw = nullptr;
  check_nvrtc(
      nv.create_program(&raw, request.source.c_str(), request.name.c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  const UniqueProgram program(raw);
  const nvrtcProgram prog = program.get();
  for (const std::string& e : request.name_expressions) {
    check_nvrtc(nv.add_name_expression(prog, e.c_str()), "nvrtcAddNameExpression");
  }
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const std::string& o : options) argv.push_back(o.c_str());
  const auto t0 = Clock::now();
  const nvrtcResult r = nv.compile_program(prog, static_cast<int>(argv.size()), argv.data());
  rtc::CacheEntry e;
  e.compile_ms = ms_since(t0);
  e.log = program_log(prog);
  if (r != NVRTC_SUCCESS) {
    fail(ErrorKind::Value, "compiling {} failed ({}):\n{}", request.name, nv.get_error_string(r),
         e.log);
  }
  size_t size = 0;
  if (ptx) {
    check_nvrtc(nv.get_ptx_size(prog, &size), "nvrtcGetPTXSize");
    e.image.resize(size);
    check_nvrtc(nv.get_ptx(prog, e.image.data()), "nvrtcGetPTX");
  } else {
    check_nvrtc(nv.get_cubin_size(prog, &size), "nvrtcGetCUBINSize");
    e.image.resize(size);
    check_nvrtc(nv.get_cubin(prog, e.image.data()), "nvrtcGetCUBIN");
  }
  e.ptx = ptx;
  for (const std::string& expr : request.name_expressions) {
    const char* lowered = nullptr;
    check_nvrtc(nv.get_lowered_name(prog, expr.c_str(), &lowered), "nvrtcGetLoweredName");
    e.lowered_names.emplace_back(expr, lowered ? lowered : "");
  }
  return e;
}

}  // namespace

RtcBinary compile(const RtcRequest& request, const DeviceInfo& device,
                  const CachedImageCheck& usable) {
  const auto t0 = Clock::now();
  const Versions& v = versions();
  std::vector<std::string> options = request.options;
  bool ptx = false;
  std::string arch;
  if (has_option(options, {"-arch", "--gpu-architecture"})) {
    for (const std::string& o : options) {
      if (starts_with(o, "-arch") || starts_with(o, "--gpu-architecture")) arch = o;
    }
    ptx = arch.find("compute_") != std::string::npos;
  } else {
    arch = arch_option(device, &ptx);
    options.push_back(arch);
  }
  if (!has_option(options, {"-std", "--std"})) options.emplace_back("-std=c++17");
  if (!has_option(options, {"-lineinfo", "--generate-line-info", "-G", "--device-debug"})) {
    options.emplace_back("-lineinfo");
  }
  for (const std::string& dir : request.include_paths) options.push_back("-I" + dir);
  if (const std::string& inc = cuda_include_dir(); !inc.empty()) {
    options.push_back("-I" + inc);
    // libcu++, CUB and Thrust (cuda/std/complex, cub/cub.cuh) live in cccl/ since CUDA 13.
    std::error_code ec;
    if (std::filesystem::is_directory(inc + "/cccl", ec)) options.push_back("-I" + inc + "/cccl");
  }

  // Everything the binary depends on. The toolkit's headers come with the NVRTC version.
  std::string key =
      fmt::format("culua-rtc 1\nnvrtc {}.{}\ndriver {}\n", v.nvrtc_major, v.nvrtc_minor, v.driver);
  for (const std::string& o : options) key += "option " + o + "\n";
  for (const std::string& e : request.name_expressions) key += "expression " + e + "\n";
  key += "includes\n" + rtc::fingerprint_directories(request.include_paths) + "\n";
  key += "name " + request.name + "\nsource\n";
  key += request.key_source.empty() ? request.source : request.key_source;

  RtcBinary out;
  out.key = key;
  out.arch = arch.substr(arch.find('=') == std::string::npos ? 0 : arch.find('=') + 1);
  const std::string directory = request.use_cache ? rtc::KernelCache::default_directory() : "";
  const rtc::KernelCache cache(directory,
                               directory.empty() ? 0 : rtc::cache_max_bytes_from_environment());
  if (cache.enabled()) {
    out.cache_path = cache.path_for(key);
    if (auto hit = cache.load(key, out.cache_path)) {
      RtcBinary cached = out;
      cached.image = std::move(hit->image);
      cached.ptx = hit->ptx;
      cached.lowered_names = std::move(hit->lowered_names);
      cached.log = std::move(hit->log);
      cached.compile_ms = hit->compile_ms;
      cached.cache = CacheOutcome::Hit;
      if (!usable || usable(cached)) {
        cached.elapsed_ms = ms_since(t0);
        return cached;
      }
      // The driver refused the cached image: not the user's error. Compile afresh; the store
      // below replaces the file (removed first, in case this compile fails).
      cache.remove(key);
    }
  }
  rtc::CacheEntry e = run_nvrtc(request, options, ptx);
  if (cache.enabled()) {
    std::string why;
    out.cache = cache.store(key, e, &why) ? CacheOutcome::Miss : CacheOutcome::Off;
    if (out.cache == CacheOutcome::Off) out.cache_path.clear();
  }
  out.image = std::move(e.image);
  out.ptx = e.ptx;
  out.lowered_names = std::move(e.lowered_names);
  out.log = std::move(e.log);
  out.compile_ms = e.compile_ms;
  out.elapsed_ms = ms_since(t0);
  return out;
}

namespace {

class CudaRtcFunction final : public RtcFunction {
 public:
  CudaRtcFunction(std::shared_ptr<RtcModule> module, CUfunction f, int device,
                  std::shared_ptr<Health> health)
      : module_(std::move(module)),
        f_(f),
        device_(device),
        health_(std::move(health)),
        launch_(driver_api().launch_kernel) {}

  int device() const override { return device_; }

  KernelAttributes attributes() override {
    const DeviceScope scope(device_, *health_);
    KernelAttributes a;
    a.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    a.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    a.static_shared = static_cast<size_t>(attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
    a.local = static_cast<size_t>(attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    a.constant = static_cast<size_t>(attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES));
    a.max_dynamic_shared =
        static_cast<size_t>(attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
    a.ptx_version = attribute(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    a.binary_version = attribute(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    return a;
  }

  bool parameter_layout(size_t count, std::vector<ParamLayout>& out) override {
    out.clear();
    const auto info = driver_api().func_get_param_info;
    if (!info) return false;
    const DeviceScope scope(device_, *health_);
    for (size_t i = 0; i < count; ++i) {
      size_t offset = 0, size = 0;
      const CUresult r = info(f_, i, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE) return true;  // past the kernel's last parameter
      if (r != CUDA_SUCCESS) return false;
      out.push_back(ParamLayout{offset, size});
    }
    return true;
  }

  void reserve_dynamic_shared(size_t bytes) override {
    const DeviceScope scope(device_, *health_);
    CULUA_CU_CHECK(*health_, driver_api().func_set_attribute(
                                 f_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(bytes)));
  }

  int max_active_blocks(int block_threads, size_t dynamic_shared) override {
    const DeviceScope scope(device_, *health_);
    int n = 0;
    CULUA_CU_CHECK(*health_,
                   driver_api().occupancy_max_active_blocks(&n, f_, block_threads, dynamic_shared));
    return n;
  }

  void launch(const LaunchDims& d, Stream& s, void** params, const LaunchSite& site) override {
    health_->check_usable();
    health_->note_launch("run-time kernel", site.text, site.version);
    const DeviceScope scope(device_, *health_);
    const CUresult r =
        launch_(f_, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2], d.shared,
                static_cast<CUstream>(s.native_handle()), params, nullptr);
    if (r != CUDA_SUCCESS) health_->check_driver(r, "cuLaunchKernel", __FILE__, __LINE__);
  }

 private:
  int attribute(CUfunction_attribute a) {
    int v = 0;
    CULUA_CU_CHECK(*health_, driver_api().func_get_attribute(&v, a, f_));
    return v;
  }

  std::shared_ptr<RtcModule> module_;  // keeps the code loaded
  CUfunction f_;
  int device_;
  std::shared_ptr<Health> health_;
  decltype(&::cuLaunchKernel) launch_;
};

class CudaRtcModule final : public RtcModule, public std::enable_shared_from_this<CudaRtcModule> {
 public:
  CudaRtcModule(UniqueModule m, std::shared_ptr<Health> health)
      : health_(std::move(health)), module_(std::move(m)) {}
  // The backend keeps every module it loaded until it is destroyed (queued launches need the
  // code), so this runs at shutdown, never while kernels from the module may be queued.
  ~CudaRtcModule() override {
    if (health_->poisoned.load()) static_cast<void>(module_.release());  // its context is gone
  }
  CudaRtcModule(const CudaRtcModule&) = delete;
  CudaRtcModule& operator=(const CudaRtcModule&) = delete;

  int device() const override { return module_.releaser().device; }

  std::shared_ptr<RtcFunction> function(const std::string& symbol) override {
    const DeviceScope scope(device(), *health_);
    RelaxedCaptureMode relaxed;  // kernels looked up inside a graph's function load the code
    CUfunction f = nullptr;
    const CUresult r = driver_api().module_get_function(&f, module_.get(), symbol.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) fail(ErrorKind::Value, "the module has no kernel '{}'", symbol);
    CULUA_CU_CHECK(*health_, r);
    return std::make_shared<CudaRtcFunction>(shared_from_this(), f, device(), health_);
  }

 private:
  std::shared_ptr<Health> health_;
  UniqueModule module_;  // unloaded on its device
};

}  // namespace

namespace {

// The image as the driver takes it: PTX is text ending in a zero byte.
std::vector<char> loadable_image(const RtcBinary& binary) {
  std::vector<char> image = binary.image;
  if (binary.ptx && (image.empty() || image.back() != '\0')) image.push_back('\0');
  return image;
}

}  // namespace

std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device,
                                       std::shared_ptr<Health> health) {
  health->check_usable();
  const std::vector<char> image = loadable_image(binary);
  CUmodule m = nullptr;
  CULUA_CU_CHECK(*health, driver_api().module_load_data(&m, image.data()));
  UniqueModule owned(m, UnloadModule{device});
  return std::make_shared<CudaRtcModule>(std::move(owned), std::move(health));
}

std::shared_ptr<RtcModule> load_cached_module(const RtcBinary& binary, int device,
                                              std::shared_ptr<Health> health) {
  health->check_usable();
  // NVRTC's cubin is an ELF file. The driver reads anything else as PTX text up to a zero byte,
  // which a corrupt file need not have: it would read past the image.
  constexpr char kElfMagic[] = {'\x7f', 'E', 'L', 'F'};
  if (!binary.ptx && (binary.image.size() < sizeof kElfMagic ||
                      std::memcmp(binary.image.data(), kElfMagic, sizeof kElfMagic) != 0)) {
    return nullptr;
  }
  const std::vector<char> image = loadable_image(binary);
  CUmodule m = nullptr;
  const CUresult r = driver_api().module_load_data(&m, image.data());
  if (r != CUDA_SUCCESS) {
    // Any other failure (an invalid image or PTX, no code for this GPU, a PTX version the driver
    // does not know, even running out of memory) is answered by compiling afresh: if loading the
    // fresh image fails too, that failure is reported.
    if (is_sticky(static_cast<cudaError_t>(r))) {
      health->check_driver(r, "cuModuleLoadData", __FILE__, __LINE__);
    }
    return nullptr;
  }
  UniqueModule owned(m, UnloadModule{device});
  return std::make_shared<CudaRtcModule>(std::move(owned), std::move(health));
}

}  // namespace culua::detail::cuda
