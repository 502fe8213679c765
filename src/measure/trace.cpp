#include "measure/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/base/error.hpp"
#include "core/base/json.hpp"
#include "core/runtime/sandbox.hpp"
#include "measure/profile.hpp"

namespace culua::detail::measure {

namespace {

const char* category_name(OpCategory c) {
  switch (c) {
    case OpCategory::Copy:
      return "copy";
    case OpCategory::Kernel:
      return "kernel";
    case OpCategory::Library:
      return "library";
    default:
      return "other";
  }
}

struct Interval {
  double t0, t1;
};

// Sorts and merges overlapping intervals; returns the total length.
double merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.t0 < b.t0; });
  size_t out = 0;
  for (const Interval& i : v) {
    if (i.t1 <= i.t0) continue;
    if (out > 0 && i.t0 <= v[out - 1].t1) {
      v[out - 1].t1 = std::max(v[out - 1].t1, i.t1);
    } else {
      v[out++] = i;
    }
  }
  v.resize(out);
  double total = 0;
  for (const Interval& i : v) total += i.t1 - i.t0;
  return total;
}

}  // namespace

std::string TraceSummary::text() const {
  std::string s = fmt::format("trace: {} operations over {:.3f} ms", ops, span_ms);
  if (dropped > 0) {
    s += fmt::format(" ({} more not recorded: past the limit, or the sandbox's heap)", dropped);
  }
  s += "\n";
  s += fmt::format("  {:<24} {:>8} {:>12} {:>8} {:>12}\n", "stream", "ops", "busy ms", "busy %",
                   "bytes");
  for (const StreamSummary& st : streams) {
    s += fmt::format("  {:<24} {:>8} {:>12.3f} {:>7.1f}% {:>12}\n", st.name, st.ops, st.busy_ms,
                     span_ms > 0 ? 100 * st.busy_ms / span_ms : 0.0,
                     format_bytes(static_cast<double>(st.bytes)));
  }
  s += fmt::format(
      "  any stream busy {:.3f} ms ({:.1f}% of the span); two or more at once {:.3f} ms: overlap "
      "{:.1f}% of the busy time\n",
      busy_ms, span_ms > 0 ? 100 * busy_ms / span_ms : 0.0, overlap_ms, 100 * overlap);
  return s;
}

TraceRecorder::TraceRecorder(Runtime& rt, uint64_t limit) : rt_(rt), limit_(limit), clock_(rt) {
  start_host_ = clock_.origin(rt.device());
  rt.monitor().add_observer(this);
  ++rt.monitor().sites_wanted;
}

TraceRecorder::~TraceRecorder() {
  stop();
  if (charge_ && charged_ > 0) charge_(-charged_);
}

bool TraceRecorder::keep(int64_t bytes) {
  if (!charge_) return true;
  if (!charge_(bytes)) return false;
  charged_ += bytes;
  return true;
}

namespace {

// What a record holds beyond its strings: its share of the vector (grown by doubling: up to twice
// the element) and, for a device operation, its two timing events with their state.
constexpr int64_t kEventBytes = 256;

}  // namespace

void TraceRecorder::begin_op(const OpInfo& op, Stream& s) {
  if (ops_.size() >= limit_ ||
      !keep(static_cast<int64_t>(2 * sizeof(DeviceOp) + std::char_traits<char>::length(op.name) +
                                 2 * kEventBytes + 64))) {
    ++dropped_;
    open_.push_back(SIZE_MAX);
    return;
  }
  clock_.origin(s.device());
  DeviceOp d{op.name,
             op.category,
             op.bytes,
             s.device(),
             s.id(),
             &s == rt_.backend().default_stream(s.device()).get(),
             rt_.monitor().site ? rt_.monitor().site() : std::string(),
             steady_seconds(),
             0,
             rt_.backend().create_event(s.device(), true),
             rt_.backend().create_event(s.device(), true)};
  if (op.covers) d.covers = op.covers;
  d.start->record(s);
  open_.push_back(ops_.size());
  ops_.push_back(std::move(d));
}

void TraceRecorder::end_op(const OpInfo&, Stream& s) {
  if (open_.empty()) return;
  const size_t i = open_.back();
  open_.pop_back();
  if (i == SIZE_MAX) return;
  DeviceOp& d = ops_[i];
  d.end->record(s);
  d.host_t1 = steady_seconds();
}

void TraceRecorder::host_wait(const char* what, bool implicit, double t0, double t1) {
  if (host_.size() >= limit_ || !keep(static_cast<int64_t>(2 * sizeof(HostSpan) + 64))) return;
  host_.push_back(HostSpan{what, implicit ? "implicit wait" : "wait",
                           rt_.monitor().site ? rt_.monitor().site() : std::string(), t0, t1});
}

void TraceRecorder::host_op(const OpInfo& op, double t0, double t1) {
  if (host_.size() >= limit_ || !keep(static_cast<int64_t>(2 * sizeof(HostSpan) + 64))) return;
  host_.push_back(HostSpan{op.name, "host math",
                           rt_.monitor().site ? rt_.monitor().site() : std::string(), t0, t1});
}

void TraceRecorder::host_range(const std::string& name, double t0, double t1,
                               const std::string& site) {
  if (host_.size() >= limit_ || !keep(static_cast<int64_t>(2 * sizeof(HostSpan) + 64))) return;
  host_.push_back(HostSpan{name, "range", site, t0, t1});
}

void TraceRecorder::add_device_rows(const ProfileReport& rep) {
  using Object = json::Value::Object;
  for (const ActivityRecord& r : rep.rows) {
    if (r.t1 < start_host_) continue;
    ProfiledRow row{
        r.name, activity_kind_name(r.kind), rep.line_of(r), r.device, r.stream, r.t0, r.t1, 0, {}};
    Object args{{"site", row.site}};
    if (r.op > 0 && r.op <= rep.op_list.size()) {
      const ProfiledOp& op = rep.op_list[r.op - 1];
      row.host = 0.5 * (op.host_t0 + std::max(op.host_t1, op.host_t0));
      args.emplace_back("operation", op.name);
    }
    if (r.kind == ActivityKind::Kernel && r.registers >= 0) {
      args.emplace_back("grid", fmt::format("{}x{}x{}", r.grid[0], r.grid[1], r.grid[2]));
      args.emplace_back("block", fmt::format("{}x{}x{}", r.block[0], r.block[1], r.block[2]));
      args.emplace_back("registers", r.registers);
      args.emplace_back("shared bytes", r.static_shared + r.dynamic_shared);
    }
    if (r.bytes > 0) args.emplace_back("bytes", r.bytes);
    if (r.graph > 0) args.emplace_back("graph", static_cast<uint64_t>(r.graph));
    row.args = std::move(args);
    profiled_.push_back(std::move(row));
  }
}

void TraceRecorder::stop() {
  if (!recording_) return;
  recording_ = false;
  rt_.monitor().remove_observer(this);
  --rt_.monitor().sites_wanted;
}

void TraceRecorder::resolve() {
  if (resolved_) return;
  stop();
  for (DeviceOp& d : ops_) {
    if (!d.end->recorded()) d.end->record(*rt_.backend().default_stream(d.device));
    d.t0_us = (clock_.time_of(*d.start, d.device) - start_host_) * 1e6;
    d.t1_us = (clock_.time_of(*d.end, d.device) - start_host_) * 1e6;
    d.start.reset();
    d.end.reset();
  }
  resolved_ = true;
}

TraceSummary TraceRecorder::summary() {
  resolve();
  TraceSummary sum;
  sum.ops = ops_.size();
  sum.dropped = dropped_;
  if (ops_.empty()) return sum;
  struct PerStream {
    StreamSummary s;
    std::vector<Interval> iv;
  };
  std::vector<PerStream> per;
  double first = ops_[0].t0_us, last = ops_[0].t1_us;
  for (const DeviceOp& d : ops_) {
    first = std::min(first, d.t0_us);
    last = std::max(last, d.t1_us);
    auto it = std::find_if(per.begin(), per.end(), [&](const PerStream& p) {
      return p.s.device == d.device && p.s.stream == d.stream;
    });
    if (it == per.end()) {
      PerStream p;
      p.s.device = d.device;
      p.s.stream = d.stream;
      p.s.name = d.default_stream ? fmt::format("device {} default stream", d.device)
                                  : fmt::format("device {} stream {}", d.device, d.stream);
      per.push_back(std::move(p));
      it = per.end() - 1;
    }
    ++it->s.ops;
    it->s.bytes += d.bytes;
    it->iv.push_back({d.t0_us, d.t1_us});
  }
  // Busy time per stream, then a sweep over all streams' merged intervals: +1 at a start, -1 at
  // an end; time with a count >= 1 is busy, >= 2 overlapped.
  std::vector<std::pair<double, int>> edges;
  for (PerStream& p : per) {
    p.s.busy_ms = merge(p.iv) / 1e3;
    for (const Interval& i : p.iv) {
      edges.emplace_back(i.t0, +1);
      edges.emplace_back(i.t1, -1);
    }
    sum.streams.push_back(p.s);
  }
  std::sort(edges.begin(), edges.end());
  int active = 0;
  double prev = edges.empty() ? 0 : edges[0].first, busy = 0, overlap = 0;
  for (const auto& [t, delta] : edges) {
    if (active >= 1) busy += t - prev;
    if (active >= 2) overlap += t - prev;
    active += delta;
    prev = t;
  }
  sum.span_ms = (last - first) / 1e3;
  sum.busy_ms = busy / 1e3;
  sum.overlap_ms = overlap / 1e3;
  sum.overlap = busy > 0 ? overlap / busy : 0;
  return sum;
}

void TraceRecorder::write_chrome_json(const std::string& path) {
  resolve();
  using json::Value;
  using Object = Value::Object;
  Value::List events;
  events.emplace_back(Object{
      {"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", Object{{"name", "host"}}}});
  events.emplace_back(Object{{"name", "thread_name"},
                             {"ph", "M"},
                             {"pid", 0},
                             {"tid", 0},
                             {"args", Object{{"name", "Lua"}}}});
  std::vector<std::pair<int, uint64_t>> named;
  for (int dev = 0; dev < rt_.backend().device_count(); ++dev) {
    if (!clock_.has_origin(dev)) continue;
    const std::string name =
        fmt::format("{} {}: {}", backend_name(rt_.kind()) == "cuda" ? "GPU" : "host device", dev,
                    rt_.backend().device_info(dev).name);
    events.emplace_back(Object{{"name", "process_name"},
                               {"ph", "M"},
                               {"pid", static_cast<uint64_t>(dev + 1)},
                               {"args", Object{{"name", name}}}});
  }
  auto us = [&](double steady) { return (steady - start_host_) * 1e6; };
  for (const DeviceOp& d : ops_) {
    if (std::find(named.begin(), named.end(), std::make_pair(d.device, d.stream)) == named.end()) {
      named.emplace_back(d.device, d.stream);
      events.emplace_back(Object{
          {"name", "thread_name"},
          {"ph", "M"},
          {"pid", d.device + 1},
          {"tid", d.stream},
          {"args", Object{{"name", d.default_stream ? std::string("default stream")
                                                    : fmt::format("stream {}", d.stream)}}}});
    }
    const double dur = std::max(d.t1_us - d.t0_us, 0.0);
    Object args{{"bytes", d.bytes}, {"site", d.site}};
    if (!d.covers.empty()) args.emplace_back("covers", d.covers);
    if (dur > 0 && d.bytes > 0)
      args.emplace_back("GB/s", static_cast<double>(d.bytes) / (dur * 1e3));
    events.emplace_back(Object{{"name", d.name},
                               {"cat", category_name(d.category)},
                               {"ph", "X"},
                               {"pid", d.device + 1},
                               {"tid", d.stream},
                               {"ts", d.t0_us},
                               {"dur", dur},
                               {"args", std::move(args)}});
    events.emplace_back(Object{{"name", "enqueue " + d.name},
                               {"cat", "enqueue"},
                               {"ph", "X"},
                               {"pid", 0},
                               {"tid", 0},
                               {"ts", us(d.host_t0)},
                               {"dur", std::max(us(d.host_t1) - us(d.host_t0), 0.0)},
                               {"args", Object{{"site", d.site}}}});
  }
  // The profiler's rows: a track per stream ("device rows"), tid past the trace's own streams.
  constexpr uint64_t kProfiledTid = 1u << 30;
  uint64_t flow = 0;
  std::vector<std::pair<int, uint64_t>> profiled_named;
  for (const ProfiledRow& r : profiled_) {
    const uint64_t tid = kProfiledTid + r.stream;
    if (std::find(profiled_named.begin(), profiled_named.end(),
                  std::make_pair(r.device, r.stream)) == profiled_named.end()) {
      profiled_named.emplace_back(r.device, r.stream);
      events.emplace_back(
          Object{{"name", "thread_name"},
                 {"ph", "M"},
                 {"pid", r.device + 1},
                 {"tid", tid},
                 {"args", Object{{"name", fmt::format("profiled: stream {}", r.stream)}}}});
    }
    const double ts = us(r.t0);
    events.emplace_back(Object{{"name", r.name},
                               {"cat", "profiled " + r.category},
                               {"ph", "X"},
                               {"pid", r.device + 1},
                               {"tid", tid},
                               {"ts", ts},
                               {"dur", std::max(us(r.t1) - ts, 0.0)},
                               {"args", r.args}});
    if (r.host > 0) {  // an arrow from the operation's host slice to the row
      ++flow;
      events.emplace_back(Object{{"name", "queued"},
                                 {"cat", "queued"},
                                 {"ph", "s"},
                                 {"id", flow},
                                 {"pid", 0},
                                 {"tid", 0},
                                 {"ts", us(r.host)}});
      events.emplace_back(Object{{"name", "queued"},
                                 {"cat", "queued"},
                                 {"ph", "f"},
                                 {"bp", "e"},
                                 {"id", flow},
                                 {"pid", r.device + 1},
                                 {"tid", tid},
                                 {"ts", ts}});
    }
  }
  for (const HostSpan& h : host_) {
    const std::string name = h.category == "range"       ? h.name
                             : h.category == "host math" ? "host: " + h.name
                                                         : "wait: " + h.name;
    events.emplace_back(Object{{"name", name},
                               {"cat", h.category},
                               {"ph", "X"},
                               {"pid", 0},
                               {"tid", 0},
                               {"ts", us(h.t0)},
                               {"dur", std::max(us(h.t1) - us(h.t0), 0.0)},
                               {"args", Object{{"site", h.site}}}});
  }
  const Value doc(
      Object{{"traceEvents", std::move(events)},
             {"displayTimeUnit", "ms"},
             {"otherData", Object{{"generator", "culua"}, {"dropped_operations", dropped_}}}});
  check_file_write(path);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) fail(ErrorKind::Value, "cannot write the trace to '{}': cannot open the file", path);
  f << json::write(doc);
  f.close();
  if (!f) fail(ErrorKind::Value, "cannot write the trace to '{}': write failed", path);
}

}  // namespace culua::detail::measure
