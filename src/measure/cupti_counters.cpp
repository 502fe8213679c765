#include "measure/cupti_counters.hpp"

#include "core/base/error.hpp"
#include "core/base/shared_library.hpp"

namespace culua::detail::measure {

const std::vector<std::string>& default_counter_metrics() {
  static const std::vector<std::string> names{
      "gpu__time_duration.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "l1tex__t_sector_hit_rate.pct",
      "lts__t_sector_hit_rate.pct",
      "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
      "sm__sass_thread_inst_executed_op_hfma_pred_on.sum",
      "sm__inst_executed_pipe_tensor.sum",
  };
  return names;
}

}  // namespace culua::detail::measure

#if defined(CULUA_HAVE_CUPTI)

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "measure/cupti_library.hpp"

namespace culua::detail::measure {

namespace {

constexpr const char* kPurpose = "hardware counters need";
// The range's name in the counter data; only one range is ever recorded.
constexpr const char* kRangeName = "culua";

// A CUPTI entry point and its name, for error messages.
template <class F>
struct Function {
  explicit Function(const char* symbol) : name(symbol), call(cupti_function<F>(symbol, kPurpose)) {}
  const char* name;
  F call;
};

// The profiler entry points, resolved once. The types come from CUPTI's headers; the symbols from
// the library loaded at run time (culua never links CUPTI).
struct Api {
  Function<decltype(&::cuptiProfilerInitialize)> initialize{"cuptiProfilerInitialize"};
  Function<decltype(&::cuptiProfilerDeviceSupported)> device_supported{
      "cuptiProfilerDeviceSupported"};
  Function<decltype(&::cuptiDeviceGetChipName)> chip_name{"cuptiDeviceGetChipName"};
  Function<decltype(&::cuptiProfilerGetCounterAvailability)> counter_availability{
      "cuptiProfilerGetCounterAvailability"};

  Function<decltype(&::cuptiProfilerHostInitialize)> host_initialize{"cuptiProfilerHostInitialize"};
  Function<decltype(&::cuptiProfilerHostDeinitialize)> host_deinitialize{
      "cuptiProfilerHostDeinitialize"};
  Function<decltype(&::cuptiProfilerHostGetBaseMetrics)> host_base_metrics{
      "cuptiProfilerHostGetBaseMetrics"};
  Function<decltype(&::cuptiProfilerHostGetSubMetrics)> host_sub_metrics{
      "cuptiProfilerHostGetSubMetrics"};
  Function<decltype(&::cuptiProfilerHostConfigAddMetrics)> host_add_metrics{
      "cuptiProfilerHostConfigAddMetrics"};
  Function<decltype(&::cuptiProfilerHostGetConfigImageSize)> host_config_image_size{
      "cuptiProfilerHostGetConfigImageSize"};
  Function<decltype(&::cuptiProfilerHostGetConfigImage)> host_config_image{
      "cuptiProfilerHostGetConfigImage"};
  Function<decltype(&::cuptiProfilerHostGetNumOfPasses)> host_passes{
      "cuptiProfilerHostGetNumOfPasses"};
  Function<decltype(&::cuptiProfilerHostEvaluateToGpuValues)> host_evaluate{
      "cuptiProfilerHostEvaluateToGpuValues"};

  Function<decltype(&::cuptiRangeProfilerEnable)> enable{"cuptiRangeProfilerEnable"};
  Function<decltype(&::cuptiRangeProfilerDisable)> disable{"cuptiRangeProfilerDisable"};
  Function<decltype(&::cuptiRangeProfilerGetCounterDataSize)> counter_data_size{
      "cuptiRangeProfilerGetCounterDataSize"};
  Function<decltype(&::cuptiRangeProfilerCounterDataImageInitialize)> counter_data_initialize{
      "cuptiRangeProfilerCounterDataImageInitialize"};
  Function<decltype(&::cuptiRangeProfilerSetConfig)> set_config{"cuptiRangeProfilerSetConfig"};
  Function<decltype(&::cuptiRangeProfilerStart)> start{"cuptiRangeProfilerStart"};
  Function<decltype(&::cuptiRangeProfilerStop)> stop{"cuptiRangeProfilerStop"};
  Function<decltype(&::cuptiRangeProfilerPushRange)> push_range{"cuptiRangeProfilerPushRange"};
  Function<decltype(&::cuptiRangeProfilerPopRange)> pop_range{"cuptiRangeProfilerPopRange"};
  Function<decltype(&::cuptiRangeProfilerDecodeData)> decode{"cuptiRangeProfilerDecodeData"};
  Function<decltype(&::cuptiRangeProfilerGetCounterDataInfo)> counter_data_info{
      "cuptiRangeProfilerGetCounterDataInfo"};
};

// A throwing initializer (CUPTI absent, or too old to have a symbol) leaves the static unset: the
// next call tries again.
const Api& api() {
  static const Api a;
  return a;
}

// The driver's functions this needs. culua's CUDA backend has libcuda loaded already; NOLOAD finds
// that copy (and fails rather than loading a second driver when it is absent).
struct Driver {
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
};

Driver load_driver() {
  const SharedLibrary lib = SharedLibrary::open_optional(
      "the CUDA driver (libcuda.so.1)", {"libcuda.so.1"}, SharedLibrary::Binding::AlreadyLoaded);
  if (!lib.loaded()) {
    fail(ErrorKind::Unsupported,
         "hardware counters: the CUDA driver (libcuda.so.1) is not loaded in this process");
  }
  Driver d;
  lib.resolve("cuCtxGetCurrent", d.ctx_get_current);
  lib.resolve("cuCtxGetDevice", d.ctx_get_device);
  lib.resolve("cuDeviceGet", d.device_get);
  lib.resolve("cuDeviceGetName", d.device_get_name);
  return d;  // the library stays open: the driver stays loaded for the life of the process
}

const Driver& driver() {
  static const Driver d = load_driver();
  return d;
}

// The device measured, for messages: "device 0 (NVIDIA H200, GH100)".
struct Target {
  int ordinal = 0;
  std::string name;  // the driver's name; empty when it could not say
  std::string chip;  // CUPTI's chip name; empty until known

  std::string text() const {
    std::string detail = name;
    if (!chip.empty()) detail += (detail.empty() ? "" : ", ") + chip;
    if (detail.empty()) return fmt::format("device {}", ordinal);
    return fmt::format("device {} ({})", ordinal, detail);
  }
};

[[noreturn]] void fail_cupti(CUptiResult r, const char* function, const Target& t) {
  const std::string text = cupti_result_text(static_cast<int>(r));
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      fail(ErrorKind::Unsupported,
           "hardware counters: no permission to read the GPU's performance counters "
           "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): {}",
           cupti_privileges_advice());
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      fail(ErrorKind::Unsupported,
           "hardware counters: {} is a virtual GPU whose hypervisor does not allow reading its "
           "performance counters ({}: {})",
           t.text(), function, text);
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      fail(ErrorKind::Unsupported,
           "hardware counters: the performance counters of {} are in use by another profiler "
           "(Nsight Compute or Nsight Systems, DCGM's profiling metrics, or another CUPTI client "
           "in this process) ({}: {}); measure without it",
           t.text(), function, text);
    case CUPTI_ERROR_NOT_INITIALIZED:
      fail(ErrorKind::Unsupported,
           "hardware counters: CUPTI's profiler could not start on {} ({}: {}): another profiler "
           "may hold it (Nsight Compute or Nsight Systems, another CUPTI client in this process), "
           "or the driver is older than this CUPTI needs",
           t.text(), function, text);
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      fail(ErrorKind::Unsupported,
           "hardware counters: this CUPTI does not know the chip of {} ({}: {}); a newer CUPTI "
           "may",
           t.text(), function, text);
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      fail(ErrorKind::Unsupported,
           "hardware counters: {} does not support CUPTI's range profiler ({}: {})", t.text(),
           function, text);
    default:
      fail(ErrorKind::Device, "hardware counters: {}: {}", function, text);
  }
}

// Calls a CUPTI function with its parameter block; any result but success throws.
template <class F, class P>
void check(const Function<F>& f, P& block, const Target& t) {
  const CUptiResult r = f.call(&block);
  if (r != CUPTI_SUCCESS) fail_cupti(r, f.name, t);
}

// A CUPTI parameter block: zeroed (pPriv and every field not set stay null), its size set. The
// size tells CUPTI which fields this build knows, so a newer CUPTI reads only those.
template <class P>
P params(size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

// The profiler's own initialization, once per process (it hooks into the driver; CUPTI keeps it
// until exit). Runs under the measurement lock, which serializes callers.
void initialize_profiler(const Api& a, const Target& t) {
  static bool initialized = false;
  if (initialized) return;
  auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(a.initialize, p, t);
  initialized = true;
}

// Asks CUPTI up front whether the device can be profiled at all, so that the error says why (a
// virtual GPU, confidential computing, WSL...) instead of some later call failing obscurely.
void require_supported_device(const Api& a, const Target& t, CUdevice dev) {
  auto p = params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = dev;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  check(a.device_supported, p, t);
  if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED &&
      p.isSupported != CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    return;
  }
  auto bad = [](CUpti_Profiler_Support_Level l) {
    return l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ||
           l == CUPTI_PROFILER_CONFIGURATION_DISABLED;
  };
  std::string why;
  auto add = [&why](const char* reason) { why += (why.empty() ? "" : "; ") + std::string(reason); };
  if (bad(p.architecture)) add("its architecture has no range profiler (Turing or later needed)");
  if (bad(p.sli)) add("SLI is on");
  if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
    add("it is a virtual GPU whose hypervisor has profiling turned off");
  } else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED) {
    add("it is a virtual GPU without profiling support");
  }
  if (bad(p.confidentialCompute)) add("confidential computing is on");
  if (bad(p.cmp)) add("it is a crypto mining processor (CMP)");
  if (bad(p.wsl)) add("WSL does not support it");
  fail(ErrorKind::Unsupported, "hardware counters: {} cannot be profiled: {}", t.text(),
       why.empty() ? std::string("CUPTI reports it unsupported") : why);
}

std::string chip_name(const Api& a, const Target& t) {
  auto p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<size_t>(t.ordinal);
  check(a.chip_name, p, t);
  if (!p.pChipName || !*p.pChipName) {
    fail(ErrorKind::Device, "hardware counters: cuptiDeviceGetChipName gave no name for {}",
         t.text());
  }
  return p.pChipName;
}

// Which counters the context can read now (some may be reserved, by MIG or another client), for
// the host object's scheduling. Taken before the range profiler is enabled: CUPTI may refuse it
// while a profiling session is active on the device.
std::vector<uint8_t> counter_availability(const Api& a, const Target& t, CUcontext ctx) {
  auto p = params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  check(a.counter_availability, p, t);  // no buffer: the size
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  if (image.empty()) return image;
  p.pCounterAvailabilityImage = image.data();
  check(a.counter_availability, p, t);
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

// The host object (metric names, scheduling, evaluation), deinitialized on every path.
struct HostDeleter {
  decltype(&::cuptiProfilerHostDeinitialize) deinitialize = nullptr;
  void operator()(CUpti_Profiler_Host_Object* h) const {
    auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = h;
    // A destructor cannot report a failure, and none would change anything: the object is gone.
    static_cast<void>(deinitialize(&p));
  }
};
using Host = std::unique_ptr<CUpti_Profiler_Host_Object, HostDeleter>;

Host make_host(const Api& a, const Target& t, const std::vector<uint8_t>& availability) {
  auto p = params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = t.chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  check(a.host_initialize, p, t);
  if (!p.pHostObject) {
    fail(ErrorKind::Device, "hardware counters: cuptiProfilerHostInitialize gave no object");
  }
  return Host(p.pHostObject, HostDeleter{a.host_deinitialize.call});
}

CUptiResult add_metrics(const Api& a, CUpti_Profiler_Host_Object* host,
                        std::vector<const char*>& names) {
  auto p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  p.pHostObject = host;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  return a.host_add_metrics.call(&p);
}

// The results by which CUPTI rejects a metric: a name the chip does not know
// (CUPTI_ERROR_INVALID_PARAMETER, whatever the header says), and one it knows but the context
// cannot collect, per the counter availability image (NVLink's and other device-level counters):
// CUPTI_ERROR_UNKNOWN, as seen on an H200 with CUPTI 13.0.
bool rejected_metric(CUptiResult r) {
  return r == CUPTI_ERROR_INVALID_PARAMETER || r == CUPTI_ERROR_INVALID_METRIC_NAME ||
         r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_UNKNOWN;
}

// A metric every chip of the range profiler counts: the check that a CUPTI which rejects every
// name with CUPTI_ERROR_UNKNOWN is not simply failing.
constexpr const char* kAlwaysCounted = "gpu__time_duration.sum";

// Which of `names` the chip counts. The host API's listings do not settle it (a base metric such
// as sm__throughput has properties yet cannot be collected without a rollup, and a listed metric
// may be unavailable to the context), so each name is added to a config of its own. One rejected
// name leaves a host object unusable (every later add fails with CUPTI_ERROR_UNKNOWN), so a fresh
// object follows each rejection; creating one costs about a millisecond once CUPTI has loaded the
// chip's tables.
std::vector<bool> probe_metrics(const Api& a, const Target& t,
                                const std::vector<uint8_t>& availability,
                                const std::vector<std::string>& names) {
  std::vector<bool> known(names.size(), false);
  bool any_known = false, any_unknown_error = false;
  Host scratch;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!scratch) scratch = make_host(a, t, availability);
    std::vector<const char*> one{names[i].c_str()};
    const CUptiResult r = add_metrics(a, scratch.get(), one);
    if (r == CUPTI_SUCCESS) {
      known[i] = any_known = true;
    } else if (rejected_metric(r)) {
      any_unknown_error = any_unknown_error || r == CUPTI_ERROR_UNKNOWN;
      scratch.reset();
    } else {
      fail_cupti(r, a.host_add_metrics.name, t);
    }
  }
  if (!any_known && any_unknown_error) {
    Host check_host = make_host(a, t, availability);
    std::vector<const char*> one{kAlwaysCounted};
    const CUptiResult r = add_metrics(a, check_host.get(), one);
    if (r != CUPTI_SUCCESS) fail_cupti(r, a.host_add_metrics.name, t);
  }
  return known;
}

// Levenshtein distance, for suggesting names close to a misspelt one.
size_t edit_distance(std::string_view x, std::string_view y) {
  std::vector<size_t> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= x.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= y.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[y.size()];
}

// The chip's metric names, for suggestions: base metrics (dram__bytes_read) by type, and each
// base's rollups and submetrics (.sum, .avg.pct_of_peak_sustained_elapsed). Best effort: a
// listing CUPTI refuses leaves fewer suggestions rather than replacing the error about the name.
class Catalog {
 public:
  Catalog(const Api& a, Host host) : api_(a), host_(std::move(host)) {
    for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
      auto p = params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
          CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
      p.pHostObject = host_.get();
      p.metricType = static_cast<CUpti_MetricType>(type);
      if (api_.host_base_metrics.call(&p) != CUPTI_SUCCESS || !p.ppMetricNames) continue;
      for (size_t i = 0; i < p.numMetrics; ++i) {
        if (!p.ppMetricNames[i]) continue;
        bases_.emplace_back(p.ppMetricNames[i], p.metricType);
        index_.emplace(bases_.back().first, p.metricType);
      }
    }
  }

  // Whether the chip has the metric `name` (a base metric with one of its rollups or submetrics),
  // collectable or not.
  bool knows(const std::string& name) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos) return false;
    const auto it = index_.find(name.substr(0, dot));
    if (it == index_.end()) return false;
    const std::vector<std::string> subs = submetrics(it->first, it->second);
    return std::find(subs.begin(), subs.end(), name.substr(dot)) != subs.end();
  }

  // Up to `count` full names close to `name`.
  std::vector<std::string> close_to(const std::string& name, size_t count) {
    const size_t dot = name.find('.');
    const std::string base = name.substr(0, dot);
    const std::string suffix = dot == std::string::npos ? std::string() : name.substr(dot);
    std::vector<std::pair<size_t, size_t>> ranked;  // (distance, index in bases_)
    ranked.reserve(bases_.size());
    for (size_t i = 0; i < bases_.size(); ++i) {
      ranked.emplace_back(edit_distance(base, bases_[i].first), i);
    }
    const size_t n = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n),
                      ranked.end());
    std::vector<std::string> out;
    if (n > 0 && ranked[0].first == 0) {
      // The base metric exists: the rollup or submetric is wrong, so offer this base's closest.
      const auto& [b, type] = bases_[ranked[0].second];
      for (const std::string& s : closest(submetrics(b, type), suffix, count)) out.push_back(b + s);
      return out;
    }
    for (size_t k = 0; k < n; ++k) {
      const auto& [b, type] = bases_[ranked[k].second];
      const std::vector<std::string> s = closest(submetrics(b, type), suffix, 1);
      out.push_back(s.empty() ? b : b + s[0]);
    }
    return out;
  }

 private:
  std::vector<std::string> submetrics(const std::string& base, CUpti_MetricType type) {
    auto p = params<CUpti_Profiler_Host_GetSubMetrics_Params>(
        CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE);
    p.pHostObject = host_.get();
    p.metricType = type;
    p.pMetricName = base.c_str();
    std::vector<std::string> out;
    if (api_.host_sub_metrics.call(&p) != CUPTI_SUCCESS || !p.ppSubMetrics) return out;
    for (size_t i = 0; i < p.numOfSubmetrics; ++i) {
      if (p.ppSubMetrics[i]) out.emplace_back(p.ppSubMetrics[i]);
    }
    return out;
  }

  // The `count` of `options` closest to `target`, closest first (ties in CUPTI's order).
  static std::vector<std::string> closest(const std::vector<std::string>& options,
                                          const std::string& target, size_t count) {
    std::vector<std::pair<size_t, size_t>> ranked;
    for (size_t i = 0; i < options.size(); ++i) {
      ranked.emplace_back(edit_distance(target, options[i]), i);
    }
    const size_t n = std::min(count, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n),
                      ranked.end());
    std::vector<std::string> out;
    for (size_t k = 0; k < n; ++k) out.push_back(options[ranked[k].second]);
    return out;
  }

  const Api& api_;
  Host host_;
  std::vector<std::pair<std::string, CUpti_MetricType>> bases_;
  std::unordered_map<std::string, CUpti_MetricType> index_;
};

// The error for names the config rejected: those the chip does not have, with a few collectable
// names close to each, and those it has but cannot count in this context.
[[noreturn]] void fail_unknown(const Api& a, const Target& t,
                               const std::vector<uint8_t>& availability,
                               const std::vector<std::string>& unknown) {
  Catalog catalog(a, make_host(a, t, availability));
  std::string missing, uncollectable;
  size_t missing_count = 0;
  for (const std::string& name : unknown) {
    if (catalog.knows(name)) {
      uncollectable += (uncollectable.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    std::string entry = "'" + name + "'";
    // Suggestions for the first few only: a long list of typos needs no more to be understood.
    if (missing_count < 3) {
      const std::vector<std::string> candidates = catalog.close_to(name, 8);
      const std::vector<bool> collectable = probe_metrics(a, t, availability, candidates);
      std::string close;
      for (size_t i = 0, shown = 0; i < candidates.size() && shown < 4; ++i) {
        if (!collectable[i]) continue;
        close += (close.empty() ? "" : ", ") + candidates[i];
        ++shown;
      }
      if (!close.empty()) entry += " (close: " + close + ")";
    }
    missing += (missing.empty() ? "" : "; ") + entry;
    ++missing_count;
  }
  std::string message;
  if (!missing.empty()) {
    message = fmt::format(
        "{} has no metric{} {} (names as Nsight Compute spells them: a base metric, a rollup and "
        "an optional submetric, e.g. dram__bytes_read.sum, "
        "sm__throughput.avg.pct_of_peak_sustained_elapsed)",
        t.chip, missing_count == 1 ? "" : "s", missing);
  }
  if (!uncollectable.empty()) {
    message += (message.empty() ? "" : "; ") +
               fmt::format(
                   "{} cannot count {} in a context's range (device-level counters such as "
                   "NVLink's and PCIe's, or counters another client holds)",
                   t.text(), uncollectable);
  }
  fail(ErrorKind::Value, "hardware counters: {}", message);
}

std::vector<uint8_t> config_image(const Api& a, const Target& t, CUpti_Profiler_Host_Object* host) {
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  check(a.host_config_image_size, size, t);
  std::vector<uint8_t> image(size.configImageSize);
  auto p = params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  p.pHostObject = host;
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  check(a.host_config_image, p, t);
  return image;
}

size_t passes_needed(const Api& a, const Target& t, std::vector<uint8_t>& config) {
  auto p = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  check(a.host_passes, p, t);
  return p.numOfPasses;
}

// The range profiler on the context: enabled for the measurement, disabled on every path (also
// when `pass` threw), since a profiler left enabled holds the counters and the context.
class RangeProfiler {
 public:
  RangeProfiler(const Api& a, const Target& t, CUcontext ctx) : api_(a) {
    auto p =
        params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    check(api_.enable, p, t);
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfiler() {
    auto p =
        params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    // A destructor cannot report a failure; the measurement has failed or finished already.
    static_cast<void>(api_.disable.call(&p));
  }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  const Api& api_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

// One replay pass: Start ... Stop. When `pass` throws, the destructor stops it, so that Disable
// finds the profiler as CUPTI expects it.
class ReplayPass {
 public:
  ReplayPass(const Api& a, const Target& t, CUpti_RangeProfiler_Object* profiler)
      : api_(a), target_(t), profiler_(profiler) {
    auto p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler_;
    check(api_.start, p, target_);
  }
  ~ReplayPass() {
    if (stopped_) return;
    auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler_;
    static_cast<void>(api_.stop.call(&p));  // on the way out of a failure: nothing to report
  }
  ReplayPass(const ReplayPass&) = delete;
  ReplayPass& operator=(const ReplayPass&) = delete;

  // Stops the pass; true once CUPTI has every pass the config needs.
  bool stop() {
    stopped_ = true;  // a failed Stop is not tried again by the destructor
    auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler_;
    check(api_.stop, p, target_);
    return p.isAllPassSubmitted != 0;
  }

 private:
  const Api& api_;
  const Target& target_;
  CUpti_RangeProfiler_Object* profiler_;
  bool stopped_ = false;
};

// The user range around `pass`: pushed, and popped on every path.
class UserRange {
 public:
  UserRange(const Api& a, const Target& t, CUpti_RangeProfiler_Object* profiler)
      : api_(a), target_(t), profiler_(profiler) {
    auto p = params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler_;
    p.pRangeName = kRangeName;
    check(api_.push_range, p, target_);
  }
  ~UserRange() {
    if (popped_) return;
    auto p = pop_params();
    static_cast<void>(api_.pop_range.call(&p));  // on the way out of a failure: nothing to report
  }
  UserRange(const UserRange&) = delete;
  UserRange& operator=(const UserRange&) = delete;

  void pop() {
    popped_ = true;
    auto p = pop_params();
    check(api_.pop_range, p, target_);
  }

 private:
  CUpti_RangeProfiler_PopRange_Params pop_params() const {
    auto p = params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler_;
    return p;
  }

  const Api& api_;
  const Target& target_;
  CUpti_RangeProfiler_Object* profiler_;
  bool popped_ = false;
};

// One measurement at a time in the process: CUPTI allows one range profiler per context, and the
// counters are the device's. A measurement started from inside `pass` must not even try the lock
// (a std::mutex may not be locked twice by one thread), hence the thread's own flag.
std::mutex g_measuring;
thread_local bool t_measuring = false;

class MeasurementLock {
 public:
  MeasurementLock() : lock_(g_measuring, std::defer_lock) {
    if (t_measuring) {
      fail(ErrorKind::Unsupported,
           "hardware counters: a measurement cannot start inside a measured pass (counters "
           "measure one benchmark at a time)");
    }
    if (!lock_.try_lock()) {
      fail(ErrorKind::Unsupported,
           "hardware counters: another thread is measuring counters (one measurement at a time "
           "in a process)");
    }
    t_measuring = true;
  }
  ~MeasurementLock() { t_measuring = false; }
  MeasurementLock(const MeasurementLock&) = delete;
  MeasurementLock& operator=(const MeasurementLock&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
};

// The calling thread's current context, which must be on `t.ordinal`; fills in the device's name.
CUcontext current_context(Target& t, CUdevice& dev) {
  const Driver& d = driver();
  CUcontext ctx = nullptr;
  if (d.ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) {
    fail(ErrorKind::Device,
         "hardware counters: no CUDA context is current on the calling thread (device {})",
         t.ordinal);
  }
  CUdevice wanted = 0;
  if (d.device_get(&wanted, t.ordinal) != CUDA_SUCCESS) {
    fail(ErrorKind::Value, "hardware counters: there is no CUDA device {}", t.ordinal);
  }
  if (d.ctx_get_device(&dev) != CUDA_SUCCESS || dev != wanted) {
    fail(ErrorKind::Device,
         "hardware counters: the calling thread's current CUDA context is not on device {}",
         t.ordinal);
  }
  char name[256] = {};
  if (d.device_get_name(name, static_cast<int>(sizeof(name) - 1), dev) == CUDA_SUCCESS) {
    t.name = name;
  }
  return ctx;
}

}  // namespace

CounterResult measure_counters(int device, const std::vector<std::string>& metrics,
                               const std::function<void()>& pass, bool strict,
                               const std::function<void()>& before_pass) {
  if (!pass) fail(ErrorKind::Value, "hardware counters: no pass to measure");
  MeasurementLock lock;
  const Api& a = api();
  Target t;
  t.ordinal = device;
  CUdevice dev = 0;
  CUcontext ctx = current_context(t, dev);

  initialize_profiler(a, t);
  require_supported_device(a, t, dev);
  t.chip = chip_name(a, t);

  CounterResult result;
  result.names = metrics;
  result.values.assign(metrics.size(), std::numeric_limits<double>::quiet_NaN());
  result.supported.assign(metrics.size(), false);
  result.chip = t.chip;

  // Each name once: CUPTI schedules a repeated name again (a second pass for nothing).
  std::vector<std::string> unique;
  std::vector<size_t> slot(metrics.size());
  {
    std::unordered_map<std::string_view, size_t> seen;
    for (size_t i = 0; i < metrics.size(); ++i) {
      auto [it, added] = seen.emplace(metrics[i], unique.size());
      if (added) unique.push_back(metrics[i]);
      slot[i] = it->second;
    }
  }
  if (unique.empty()) return result;

  const std::vector<uint8_t> availability = counter_availability(a, t, ctx);

  // The config takes every metric in one call: CUPTI schedules each call's metrics on their own,
  // so adding them one at a time needs several times the passes (31 against 10 for the defaults
  // on GH100). Usually every name is known and the first try is the config; otherwise the names
  // are probed one by one and the known ones go into a fresh object (the rejected call left the
  // first one unusable).
  Host host = make_host(a, t, availability);
  std::vector<bool> known(unique.size(), true);
  {
    std::vector<const char*> all;
    for (const std::string& m : unique) all.push_back(m.c_str());
    const CUptiResult r = add_metrics(a, host.get(), all);
    if (r != CUPTI_SUCCESS && !rejected_metric(r)) fail_cupti(r, a.host_add_metrics.name, t);
    if (r != CUPTI_SUCCESS) {
      host.reset();
      known = probe_metrics(a, t, availability, unique);
      if (strict) {
        std::vector<std::string> unknown;
        for (size_t i = 0; i < unique.size(); ++i) {
          if (!known[i]) unknown.push_back(unique[i]);
        }
        if (!unknown.empty()) fail_unknown(a, t, availability, unknown);
      }
    }
  }
  std::vector<const char*> names;  // the known metrics, in the order of `unique`
  std::vector<size_t> position(unique.size(), 0);
  for (size_t i = 0; i < unique.size(); ++i) {
    if (!known[i]) continue;
    position[i] = names.size();
    names.push_back(unique[i].c_str());
  }
  for (size_t i = 0; i < metrics.size(); ++i) result.supported[i] = known[slot[i]];
  if (names.empty()) return result;
  if (!host) {
    host = make_host(a, t, availability);
    const CUptiResult r = add_metrics(a, host.get(), names);
    if (r != CUPTI_SUCCESS) fail_cupti(r, a.host_add_metrics.name, t);
  }

  std::vector<uint8_t> config = config_image(a, t, host.get());
  const size_t expected = passes_needed(a, t, config);

  // The images outlive the profiler (declared first, destroyed last): CUPTI reads the config and
  // writes the counter data until it is disabled.
  std::vector<uint8_t> counter_data;
  RangeProfiler profiler(a, t, ctx);
  {
    auto p = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler.get();
    p.pMetricNames = names.data();
    p.numMetrics = names.size();
    p.maxNumOfRanges = 1;
    p.maxNumRangeTreeNodes = 1;
    check(a.counter_data_size, p, t);
    counter_data.assign(p.counterDataSize, 0);
  }
  {
    auto p = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler.get();
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    check(a.counter_data_initialize, p, t);
  }
  {
    // One user range (one nesting level) replayed by the caller: `pass` is the range, so every
    // launch of the benchmark counts, on any stream, and no kernel is replayed on its own.
    auto p = params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler.get();
    p.configSize = config.size();
    p.pConfig = config.data();
    p.counterDataImageSize = counter_data.size();
    p.pCounterDataImage = counter_data.data();
    p.range = CUPTI_UserRange;
    p.replayMode = CUPTI_UserReplay;
    p.maxRangesPerPass = 1;
    p.numNestingLevels = 1;
    p.minNestingLevel = 1;
    p.passIndex = 0;
    p.targetNestingLevel = 1;
    check(a.set_config, p, t);
  }

  // CUPTI says when it has every pass; the bound only keeps a CUPTI that never says so from
  // replaying forever (it needs `expected` passes for one nesting level).
  const size_t limit = 2 * std::max<size_t>(expected, 1) + 8;
  for (bool done = false; !done;) {
    if (static_cast<size_t>(result.passes) >= limit) {
      fail(ErrorKind::Device,
           "hardware counters: CUPTI asked for more than {} passes (the config needs {})", limit,
           expected);
    }
    if (before_pass) before_pass();  // outside the range: not counted
    ReplayPass replay(a, t, profiler.get());
    {
      UserRange range(a, t, profiler.get());
      pass();
      ++result.passes;
      range.pop();
    }
    done = replay.stop();
  }

  {
    // Decoding synchronizes the context, then copies the range into the counter data.
    auto p = params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = profiler.get();
    check(a.decode, p, t);
    if (p.numOfRangeDropped > 0) {
      fail(ErrorKind::Device, "hardware counters: CUPTI dropped the measured range");
    }
  }
  {
    auto p = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    check(a.counter_data_info, p, t);
    if (p.numTotalRanges < 1) {
      fail(ErrorKind::Device, "hardware counters: CUPTI recorded no range over {} passes",
           result.passes);
    }
  }
  std::vector<double> values(names.size(), std::numeric_limits<double>::quiet_NaN());
  {
    auto p = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    p.pHostObject = host.get();
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    p.rangeIndex = 0;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    check(a.host_evaluate, p, t);
  }
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (result.supported[i]) result.values[i] = values[position[slot[i]]];
  }
  return result;
}

}  // namespace culua::detail::measure

#else

namespace culua::detail::measure {

CounterResult measure_counters(int, const std::vector<std::string>&, const std::function<void()>&,
                               bool, const std::function<void()>&) {
  fail(ErrorKind::Unsupported, "hardware counters need culua built with the CUDA toolkit (CUPTI)");
}

}  // namespace culua::detail::measure

#endif
