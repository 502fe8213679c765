// The profiler's parts that need no GPU: the site table, several observers at once, the report's
// tables and gaps from the host backend's rows, the counters' summary and verdict, the FLOP
// table, and the errors when CUPTI is absent.
#include "helpers.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/ops/elementwise.hpp"
#include "core/runtime/monitor.hpp"
#include "measure/counters.hpp"
#include "measure/profile.hpp"

using namespace culua::detail;
using namespace culua::detail::test;
using namespace culua::detail::measure;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Counts calls and notes its name in `log` at each.
struct Recorder final : OpObserver {
  Recorder(std::string n, std::string* l) : name(std::move(n)), log(l) {}
  std::string name;
  std::string* log;
  void begin_op(const OpInfo&, Stream&) override { *log += "begin " + name + ";"; }
  void end_op(const OpInfo&, Stream&) override { *log += "end " + name + ";"; }
  void host_wait(const char*, bool, double, double) override { *log += "wait " + name + ";"; }
  void host_op(const OpInfo&, double, double) override {}
};

}  // namespace

TEST_CASE("profile: the site table interns each line once") {
  SiteTable t;
  const char* a = "@a.lua";
  const char* b = "@b.lua";
  const uint32_t a1 = t.intern(a, a, 1, "a.lua");
  CHECK(a1 == 1);
  CHECK(t.intern(a, a, 1, "a.lua") == a1);
  CHECK(t.intern(a, a, 2, "a.lua") != a1);
  CHECK(t.intern(b, b, 1, "b.lua") != a1);
  CHECK(t.name(a1) == "a.lua:1");
  CHECK(t.name(0).empty());
  CHECK(t.name(12345).empty());
  // Another chunk at the same address (after a collection) is another line.
  std::string other = "@c.lua";
  const uint32_t c1 = t.intern(a, other.c_str(), 1, "c.lua");
  CHECK(c1 != a1);
  CHECK(t.name(c1) == "c.lua:1");
  // Growth keeps every entry.
  std::vector<uint32_t> ids;
  for (int line = 1; line <= 500; ++line) ids.push_back(t.intern(b, b, line, "b.lua"));
  for (int line = 1; line <= 500; ++line) {
    CHECK(t.intern(b, b, line, "b.lua") == ids[static_cast<size_t>(line - 1)]);
    CHECK(t.name(ids[static_cast<size_t>(line - 1)]) == "b.lua:" + std::to_string(line));
  }
}

TEST_CASE("profile: observers nest, the first one's interval encloses the later ones'") {
  Runtime rt(host_options());
  std::string log;
  Recorder one("1", &log), two("2", &log);
  Monitor& m = rt.monitor();
  m.add_observer(&one);
  m.add_observer(&two);
  m.add_observer(&two);  // once only
  const Array a = full(rt, Shape{8}, DType::F32, Scalar::real(1));
  fill(rt, a, Scalar::real(2));
  rt.synchronize();
  CHECK(contains(log, "begin 1;begin 2;end 2;end 1;"));
  m.remove_observer(&one);
  log.clear();
  fill(rt, a, Scalar::real(3));
  CHECK(log == "begin 2;end 2;");
  m.remove_observer(&two);
  CHECK(m.observer == nullptr);
  log.clear();
  fill(rt, a, Scalar::real(4));
  rt.synchronize();
  CHECK(log.empty());
}

TEST_CASE("profile: the host backend's rows, the tables and the gaps") {
  Runtime rt(host_options());
  uint32_t site = 0;
  rt.monitor().site_id = [&] { return site; };
  const char* src = "@t.lua";
  const uint32_t l1 = rt.monitor().sites.intern(src, src, 1, "t.lua");
  const uint32_t l2 = rt.monitor().sites.intern(src, src, 2, "t.lua");
  const Array a = full(rt, Shape{1 << 16}, DType::F32, Scalar::real(1));
  rt.synchronize();
  Profiler p(rt, false);
  site = l1;
  fill(rt, a, Scalar::real(2));
  fill(rt, a, Scalar::real(3));
  rt.synchronize();
  const double t0 = steady_seconds();
  while (steady_seconds() - t0 < 0.005) {
  }
  site = l2;
  const Array b = binary(rt, BinaryOp::Add, a, a);
  p.stop();
  const ProfileReport rep = p.report();
  rt.monitor().site_id = nullptr;
  CHECK(rep.backend == "host");
  REQUIRE(rep.records >= 3);
  CHECK(rep.by_line.size() == 2);
  const ProfileRow* first = nullptr;
  const ProfileRow* second = nullptr;
  for (const ProfileRow& r : rep.by_line) {
    if (r.key == "t.lua:1") first = &r;
    if (r.key == "t.lua:2") second = &r;
  }
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->calls == 2);
  CHECK(contains(first->detail, "fill"));
  CHECK(second->calls == 1);
  CHECK(second->idle_before_ms >= 4.5);  // the device waited for the host's 5 ms
  CHECK(rep.idle_ms >= 4.5);
  REQUIRE(!rep.largest_gaps.empty());
  CHECK(rep.largest_gaps[0].before == "t.lua:1");
  CHECK(rep.largest_gaps[0].after == "t.lua:2");
  double share = 0;
  for (const ProfileRow& r : rep.by_kernel) share += r.share;
  CHECK(std::abs(share - 1) < 1e-9);
  const std::string text = rep.text();
  CHECK(contains(text, "by kernel"));
  CHECK(contains(text, "t.lua:2"));
  const std::string csv = rep.csv();
  CHECK(std::count(csv.begin(), csv.end(), '\n') == static_cast<long>(rep.records + 1));
  CHECK(contains(rep.json(), "\"by_line\""));
  // A report from a mark: only what came after it.
  CHECK(p.report(ProfileMark{2, t0}).records == rep.records - 2);
}

TEST_CASE("profile: without CUPTI, activity and counters say they are unavailable") {
  setenv("CULUA_CUPTI_LIBRARY", "/nonexistent/libcupti.so.13", 1);
  Runtime rt(host_options());
  const std::string activity = message_of([&] { make_cupti_activity(rt); });
  const std::string counters = message_of([&] {
    measure_counters(
        0, default_counter_metrics(), [] {}, false);
  });
  // Before the variable goes: where the toolkit has CUPTI, it would load then.
  const ErrorKind kind = error_kind_of([&] { make_cupti_activity(rt); });
  unsetenv("CULUA_CUPTI_LIBRARY");
  CHECK(kind == ErrorKind::Unsupported);
  CHECK(contains(activity, "unavailable"));
  CHECK(contains(counters, "hardware counters"));
#if CULUA_HAVE_CUDA
  CHECK(contains(activity, "/nonexistent/libcupti.so.13"));
  CHECK(contains(activity, "CULUA_CUPTI_LIBRARY"));
#else
  CHECK(contains(activity, "without the CUDA toolkit"));
#endif
}

TEST_CASE("counters: the verdict, the rescaling to the benchmark's time, the FLOP table") {
  DeviceInfo h200;
  h200.cc_major = 9;
  h200.cc_minor = 0;
  h200.sm_count = 132;
  DevicePeaks peaks = flop_peaks(h200, 1980u);
  CHECK(std::abs(peaks.fp32_TFLOPs - 66.9) < 0.05);
  CHECK(std::abs(peaks.fp64_TFLOPs - 33.45) < 0.05);
  CHECK(contains(peaks.flops_how, "Hopper"));
  peaks.dram_GBps = 4000;
  DeviceInfo unknown;
  unknown.cc_major = 3;
  CHECK(std::isnan(flop_peaks(unknown, std::nullopt).fp32_TFLOPs));

  auto result = [](std::vector<std::pair<std::string, double>> v) {
    CounterResult r;
    for (auto& [n, x] : v) {
      r.names.push_back(n);
      r.values.push_back(x);
      r.supported.push_back(true);
    }
    return r;
  };
  // An add at 1 GiB: 0.88 ms range around 0.8 ms of kernel; 80% DRAM over the range.
  const CounterResult add = result({{"gpu__time_duration.sum", 880e3},
                                    {"dram__bytes_read.sum", 2.0e9},
                                    {"dram__bytes_write.sum", 1.0e9},
                                    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 80},
                                    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 9},
                                    {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 2.5e8}});
  const CounterSummary a = summarize_counters(add, peaks, 0.8);
  CHECK(a.bound == "memory");
  CHECK(std::abs(a.dram_throughput - 0.88) < 1e-9);  // rescaled by 0.88 / 0.8
  CHECK(std::abs(a.dram_GBps - 3750) < 1e-6);
  CHECK(std::abs(a.dram_share - 3750.0 / 4000) < 1e-9);
  CHECK(a.precision == "fp32");
  CHECK(std::abs(a.intensity - 2.5e8 / 3e9) < 1e-12);
  CHECK(contains(a.verdict, "memory-bound"));
  // A product: compute-bound; FMAs count twice.
  const CounterResult mm = result({{"gpu__time_duration.sum", 21e6},
                                   {"dram__bytes_read.sum", 4e9},
                                   {"dram__bytes_write.sum", 2e8},
                                   {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 5},
                                   {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 85},
                                   {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 5.5e11}});
  const CounterSummary m = summarize_counters(mm, peaks);
  CHECK(m.bound == "compute");
  CHECK(m.fp32_flops == 1.1e12);
  CHECK(std::abs(m.TFLOPs - 1.1e12 / 21e-3 / 1e12) < 1e-9);
  CHECK(contains(m.verdict, "compute-bound"));
  // Neither near its peak: latency-bound.
  const CounterResult small = result({{"gpu__time_duration.sum", 5e3},
                                      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 3},
                                      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 2},
                                      {"sm__warps_active.avg.pct_of_peak_sustained_active", 11}});
  const CounterSummary s = summarize_counters(small, peaks);
  CHECK(s.bound == "latency");
  CHECK(contains(s.verdict, "occupancy 11.0%"));
  // No throughput metric: no verdict.
  CHECK(summarize_counters(result({{"dram__bytes_read.sum", 1}}), peaks).bound.empty());
}
