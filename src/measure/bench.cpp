#include "measure/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/ops/ops.hpp"
#include "measure/nvml.hpp"

namespace culua::detail::measure {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
double seconds_since(Clock::time_point a) {
  return std::chrono::duration<double>(Clock::now() - a).count();
}

// The noise has settled (nvbench's idea): over the last kNoiseWindow samples the relative stddev
// varied by less than kNoiseSettled of its current value, so more samples would not bring it
// down to the target. Checked every kNoiseCheckEvery samples.
constexpr size_t kNoiseWindow = 64;
constexpr int64_t kNoiseCheckEvery = 16;
constexpr double kNoiseSettled = 0.05;

// Hot batches: each lasts about min_time / 10 (between these bounds), 2 to 5 of them.
constexpr double kHotBatchMinMs = 5;
constexpr double kHotBatchMaxMs = 50;
constexpr int64_t kMaxBatchSize = 1'000'000;
constexpr int64_t kMaxCalibrationBatch = 1000;  // calls in the first calibration batch
constexpr int kMinHotBatches = 2;
constexpr int kMaxHotBatches = 5;
constexpr double kMinHotSeconds = 0.2;

// Launch-bound: the host needs more than about the device's time per call to issue a call.
constexpr double kLaunchBoundRatio = 0.9;
constexpr double kHostShare = 0.5;
// The queued batch: up to this many calls queued behind a sleep, so that the device starts them
// only once all are queued and runs them without waiting for the host.
constexpr int64_t kQueuedCalls = 256;
// Cold samples: the shortest gate (ms) and how often a sample the gate did not hold is retaken.
constexpr double kMinGateMs = 0.05;
constexpr int kGateAttempts = 3;
constexpr double kMinHoldMs = 10;  // covers the host being descheduled for a while
constexpr double kMaxHoldMs = 50;  // unless a single call needs longer to queue

bool noise_settled(const std::vector<double>& history) {
  if (history.size() < kNoiseWindow) return false;
  const double current = history.back();
  if (!(current > 0) || !std::isfinite(current)) return false;
  double ss = 0;
  for (size_t i = history.size() - kNoiseWindow; i < history.size(); ++i) {
    ss += (history[i] - current) * (history[i] - current);
  }
  return std::sqrt(ss / static_cast<double>(kNoiseWindow - 1)) / current < kNoiseSettled;
}

std::optional<double> rate(const std::optional<double>& amount, double median_ms, double unit) {
  if (!amount || !(median_ms > 0) || !std::isfinite(median_ms)) return std::nullopt;
  return *amount / (median_ms * 1e-3) / unit;
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "inf%";
  const double p = fraction * 100;
  return p >= 0.1 || p == 0 ? fmt::format("{:.1f}%", p) : fmt::format("{:.2f}%", p);
}

std::string throughput(double v) {
  if (v >= 100) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

// Scale and unit for a time in milliseconds.
std::pair<double, const char*> time_unit(double ms) {
  const double a = std::abs(ms);
  if (a >= 1000) return {1e-3, "s"};
  if (a >= 1 || a == 0 || !std::isfinite(a)) return {1, "ms"};
  if (a >= 1e-3) return {1e3, "us"};
  return {1e6, "ns"};
}

// One cold sample, a warm-up call or a hot batch: the stream's events and the host clock.
class Sampler {
 public:
  Sampler(Runtime& rt, Stream& s, const std::function<void()>& fn)
      : rt_(rt),
        s_(s),
        fn_(fn),
        start_(rt.backend().create_event(s.device(), true)),
        stop_(rt.backend().create_event(s.device(), true)),
        mid_(rt.backend().create_event(s.device(), true)) {}

  struct Sample {
    double gpu;    // ms between the events around the call (held: the device's own time)
    double cpu;    // ms from the call to the completion of its work (the host-timed call)
    double issue;  // host ms for fn to return (the host-timed call)
    bool waits;    // fn waited for the device (a sync, an element read): no gate possible
    bool held;     // the device waited behind the gate until the host had issued the whole call
  };
  // Each call after an L2 flush and a drained stream. The first call runs as a host-timed
  // synchronous call would: it gives the host time. With `gate`, a second call is held behind a
  // sleep queued before the start event (nvbench's blocking kernel), lasting `scale` times four
  // times the first call's issue time (at least kMinGateMs), so that the device starts fn's work
  // only once the host has issued all of it: its events time the device's own work, without the
  // host's gaps between fn's operations. Without a gate the first call's events give the time.
  Sample cold(const Array* flush, int64_t index, bool gate, double scale) {
    Sample out{};
    if (flush) fill(rt_, *flush, Scalar::integer(index & 1), &s_);
    s_.synchronize();
    const uint64_t syncs = rt_.monitor().ledger.syncs;
    start_->record(s_);
    const auto t0 = Clock::now();
    fn_();
    out.issue = ms_between(t0, Clock::now());
    stop_->record(s_);
    {
      // The host clock is read when the wait ends: a native wait ends with the work, a polling
      // (interruptible) one up to a poll later. Ctrl-C stops cu.bench at fn's next Lua step.
      InterruptScope uninterruptible(nullptr);
      stop_->synchronize();
    }
    out.cpu = ms_between(t0, Clock::now());
    out.gpu = start_->elapsed_ms(*stop_);
    out.waits = rt_.monitor().ledger.syncs != syncs;
    if (!gate || out.waits) return out;
    if (flush) fill(rt_, *flush, Scalar::integer((index + 1) & 1), &s_);
    s_.synchronize();
    culua::detail::sleep(rt_, scale * std::max(kMinGateMs, 4 * out.issue) / 1000, &s_);
    start_->record(s_);
    fn_();
    out.held = !start_->query();
    stop_->record(s_);
    stop_->synchronize();
    out.gpu = start_->elapsed_ms(*stop_);
    return out;
  }

  struct Batch {
    double gpu;      // ms per call
    double enqueue;  // host ms per call to issue the whole batch
  };
  Batch hot(int64_t n) {
    s_.synchronize();
    start_->record(s_);
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < n; ++i) fn_();
    const auto t1 = Clock::now();
    stop_->record(s_);
    stop_->synchronize();
    const double calls = static_cast<double>(n);
    return {start_->elapsed_ms(*stop_) / calls, ms_between(t0, t1) / calls};
  }

  // n calls queued behind a sleep of hold_ms: device ms per call, or nullopt when the device
  // started them before the host had queued them all (the sleep was too short, the launch queue
  // was full, or fn waits for the device). The time between two events with nothing between them
  // is subtracted: with calls that give the device nothing to do, it is all there is.
  std::optional<double> queued(int64_t n, double hold_ms) {
    s_.synchronize();
    culua::detail::sleep(rt_, hold_ms / 1000, &s_);
    start_->record(s_);
    mid_->record(s_);
    for (int64_t i = 0; i < n; ++i) fn_();
    const bool held = !start_->query();
    stop_->record(s_);
    stop_->synchronize();
    if (!held) return std::nullopt;
    const double empty = start_->elapsed_ms(*mid_);
    return std::max(0.0, mid_->elapsed_ms(*stop_) - empty) / static_cast<double>(n);
  }

 private:
  Runtime& rt_;
  Stream& s_;
  const std::function<void()>& fn_;
  std::shared_ptr<Event> start_;
  std::shared_ptr<Event> stop_;
  std::shared_ptr<Event> mid_;
};

bool past(Clock::time_point deadline) {
  return Clock::now() >= deadline;
}

// Hot batches: the calibration and the extra batches stop at the deadline; the minimum (a few
// batches of at most kHotBatchMaxMs each, or of one call) is taken in any case.
HotResult measure_hot(Sampler& sampler, const BenchOptions& o, double estimate_ms,
                      Clock::time_point deadline) {
  const double target = std::clamp(o.min_time * 1000 / 10, kHotBatchMinMs, kHotBatchMaxMs);
  if (!(estimate_ms > 0)) {
    const Sampler::Batch one = sampler.hot(1);
    estimate_ms = std::max(one.gpu, one.enqueue);
  }
  // Batches sized from the estimate measure the cost per call in a batch (the device's or the
  // host's, whichever is longer), growing until one lasts at least half the target.
  auto n = static_cast<int64_t>(std::clamp(std::ceil(target / std::max(estimate_ms, 1e-3)), 1.0,
                                           static_cast<double>(kMaxCalibrationBatch)));
  double per_call = 0;
  for (int round = 0; round < 4; ++round) {
    const Sampler::Batch c = sampler.hot(n);
    per_call = std::max({c.gpu, c.enqueue, 1e-9});
    if (per_call * static_cast<double>(n) >= target / 2 || n >= kMaxBatchSize || past(deadline))
      break;
    n = static_cast<int64_t>(
        std::min(std::ceil(target / per_call), static_cast<double>(kMaxBatchSize)));
  }
  HotResult h;
  h.batch_size = static_cast<int64_t>(
      std::clamp(std::ceil(target / per_call), 1.0, static_cast<double>(kMaxBatchSize)));

  std::vector<double> enqueue;
  const auto started = Clock::now();
  // The first kMinHotBatches batches (each of at most kHotBatchMaxMs, or one call) are taken even
  // past the deadline; more only before it.
  while (h.batches < kMaxHotBatches &&
         (h.batches < kMinHotBatches ||
          (seconds_since(started) < std::max(kMinHotSeconds, o.min_time) && !past(deadline)))) {
    const Sampler::Batch b = sampler.hot(h.batch_size);
    h.gpu_times.push_back(b.gpu);
    enqueue.push_back(b.enqueue);
    ++h.batches;
  }
  h.gpu = summarize(h.gpu_times);
  h.cpu_enqueue = median(enqueue);
  h.GBps = rate(o.bytes, h.gpu.median, 1e9);
  h.TFLOPs = rate(o.flops, h.gpu.median, 1e12);

  // The device's own time per call, without waiting for the host: calls queued behind a sleep
  // four times longer than the host needs to queue them. When the device started early anyway
  // (a launch queue holds about a thousand kernels), fewer calls; when fn waits for the device,
  // never.
  const double e = std::max(h.cpu_enqueue, 1e-9);
  auto queued = std::min(h.batch_size, kQueuedCalls);
  queued = std::min(
      queued, std::max<int64_t>(1, static_cast<int64_t>((kMaxHoldMs - kMinHoldMs) / (4 * e))));
  for (int attempt = 0; attempt < 3 && !h.gpu_queued; ++attempt) {
    h.gpu_queued = sampler.queued(queued, 4 * static_cast<double>(queued) * e + kMinHoldMs);
    if (queued == 1) break;
    queued = std::max<int64_t>(1, queued / 8);
  }
  return h;
}

// Launch-bound: the device waited for the host in the hot batch, because the host needs longer to
// issue a call than the device needs to run it. From the hot batch alone, that shows as a host
// enqueue time per call close to the device time per call (kLaunchBoundRatio); this decides when
// fn waits for the device (no gpu_queued). Otherwise the device's own time per call must also be
// below the host's time to issue one: a host that only waits because the launch queue is full
// (short kernels issued faster than they run) is not slow. The hot-batch condition is then looser
// (kHostShare), as the timer's latency at the ends of a batch can stretch the device time.
bool is_launch_bound(const HotResult& h) {
  const double gpu = h.gpu.median;
  if (!h.gpu_queued) return h.cpu_enqueue >= kLaunchBoundRatio * gpu;
  return *h.gpu_queued < kLaunchBoundRatio * h.cpu_enqueue && h.cpu_enqueue >= kHostShare * gpu;
}

}  // namespace

void check_options(const BenchOptions& o) {
  if (o.warmup < 0) fail(ErrorKind::Value, "warmup must be 0 or more, got {}", o.warmup);
  if (o.warmup > kMaxBenchCount) {
    fail(ErrorKind::Value, "warmup must be at most {}, got {}", kMaxBenchCount, o.warmup);
  }
  if (o.min_samples < 1) {
    fail(ErrorKind::Value, "min_samples must be at least 1, got {}", o.min_samples);
  }
  if (o.min_samples > kMaxBenchCount) {
    fail(ErrorKind::Value, "min_samples must be at most {}, got {}", kMaxBenchCount, o.min_samples);
  }
  if (!(o.min_time >= 0) || !std::isfinite(o.min_time)) {
    fail(ErrorKind::Value, "min_time must be 0 or more seconds, got {}", o.min_time);
  }
  if (o.min_time > kMaxBenchSeconds) {
    fail(ErrorKind::Value, "min_time must be at most {} s (a day), got {}", kMaxBenchSeconds,
         o.min_time);
  }
  if (!(o.max_time > 0) || !std::isfinite(o.max_time)) {
    fail(ErrorKind::Value, "max_time must be a positive number of seconds, got {}", o.max_time);
  }
  if (o.max_time > kMaxBenchSeconds) {
    fail(ErrorKind::Value, "max_time must be at most {} s (a day), got {}", kMaxBenchSeconds,
         o.max_time);
  }
  if (o.max_time < o.min_time) {
    fail(ErrorKind::Value, "max_time ({} s) is less than min_time ({} s)", o.max_time, o.min_time);
  }
  if (!(o.noise > 0) || !std::isfinite(o.noise)) {
    fail(ErrorKind::Value, "noise must be a positive fraction (0.005 = 0.5%), got {}", o.noise);
  }
  for (const auto& [key, v] : {std::pair{"bytes", o.bytes}, std::pair{"flops", o.flops}}) {
    if (v && (!(*v >= 0) || !std::isfinite(*v))) {
      fail(ErrorKind::Value, "{} must be a finite number, 0 or more, got {}", key, *v);
    }
  }
  if (!o.cold && !o.hot) fail(ErrorKind::Value, "cold and hot are both false: nothing to measure");
}

size_t flush_buffer_bytes(BackendKind kind, const DeviceInfo& info) {
  constexpr size_t MiB = size_t{1} << 20;
  if (kind == BackendKind::Host) return std::clamp<size_t>(2 * info.l2, MiB, 4 * MiB);
  return 2 * (info.l2 ? info.l2 : 64 * MiB);
}

BenchResult run_bench(Runtime& rt, Stream& stream, const Array* flush,
                      const std::function<void()>& fn, const BenchOptions& o) {
  check_options(o);
  const auto started = Clock::now();
  const Clock::time_point deadline = o.deadline
                                         ? *o.deadline
                                         : started + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(o.max_time));
  Backend& backend = rt.backend();
  BenchResult r;
  r.options = o;
  r.name = o.name;
  r.device_index = stream.device();
  r.device = backend.device_info(stream.device()).name;
  r.backend = std::string(backend_name(backend.kind()));
  r.mode = o.cold ? "cold" : "hot";
  if (!o.cold) flush = nullptr;

  std::optional<GpuMonitor> monitor;
  if (backend.kind() == BackendKind::Cuda) {
    monitor = GpuMonitor::for_pci_bus_id(backend.device_info(stream.device()).pci_bus_id);
  }

  Sampler sampler(rt, stream, fn);
  double estimate_ms = 0;
  // The cost of one call (device or host, whichever is longer) sizes the hot batches. A fn that
  // waits for the device itself (a sync, an element read) cannot be held behind a gate.
  r.warmup = 0;
  for (int64_t i = 0; i < o.warmup; ++i) {
    if (past(deadline)) {
      r.notes.push_back(
          fmt::format("max_time ({} s) reached during the warmup, after {} of {} calls", o.max_time,
                      r.warmup, o.warmup));
      break;
    }
    const Sampler::Sample s = sampler.cold(flush, i, false, 1);
    estimate_ms = std::max(s.gpu, s.cpu);
    ++r.warmup;
  }
  bool gate = o.cold;
  int64_t missed_gates = 0;
  if (monitor) r.clock_before = monitor->sm_clock_mhz();

  if (o.cold) {
    RunningStats gpu;
    std::vector<double> noise_history;
    uint64_t reasons_seen = 0;
    bool reasons_known = false;
    int64_t throttled = 0;
    for (;;) {
      Sampler::Sample s{};
      for (int attempt = 0;; ++attempt) {
        s = sampler.cold(flush, r.samples, gate, static_cast<double>(1 << attempt));
        if (s.waits && gate) {
          gate = false;
          r.notes.emplace_back(
              "fn waits for the device itself, so its work cannot be held until it is all "
              "issued: the cold device times include the host's time between fn's operations");
        }
        // A gate that opened before the host had issued everything (the host was descheduled):
        // taken again with a longer gate.
        if (!gate || s.held) break;
        if (attempt == kGateAttempts) {
          ++missed_gates;
          break;
        }
      }
      ++r.samples;
      r.gpu_times.push_back(s.gpu);
      r.cpu_times.push_back(s.cpu);
      gpu.add(s.gpu);
      if (monitor) {
        if (const auto reasons = monitor->clock_reasons()) {
          reasons_known = true;
          if (*reasons & clock_reason::kThrottling) {
            ++throttled;
            reasons_seen |= *reasons & clock_reason::kThrottling;
            r.throttled_samples.push_back(r.samples);
          }
        }
      }
      const double noise = gpu.noise();
      if (std::isfinite(noise)) noise_history.push_back(noise);
      // max_time ends the sampling even before min_samples (a count that cannot be reached in
      // time must not hold the run).
      if (past(deadline)) {
        r.stop = "max_time";
        break;
      }
      if (r.samples < o.min_samples) continue;
      const bool enough_time = gpu.sum() >= o.min_time * 1000;
      if (enough_time && noise <= o.noise) {
        r.stop = "noise";
        break;
      }
      if (enough_time && r.samples % kNoiseCheckEvery == 0 && noise_settled(noise_history)) {
        r.stop = "converged";
        break;
      }
    }
    r.gated = gate;
    if (missed_gates > 0) {
      r.notes.push_back(fmt::format(
          "{} of {} cold samples started before the host had issued all of fn (the gate was too "
          "short even after {} longer tries): they include host time",
          missed_gates, r.samples, kGateAttempts));
    }
    if (reasons_known) {
      r.throttled = throttled;
      r.throttle_reasons = clock_reason_names(reasons_seen);
    }
    r.gpu = summarize(r.gpu_times);
    r.cpu = summarize(r.cpu_times);
    estimate_ms = std::max(r.gpu->median, r.cpu->median);

    if (r.stop == "converged") {
      r.notes.push_back(fmt::format(
          "the noise settled at {} of the median, above the {} target: more samples would not "
          "lower it",
          percent(r.gpu->noise), percent(o.noise)));
    } else if (r.stop == "max_time") {
      const double device_s = gpu.sum() / 1000;
      if (r.samples < o.min_samples) {
        r.notes.push_back(fmt::format("max_time ({} s) reached after {} of the {} min_samples",
                                      o.max_time, r.samples, o.min_samples));
      } else if (device_s < o.min_time) {
        r.notes.push_back(fmt::format(
            "max_time ({} s) reached after {} samples with {:.3g} s of device time, less than "
            "min_time ({} s)",
            o.max_time, r.samples, device_s, o.min_time));
      } else {
        r.notes.push_back(fmt::format("max_time ({} s) reached with noise {}, above the {} target",
                                      o.max_time, percent(r.gpu->noise), percent(o.noise)));
      }
    }
    if (r.throttled && *r.throttled > 0) {
      std::string reasons;
      for (const auto& n : r.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + n;
      r.notes.push_back(fmt::format("the SM clock was throttled during {} of {} samples ({})",
                                    *r.throttled, r.samples, reasons));
    }
  }

  if (o.hot) {
    r.hot = measure_hot(sampler, o, estimate_ms, deadline);
    r.launch_bound = is_launch_bound(*r.hot);
    if (r.launch_bound) r.notes.emplace_back(kLaunchBoundNote);
    if (!o.cold) r.gpu = r.hot->gpu;
  }
  if (monitor) r.clock_after = monitor->sm_clock_mhz();

  r.GBps = rate(o.bytes, r.gpu->median, 1e9);
  r.TFLOPs = rate(o.flops, r.gpu->median, 1e12);
  rt.monitor().idle(stream);  // every measurement ended by waiting for the stream
  r.elapsed = seconds_since(started);
  return r;
}

BenchLine line_of(const BenchResult& r) {
  BenchLine l;
  l.name = r.name;
  l.mode = r.mode;
  l.samples = r.samples;
  l.gpu = r.gpu;
  if (r.cpu) l.cpu_median = r.cpu->median;
  l.GBps = r.GBps;
  l.TFLOPs = r.TFLOPs;
  if (r.hot) {
    l.hot_gpu_median = r.hot->gpu.median;
    l.hot_batch_size = r.hot->batch_size;
  }
  l.throttled = r.throttled;
  l.launch_bound = r.launch_bound;
  return l;
}

std::string format_ms(double ms) {
  const auto [scale, unit] = time_unit(ms);
  return fmt::format("{:.3f} {}", ms * scale, unit);
}

std::string format_line(const BenchLine& l) {
  std::string out = l.name.empty() ? "cu.bench" : l.name;
  if (l.gpu) {
    const Summary& g = *l.gpu;
    const auto [scale, unit] = time_unit(g.median);
    out += fmt::format("  gpu {:.3f} {}", g.median * scale, unit);
    if (!std::isnan(g.noise)) out += " ±" + percent(g.noise);
    if (l.mode == "hot") {
      out += fmt::format(" (median of {} batches", g.count);
      if (l.hot_batch_size) out += fmt::format(" of {}", *l.hot_batch_size);
    } else {
      out += fmt::format(" (median of {}", l.samples ? l.samples : g.count);
    }
    if (!std::isnan(g.p10) && !std::isnan(g.p90)) {
      out += fmt::format(", p10 {:.3f} p90 {:.3f}", g.p10 * scale, g.p90 * scale);
    }
    out += ")";
  }
  if (l.cpu_median) out += "  cpu " + format_ms(*l.cpu_median);
  if (l.GBps) out += "  " + throughput(*l.GBps) + " GB/s";
  if (l.TFLOPs) out += "  " + throughput(*l.TFLOPs) + " TFLOP/s";
  if (l.hot_gpu_median && l.mode != "hot") out += "  hot " + format_ms(*l.hot_gpu_median);
  out += "  [" + (l.mode.empty() ? std::string("cold") : l.mode) + "]";
  if (l.throttled && *l.throttled > 0) {
    out += fmt::format("  throttled {}/{}", *l.throttled, l.samples);
  }
  if (l.launch_bound) out += std::string("  ") + kLaunchBoundNote;
  return out;
}

}  // namespace culua::detail::measure
