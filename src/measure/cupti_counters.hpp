// Hardware counters for one benchmark: CUPTI's Range Profiler (collection) and Profiler Host API
// (metric names, scheduling, evaluation), reached through the run-time loaded CUPTI
// (measure/cupti_library.hpp). This header names no CUDA or CUPTI type, so that callers compile
// without the toolkit; without it (no CULUA_HAVE_CUPTI), measure_counters throws
// Error(Unsupported).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace culua::detail::measure {

// The metrics asked for by `counters = true` (names as Nsight Compute spells them, Hopper and
// later): time, DRAM traffic, throughputs, occupancy, cache hit rates, floating-point operations
// by kind and tensor-pipe instructions.
const std::vector<std::string>& default_counter_metrics();

struct CounterResult {
  std::vector<std::string> names;  // as asked
  std::vector<double> values;      // NaN where the chip does not count that metric
  std::vector<bool> supported;     // false: the chip has no such metric (value NaN)
  int passes = 0;                  // how many times `pass` ran (the replay)
  std::string chip;                // e.g. "GH100"
};

// Runs `pass` (which queues work on the device and waits for it) inside one profiler range, as
// many times as the metrics need, and evaluates the metrics over that range. `device` is the CUDA
// device ordinal whose primary context is current on the calling thread. Unknown metric names
// (not supported by the chip) are reported in `supported` rather than failing, unless `strict`
// is true, in which case an unknown name throws Error(Value) naming it and listing a few close
// supported names.
//
// Every launch on the context between the range's start and end counts, on any stream; `pass`
// runs once per replay pass (CUPTI's user replay), so it must do the same work each time (the
// counters of a pass that computes in place still describe that work, but its results change).
// One measurement at a time per process: a second one, from another thread or from inside
// `pass`, throws Error(Unsupported), as does a GPU whose counters another profiler holds.
// `before_pass`, when set, runs before each pass outside the range (not counted): cu.bench flushes
// the L2 cache there and waits, so that every pass starts as a cold sample does.
CounterResult measure_counters(int device, const std::vector<std::string>& metrics,
                               const std::function<void()>& pass, bool strict,
                               const std::function<void()>& before_pass = {});

}  // namespace culua::detail::measure
