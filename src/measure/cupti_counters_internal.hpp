// What the files of the hardware counters share (namespace measure::cupti_counters): CUPTI's
// profiler entry points, the device measured, the error for a CUPTI result and the parameter
// blocks; the device's checks (cupti_counters_device.cpp); the Profiler Host API's metric
// configuration (cupti_counters_config.cpp). The range profiler session and measure_counters:
// cupti_counters.cpp. Only with CUPTI's headers (CULUA_HAVE_CUPTI).
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "measure/cupti_library.hpp"

namespace culua::detail::measure::cupti_counters {

inline constexpr const char* kPurpose = "hardware counters need";

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

const Api& api();

// The device measured, for messages: "device 0 (NVIDIA H200, GH100)".
struct Target {
  int ordinal = 0;
  std::string name;  // the driver's name; empty when it could not say
  std::string chip;  // CUPTI's chip name; empty until known

  std::string text() const;
};

// Throws the error for a failed CUPTI call: Error(Unsupported) for what the device, the driver's
// permissions or another profiler rule out, Error(Device) otherwise.
[[noreturn]] void fail_cupti(CUptiResult r, const char* function, const Target& t);

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

// ---- The device (cupti_counters_device.cpp) ----

// The calling thread's current context, which must be on `t.ordinal`; fills in the device's name.
CUcontext current_context(Target& t, CUdevice& dev);

// The profiler's own initialization, once per process (it hooks into the driver; CUPTI keeps it
// until exit). Runs under the measurement lock, which serializes callers.
void initialize_profiler(const Api& a, const Target& t);

// Asks CUPTI up front whether the device can be profiled at all, so that the error says why (a
// virtual GPU, confidential computing, WSL...) instead of some later call failing obscurely.
void require_supported_device(const Api& a, const Target& t, CUdevice dev);

std::string chip_name(const Api& a, const Target& t);

// Which counters the context can read now (some may be reserved, by MIG or another client), for
// the host object's scheduling. Taken before the range profiler is enabled: CUPTI may refuse it
// while a profiling session is active on the device.
std::vector<uint8_t> counter_availability(const Api& a, const Target& t, CUcontext ctx);

// ---- The metric configuration (cupti_counters_config.cpp) ----

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

Host make_host(const Api& a, const Target& t, const std::vector<uint8_t>& availability);

CUptiResult add_metrics(const Api& a, CUpti_Profiler_Host_Object* host,
                        std::vector<const char*>& names);

// Whether `r` is CUPTI rejecting a metric name (rather than failing).
bool rejected_metric(CUptiResult r);

// Which of `names` the chip counts, each tried in a config of its own.
std::vector<bool> probe_metrics(const Api& a, const Target& t,
                                const std::vector<uint8_t>& availability,
                                const std::vector<std::string>& names);

// The error for names the config rejected: those the chip does not have, with a few collectable
// names close to each, and those it has but cannot count in this context.
[[noreturn]] void fail_unknown(const Api& a, const Target& t,
                               const std::vector<uint8_t>& availability,
                               const std::vector<std::string>& unknown);

std::vector<uint8_t> config_image(const Api& a, const Target& t, CUpti_Profiler_Host_Object* host);

size_t passes_needed(const Api& a, const Target& t, std::vector<uint8_t>& config);

}  // namespace culua::detail::measure::cupti_counters
