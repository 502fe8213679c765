// What hardware counters say about a benchmark (cu.bench{counters = true}): DRAM traffic and
// throughput, "speed of light" throughputs, occupancy, cache hit rates, floating-point operations,
// a verdict (memory-, compute- or latency-bound against the card's own peaks) and the roofline.
// The counters come from measure/cupti_counters.hpp; the peaks from the card: DRAM bandwidth from
// a measured device-to-device copy, FLOP rates from a table per architecture (both stated).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/runtime.hpp"
#include "measure/cupti_counters.hpp"
#include "measure/results.hpp"

namespace culua::detail::measure {

struct DevicePeaks {
  double dram_GBps = NAN;  // measured: a device-to-device copy, read + write bytes per second
  std::string dram_how;
  // Non-tensor FLOP/s from the table per compute capability at the highest SM clock (NVML).
  double fp64_TFLOPs = NAN, fp32_TFLOPs = NAN, fp16_TFLOPs = NAN;
  std::string flops_how;
};

// The FLOP rates of `info`'s architecture (NaN where the table has none); `clock_mhz` is the
// highest SM clock (NVML), else a typical boost clock of the architecture is assumed and said.
DevicePeaks flop_peaks(const DeviceInfo& info, std::optional<unsigned> clock_mhz);
// Both peaks of a CUDA device, the copy measured once per process and device (about 10 ms: five
// copies of 256 MiB, the fastest counted).
const DevicePeaks& device_peaks(Runtime& rt, int device);

struct CounterSummary {
  // The benchmark's device time per call (its median), the time base of the rates below; the
  // profiled range's own duration is longer (the profiler's start and end around fn's work), and
  // the counters' shares of peak "over the elapsed cycles" are rescaled from it to time_ms.
  double time_ms = NAN;
  double range_ms = NAN;
  double dram_read = NAN, dram_write = NAN;  // bytes
  double dram_GBps = NAN;                    // (read + write) / time
  double dram_share = NAN;                   // dram_GBps / the measured copy peak
  double dram_throughput = NAN;              // CUPTI's dram__throughput, a share of its own peak
  double sm_throughput = NAN;                // "speed of light": SM, memory (shares of peak)
  double memory_throughput = NAN;
  double occupancy = NAN;             // achieved: active warps / the SM's maximum
  double l1_hit = NAN, l2_hit = NAN;  // shares
  double fp64_flops = NAN, fp32_flops = NAN, fp16_flops = NAN;
  double tensor_instructions = NAN;  // warp-level tensor-pipe instructions (not FLOPs)
  double flops = NAN;                // fp64 + fp32 + fp16
  std::string precision;             // the precision with the most FLOPs ("fp32"), or ""
  double TFLOPs = NAN;               // flops / time
  double flops_share = NAN;          // TFLOPs / the peak of `precision`
  double intensity = NAN;            // flops per DRAM byte
  std::string bound;                 // "memory", "compute", "latency" ("" when unknown)
  double bound_share = NAN;          // the share of the peak that decided it
  std::string verdict;               // one sentence with the figures
};

// The summary of `r` against `peaks` (values the metrics did not give are NaN).
// `bench_ms`: the benchmark's device time per call (NaN: the range's duration is used).
CounterSummary summarize_counters(const CounterResult& r, const DevicePeaks& peaks,
                                  double bench_ms = NAN);

// One point of a roofline: a benchmark's achieved FLOP rate at its arithmetic intensity.
struct RooflinePoint {
  std::string label;
  double intensity = NAN;  // FLOP per DRAM byte
  double TFLOPs = NAN;
  std::string precision;
};

// Plots the points against the roofs of `peaks` (each precision's FLOP peak, the measured DRAM
// bandwidth) with gnuplot into `file` (.png or .svg). Points without FLOPs or DRAM bytes cannot be
// placed on the logarithmic axes: an error when no point can. `who` prefixes messages.
void plot_roofline(const std::vector<RooflinePoint>& points, const DevicePeaks& peaks,
                   const std::string& file, const std::string& title, const std::string& who);
// The same from result rows (cu.bench results, or a sweep's rows holding them): each row's
// counters.intensity, counters.TFLOPs and counters.precision, labelled by its `label_fields`
// ("n=1024") or its name; the peaks from the first row's counters.peaks.
void plot_roofline_rows(const std::vector<Value>& rows,
                        const std::vector<std::string>& label_fields, const std::string& file,
                        const std::string& title, const std::string& who);

}  // namespace culua::detail::measure
