// Hardware counters for one benchmark (measure/cupti_counters.hpp): the default metrics, the range
// profiler session (enabled on the context, one user range replayed pass by pass, the counter
// data decoded) and measure_counters, which configures the metrics, runs the passes and evaluates
// the metrics. CUPTI's plumbing: cupti_counters_device.cpp; the metric configuration:
// cupti_counters_config.cpp.
#include "measure/cupti_counters.hpp"

#include "core/base/error.hpp"

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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "measure/cupti_counters_internal.hpp"

namespace culua::detail::measure {

namespace cupti_counters {

namespace {

// The range's name in the counter data; only one range is ever recorded.
constexpr const char* kRangeName = "culua";

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

}  // namespace

}  // namespace cupti_counters

CounterResult measure_counters(int device, const std::vector<std::string>& metrics,
                               const std::function<void()>& pass, bool strict,
                               const std::function<void()>& before_pass) {
  if (!pass) fail(ErrorKind::Value, "hardware counters: no pass to measure");
  using namespace cupti_counters;
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
