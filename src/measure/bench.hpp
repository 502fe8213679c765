// cu.bench's measurement loop, after nvbench's methodology, independent of Lua: cold samples
// (L2 flushed before each, events around the call, stopped by a noise criterion), a hot batch
// measurement (back-to-back calls without flushing) and launch-bound detection.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"
#include "measure/stats.hpp"

namespace culua::detail::measure {

// The largest warmup and min_samples accepted, and the longest min_time and max_time (s).
inline constexpr int64_t kMaxBenchCount = 1'000'000;
inline constexpr double kMaxBenchSeconds = 86400;

struct BenchOptions {
  std::string name;
  int64_t warmup = 1;        // calls before the first sample (each measured like a sample)
  int64_t min_samples = 10;  // cold samples taken unless max_time ends the measurement first
  double min_time = 0.5;     // s of accumulated device time of the cold samples
  // s of wall time that bound the whole measurement (warmup, cold samples, hot batches): past it,
  // each phase stops after the call in flight, and at least one sample is taken.
  double max_time = 5;
  // When the measurement must end (replaces max_time from the start): cu.bench{graph=true} gives
  // its eager and graph runs one deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  double noise = 0.005;  // target relative stddev of the device times
  bool cold = true;
  bool hot = true;
  std::optional<double> bytes;  // per call, for GB/s
  std::optional<double> flops;  // per call, for TFLOP/s
};

// Throws Error(Value) for options that cannot be measured with (named in the message).
void check_options(const BenchOptions& o);

// Times of the hot measurement, per call (milliseconds). Each batch is `batch_size` calls between
// two events; one value per batch.
struct HotResult {
  int64_t batch_size = 0;
  int64_t batches = 0;
  std::vector<double> gpu_times;  // device time per call, one per batch
  Summary gpu;
  double cpu_enqueue = 0;  // host time to issue a call (the whole batch, without waiting), median
  // Device time per call of a few calls queued before the device starts them (behind a sleep):
  // the device's own time without host gaps. Unset when fn waits for the device itself.
  std::optional<double> gpu_queued;
  std::optional<double> GBps;
  std::optional<double> TFLOPs;
};

struct BenchResult {
  BenchOptions options;
  std::string name;
  std::string device;  // the device's name
  int device_index = 0;
  std::string backend;  // "cuda" | "host"
  std::string mode;     // "cold" or "hot": where gpu, GBps and TFLOPs come from
  int64_t warmup = 0;
  int64_t samples = 0;            // cold samples
  std::vector<double> gpu_times;  // ms, per cold sample
  std::vector<double> cpu_times;  // ms, per cold sample
  std::optional<Summary> gpu;     // cold samples (hot per-call times when cold is off)
  std::optional<Summary> cpu;     // cold samples only
  std::optional<double> GBps;     // bytes / median gpu time, 1 GB = 1e9 bytes
  std::optional<double> TFLOPs;   // flops / median gpu time / 1e12
  std::optional<HotResult> hot;
  bool gated = false;  // cold device times were taken with fn's work held until fully issued
  bool launch_bound = false;
  std::string stop;  // why sampling stopped: "noise", "converged", "max_time" ("" without cold)
  std::optional<unsigned> clock_before;    // SM clock in MHz (NVML), before the first sample
  std::optional<unsigned> clock_after;     // ... and after the last measurement
  std::optional<int64_t> throttled;        // samples taken while the clock was throttled
  std::vector<int64_t> throttled_samples;  // their 1-based indices
  std::vector<std::string> throttle_reasons;
  double elapsed = 0;  // s, wall time of the whole bench
  std::vector<std::string> notes;
};

// Runs `fn` under the bench's rules. Events are recorded on `stream`; `flush` (used when
// options.cold) is the persistent buffer written before each cold sample to evict the L2 cache.
// Exceptions thrown by fn (Lua errors included) propagate; the measurement is abandoned.
BenchResult run_bench(Runtime& rt, Stream& stream, const Array* flush,
                      const std::function<void()>& fn, const BenchOptions& options);

// Bytes of the L2 flush buffer for a device: twice its L2 cache (a small buffer on the host
// backend, which only needs to be fast).
size_t flush_buffer_bytes(BackendKind kind, const DeviceInfo& info);

// The figures of the one-line summary, so it can be made from a result or from a Lua table.
struct BenchLine {
  std::string name;
  std::string mode;
  int64_t samples = 0;
  std::optional<Summary> gpu;
  std::optional<double> cpu_median;
  std::optional<double> GBps;
  std::optional<double> TFLOPs;
  std::optional<double> hot_gpu_median;
  std::optional<int64_t> hot_batch_size;
  std::optional<int64_t> throttled;
  bool launch_bound = false;
};
BenchLine line_of(const BenchResult& r);
// "saxpy  gpu 1.234 ms ±0.3% (median of 57, p10 1.230 p90 1.240)  cpu 1.250 ms  812.4 GB/s
// [cold]" (one line).
std::string format_line(const BenchLine& l);
// "1.234 ms", "12.5 us", "850 ns", "2.100 s".
std::string format_ms(double ms);

inline constexpr const char* kLaunchBoundNote =
    "launch-bound: the device was idle waiting for the host; the figure is the host's issue rate, "
    "not the kernel's";

}  // namespace culua::detail::measure
