#include "measure/counters.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "fmt/format.h"
#include "measure/nvml.hpp"
#include "measure/plot.hpp"

namespace culua::detail::measure {

namespace {

// Non-tensor floating-point work per SM per clock (an FMA counts 2), by compute capability, from
// NVIDIA's architecture whitepapers and the CUDA programming guide's arithmetic-throughput table.
struct ArchRates {
  int major, minor;
  const char* name;
  double fp64, fp32, fp16;  // FLOP per clock per SM
  unsigned typical_mhz;     // when NVML cannot say
};
constexpr ArchRates kArchRates[] = {
    {7, 0, "Volta (sm_70)", 64, 128, 256, 1530},
    {7, 5, "Turing (sm_75)", 4, 128, 256, 1590},
    {8, 0, "Ampere A100 (sm_80)", 64, 128, 512, 1410},
    {8, 6, "Ampere (sm_86)", 4, 256, 256, 1770},
    {8, 7, "Orin (sm_87)", 4, 256, 256, 1300},
    {8, 9, "Ada (sm_89)", 4, 256, 256, 2520},
    {9, 0, "Hopper (sm_90)", 128, 256, 512, 1980},
    {10, 0, "Blackwell (sm_100)", 128, 256, 512, 1965},
    {12, 0, "Blackwell (sm_120)", 4, 256, 256, 2600},
};

double value_of(const CounterResult& r, std::string_view name) {
  for (size_t i = 0; i < r.names.size() && i < r.values.size(); ++i) {
    if (r.names[i] == name) return r.values[i];
  }
  return NAN;
}

double nan_sum(std::initializer_list<double> v) {
  double s = 0;
  bool any = false;
  for (double x : v) {
    if (std::isnan(x)) continue;
    s += x;
    any = true;
  }
  return any ? s : NAN;
}

std::string pct(double share) {
  return fmt::format("{:.1f}%", 100 * share);
}

}  // namespace

DevicePeaks flop_peaks(const DeviceInfo& info, std::optional<unsigned> clock_mhz) {
  DevicePeaks p;
  const ArchRates* a = nullptr;
  for (const ArchRates& r : kArchRates) {
    if (r.major == info.cc_major && r.minor == info.cc_minor) a = &r;
  }
  if (!a) {
    p.flops_how = fmt::format(
        "no FLOP rates: compute capability {}.{} is not in culua's table of architectures",
        info.cc_major, info.cc_minor);
    return p;
  }
  const unsigned mhz = clock_mhz.value_or(a->typical_mhz);
  const double per_s = info.sm_count * mhz * 1e6 / 1e12;
  p.fp64_TFLOPs = a->fp64 * per_s;
  p.fp32_TFLOPs = a->fp32 * per_s;
  p.fp16_TFLOPs = a->fp16 * per_s;
  p.flops_how = fmt::format(
      "{} table (non-tensor FLOP per clock per SM: FP64 {:g}, FP32 {:g}, FP16 {:g}) x {} SMs x {} "
      "MHz ({})",
      a->name, a->fp64, a->fp32, a->fp16, info.sm_count, mhz,
      clock_mhz ? "the highest SM clock, NVML" : "a typical boost clock: NVML did not say");
  return p;
}

const DevicePeaks& device_peaks(Runtime& rt, int device) {
  static std::mutex m;
  static std::map<int, DevicePeaks> known;
  std::lock_guard lock(m);
  if (auto it = known.find(device); it != known.end()) return it->second;
  Backend& b = rt.backend();
  const DeviceInfo info = b.device_info(device);
  std::optional<unsigned> clock;
  if (auto mon = GpuMonitor::for_pci_bus_id(info.pci_bus_id)) clock = mon->max_sm_clock_mhz();
  DevicePeaks p = flop_peaks(info, clock);
  // The bandwidth a plain copy reaches: 256 MiB each way (far past the L2), five times, the
  // fastest.
  DeviceSelection select(rt, device);
  const int64_t n = (256 << 20) / 4;
  Stream& s = rt.current_stream();
  const Array src = empty(rt, Shape{n}, DType::F32, Location::Device, &s);
  const Array dst = empty(rt, Shape{n}, DType::F32, Location::Device, &s);
  fill(rt, src, Scalar::real(1.0), &s);
  copy(rt, dst, src, &s);  // warm
  double best = INFINITY;
  for (int i = 0; i < 5; ++i) {
    auto e0 = b.create_event(device, true);
    auto e1 = b.create_event(device, true);
    e0->record(s);
    copy(rt, dst, src, &s);
    e1->record(s);
    e1->synchronize();
    best = std::min(best, e0->elapsed_ms(*e1));
  }
  const double bytes = 2.0 * static_cast<double>(n) * 4;
  p.dram_GBps = bytes / (best * 1e-3) / 1e9;
  p.dram_how = fmt::format(
      "measured: a device-to-device copy of 256 MiB, the fastest of 5, {:.0f} GB/s read + write",
      p.dram_GBps);
  return known.emplace(device, std::move(p)).first->second;
}

CounterSummary summarize_counters(const CounterResult& r, const DevicePeaks& peaks,
                                  double bench_ms) {
  CounterSummary c;
  c.range_ms = value_of(r, "gpu__time_duration.sum") * 1e-6;
  c.time_ms = bench_ms > 0 ? bench_ms : c.range_ms;
  // Shares of peak over the range's elapsed cycles, to shares over the benchmark's time: the
  // range also holds the profiler's own start and stop, when nothing of fn runs.
  const double scale = c.range_ms > c.time_ms && c.time_ms > 0 ? c.range_ms / c.time_ms : 1.0;
  c.dram_read = value_of(r, "dram__bytes_read.sum");
  c.dram_write = value_of(r, "dram__bytes_write.sum");
  const double bytes = nan_sum({c.dram_read, c.dram_write});
  if (c.time_ms > 0) c.dram_GBps = bytes / (c.time_ms * 1e-3) / 1e9;
  c.dram_share = c.dram_GBps / peaks.dram_GBps;
  c.dram_throughput =
      scale * value_of(r, "dram__throughput.avg.pct_of_peak_sustained_elapsed") / 100;
  c.sm_throughput = scale * value_of(r, "sm__throughput.avg.pct_of_peak_sustained_elapsed") / 100;
  c.memory_throughput =
      scale * value_of(r, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") / 100;
  c.occupancy = value_of(r, "sm__warps_active.avg.pct_of_peak_sustained_active") / 100;
  c.l1_hit = value_of(r, "l1tex__t_sector_hit_rate.pct") / 100;
  c.l2_hit = value_of(r, "lts__t_sector_hit_rate.pct") / 100;
  auto ops = [&](const char* p) {
    auto v = [&](const char* op) {
      return value_of(r, fmt::format("sm__sass_thread_inst_executed_op_{}{}_pred_on.sum", p, op));
    };
    const double fma = v("fma");
    return nan_sum({v("add"), v("mul"), std::isnan(fma) ? NAN : 2 * fma});
  };
  c.fp64_flops = ops("d");
  c.fp32_flops = ops("f");
  c.fp16_flops = ops("h");
  c.tensor_instructions = value_of(r, "sm__inst_executed_pipe_tensor.sum");
  c.flops = nan_sum({c.fp64_flops, c.fp32_flops, c.fp16_flops});
  double most = 0, peak = NAN;
  for (auto [name, f, pk] : {std::tuple{"fp64", c.fp64_flops, peaks.fp64_TFLOPs},
                             std::tuple{"fp32", c.fp32_flops, peaks.fp32_TFLOPs},
                             std::tuple{"fp16", c.fp16_flops, peaks.fp16_TFLOPs}}) {
    if (f > most) {
      most = f;
      c.precision = name;
      peak = pk;
    }
  }
  if (c.time_ms > 0 && c.flops >= 0) c.TFLOPs = c.flops / (c.time_ms * 1e-3) / 1e12;
  if (!c.precision.empty()) c.flops_share = (most / (c.time_ms * 1e-3) / 1e12) / peak;
  if (bytes > 0 && c.flops > 0) c.intensity = c.flops / bytes;

  // The verdict, as Nsight Compute's speed of light reads: the larger of the memory and compute
  // throughputs (each a share of its own peak) decides when it reaches 60%; below that on both,
  // the work is bound by latency (too little parallelism or too much waiting), not a peak.
  const double memory = std::max(std::isnan(c.dram_throughput) ? 0 : c.dram_throughput,
                                 std::isnan(c.memory_throughput) ? 0 : c.memory_throughput);
  const double compute = std::isnan(c.sm_throughput) ? 0 : c.sm_throughput;
  if (std::isnan(c.dram_throughput) && std::isnan(c.memory_throughput) &&
      std::isnan(c.sm_throughput)) {
    c.verdict = "no verdict: the throughput metrics were not measured";
    return c;
  }
  constexpr double kNear = 0.6;
  std::string dram = std::isnan(c.dram_GBps)
                         ? std::string()
                         : fmt::format("; DRAM {:.0f} GB/s, {} of the measured copy's {:.0f} GB/s",
                                       c.dram_GBps, pct(c.dram_share), peaks.dram_GBps);
  std::string fl = c.precision.empty() || std::isnan(c.flops_share)
                       ? std::string()
                       : fmt::format("; {:.2f} TFLOP/s {}, {} of its {:.1f} TFLOP/s peak", c.TFLOPs,
                                     c.precision, pct(c.flops_share),
                                     c.precision == "fp64"   ? peaks.fp64_TFLOPs
                                     : c.precision == "fp32" ? peaks.fp32_TFLOPs
                                                             : peaks.fp16_TFLOPs);
  if (std::max(memory, compute) >= kNear) {
    if (memory >= compute) {
      c.bound = "memory";
      c.bound_share = memory;
      c.verdict = fmt::format("memory-bound: memory throughput at {} of peak (compute {}){}",
                              pct(memory), pct(compute), dram);
    } else {
      c.bound = "compute";
      c.bound_share = compute;
      c.verdict = fmt::format("compute-bound: SM throughput at {} of peak (memory {}){}",
                              pct(compute), pct(memory), fl);
    }
  } else {
    c.bound = "latency";
    c.bound_share = std::max(memory, compute);
    c.verdict = fmt::format(
        "latency-bound: neither memory ({}) nor compute ({}) near its peak{}{}", pct(memory),
        pct(compute),
        std::isnan(c.occupancy) ? "" : fmt::format("; achieved occupancy {}", pct(c.occupancy)),
        dram);
  }
  return c;
}

void plot_roofline(const std::vector<RooflinePoint>& points, const DevicePeaks& peaks,
                   const std::string& file, const std::string& title, const std::string& who) {
  const std::string format = plot_format(file, who);
  std::vector<const RooflinePoint*> placed;
  for (const RooflinePoint& p : points) {
    if (p.intensity > 0 && p.TFLOPs > 0 && std::isfinite(p.intensity) && std::isfinite(p.TFLOPs))
      placed.push_back(&p);
  }
  if (placed.empty()) {
    fail(ErrorKind::Value,
         "{}: no point can be placed on the roofline (each needs floating-point operations and "
         "DRAM bytes counted: cu.bench(fn, {{counters = true}}) on the CUDA backend)",
         who);
  }
  if (!(peaks.dram_GBps > 0)) fail(ErrorKind::Value, "{}: the device's DRAM peak is unknown", who);
  auto quoted = [](const std::string& s) { return gnuplot_quoted(s); };
  run_gnuplot_plot(
      file,
      [&](const std::string& data_path) {
        PlotScript out;
        double lo = INFINITY, hi = 0, ylo = INFINITY, yhi = 0;
        for (const RooflinePoint* p : placed) {
          std::string label = p->label;
          for (char& ch : label) {
            if (ch == '\t' || ch == '\n') ch = ' ';
          }
          out.data += fmt::format("{}\t{}\t{}\n", p->intensity, p->TFLOPs, label);
          lo = std::min(lo, p->intensity);
          hi = std::max(hi, p->intensity);
          ylo = std::min(ylo, p->TFLOPs);
          yhi = std::max(yhi, p->TFLOPs);
          ++out.points;
        }
        const double bw = peaks.dram_GBps / 1e3;  // TB/s: TFLOP/s = intensity x TB/s
        std::string roofs;
        int n = 0;
        for (auto [name, pk] :
             {std::pair{"FP64", peaks.fp64_TFLOPs}, std::pair{"FP32", peaks.fp32_TFLOPs},
              std::pair{"FP16", peaks.fp16_TFLOPs}}) {
          if (!(pk > 0)) continue;
          lo = std::min(lo, pk / bw);
          hi = std::max(hi, pk / bw);
          yhi = std::max(yhi, pk);
          roofs += fmt::format("{}(x < {} ? x * {} : {}) with lines lw 2 title {}, ",
                               n == 0 ? "" : "     ", pk / bw, bw, pk,
                               quoted(fmt::format("{} roof: {:.1f} TFLOP/s, {:.0f} GB/s", name, pk,
                                                  peaks.dram_GBps)));
          roofs += "\\\n";
          ++n;
        }
        if (n == 0) {
          roofs = fmt::format("x * {} with lines lw 2 title {}, \\\n", bw,
                              quoted(fmt::format("DRAM: {:.0f} GB/s", peaks.dram_GBps)));
        }
        std::string& s = out.script;
        s += terminal_lines(format, file);
        s += "set datafile separator \"\\t\"\n";
        if (!title.empty()) s += "set title " + quoted(title) + "\n";
        s += "set logscale xy 10\n";
        s += fmt::format("set xrange [{}:{}]\n", lo / 4, hi * 30);  // room for the labels
        s += fmt::format("set yrange [{}:{}]\n", ylo / 4, yhi * 2);
        s += "set xlabel \"arithmetic intensity (FLOP per DRAM byte)\"\n";
        s += "set ylabel \"TFLOP/s\"\n";
        s += "set grid\nset key below\nset samples 400\n";
        s += "plot " + roofs + "     " + quoted(data_path) +
             " using 1:2 with points pt 7 ps 1.4 title \"measured\", \\\n     " +
             quoted(data_path) +
             " every 2 using 1:2:3 with labels offset 1,1 left notitle, \\\n     " +
             quoted(data_path) + " every 2::1 using 1:2:3 with labels offset 1,-1 left notitle\n";
        out.series = static_cast<size_t>(n);
        return out;
      },
      who);
}

void plot_roofline_rows(const std::vector<Value>& rows,
                        const std::vector<std::string>& label_fields, const std::string& file,
                        const std::string& title, const std::string& who) {
  std::vector<RooflinePoint> points;
  std::optional<DevicePeaks> peaks;
  for (const Value& row : rows) {
    const Value* c = row.get("counters");
    if (!c || !c->is_object()) continue;
    RooflinePoint p;
    p.intensity = c->number_at("intensity").value_or(NAN);
    p.TFLOPs = c->number_at("TFLOPs").value_or(NAN);
    if (const Value* prec = c->get("precision"); prec && prec->is_string())
      p.precision = prec->as_string();
    for (const std::string& f : label_fields) {
      if (const Value* v = row.at_path(f))
        p.label += (p.label.empty() ? "" : " ") + f + "=" + to_text(*v);
    }
    if (p.label.empty()) {
      if (const Value* n = row.get("name"); n && n->is_string()) p.label = n->as_string();
    }
    points.push_back(std::move(p));
    if (!peaks) {
      if (const Value* pk = c->get("peaks"); pk && pk->is_object()) {
        DevicePeaks d;
        d.dram_GBps = pk->number_at("dram_GBps").value_or(NAN);
        d.fp64_TFLOPs = pk->number_at("fp64_TFLOPs").value_or(NAN);
        d.fp32_TFLOPs = pk->number_at("fp32_TFLOPs").value_or(NAN);
        d.fp16_TFLOPs = pk->number_at("fp16_TFLOPs").value_or(NAN);
        peaks = d;
      }
    }
  }
  if (points.empty() || !peaks) {
    fail(ErrorKind::Value,
         "{}: a roofline needs results with hardware counters (cu.bench(fn, {{counters = true}}) "
         "on the CUDA backend); no row has them",
         who);
  }
  plot_roofline(points, *peaks, file, title, who);
}

}  // namespace culua::detail::measure
