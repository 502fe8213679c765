#include "measure/profile.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/base/error.hpp"
#include "core/base/json.hpp"
#include "fmt/format.h"
#include "measure/event_clock.hpp"

namespace culua::detail::measure {

const char* activity_kind_name(ActivityKind k) {
  switch (k) {
    case ActivityKind::Kernel:
      return "kernel";
    case ActivityKind::Copy:
      return "copy";
    case ActivityKind::Memset:
      return "memset";
    default:
      return "other";
  }
}

namespace {

// --- the host backend's rows: events around each operation --------------------------------------

class EventActivity final : public DeviceActivity {
 public:
  explicit EventActivity(Runtime& rt) : rt_(rt), clock_(rt) {}

  void begin_op(uint32_t op, const OpInfo& info, Stream& s) override {
    if (stopped_) return;
    clock_.origin(s.device());
    Pending p{op,
              info.name,
              info.category,
              info.bytes,
              s.device(),
              s.id(),
              rt_.backend().create_event(s.device(), true),
              rt_.backend().create_event(s.device(), true)};
    p.start->record(s);
    open_.push_back(pending_.size());
    pending_.push_back(std::move(p));
  }

  void end_op(uint32_t, Stream& s) override {
    if (open_.empty()) return;
    const size_t i = open_.back();
    open_.pop_back();
    pending_[i].end->record(s);
  }

  void collect(std::vector<ActivityRecord>& out) override {
    // Only operations whose end was recorded (not one being queued now).
    std::vector<Pending> later;
    for (size_t i = 0; i < pending_.size(); ++i) {
      Pending& p = pending_[i];
      if (std::find(open_.begin(), open_.end(), i) != open_.end()) {
        later.push_back(std::move(p));
        continue;
      }
      p.end->synchronize();
      ActivityRecord r;
      r.name = p.name;
      r.kind = p.category == OpCategory::Copy ? ActivityKind::Copy
               : r.name == "fill"             ? ActivityKind::Memset
                                              : ActivityKind::Kernel;
      r.device = p.device;
      r.stream = p.stream;
      r.t0 = clock_.time_of(*p.start, p.device);
      r.t1 = clock_.time_of(*p.end, p.device);
      r.bytes = p.bytes;
      r.op = p.op;
      out.push_back(std::move(r));
    }
    pending_ = std::move(later);
    open_.clear();
    for (size_t i = 0; i < pending_.size(); ++i) open_.push_back(i);
  }

  void stop() override { stopped_ = true; }
  std::string source() const override {
    return "the host streams' task times (an event before and after each operation)";
  }
  uint64_t dropped() const override { return 0; }

 private:
  struct Pending {
    uint32_t op;
    std::string name;
    OpCategory category;
    uint64_t bytes;
    int device;
    uint64_t stream;
    std::shared_ptr<Event> start, end;
  };
  Runtime& rt_;
  bool stopped_ = false;
  EventClock clock_;
  std::vector<Pending> pending_;
  std::vector<size_t> open_;
};

// A name cut to n characters: its start kept (a kernel's name), or its end (a script line, whose
// file name and line number end it).
std::string shorten(const std::string& s, size_t n, bool keep_end = false) {
  if (s.size() <= n) return s;
  return keep_end ? "..." + s.substr(s.size() - (n - 3)) : s.substr(0, n - 3) + "...";
}

double ms(double seconds) {
  return seconds * 1e3;
}

// A kernel's name as the tables show it: without the return type, the parameter list and culua's
// own namespaces ("elementwise_vector<BinaryFast<AddOp, float>>" for "void culua::detail::kernels::
// cuda::(anonymous namespace)::elementwise_vector<...>(long, T1)").
std::string display_name(std::string s) {
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  // The parameter list: the last '(' at template depth 0 that closes at the end.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      const char c = s[i];
      if (c == ')') ++depth;
      if (c == '(' && --depth == 0) {
        if (i > 0) s.erase(i);
        break;
      }
    }
  }
  for (const char* prefix : {"culua::detail::kernels::cuda::", "culua::detail::kernels::",
                             "culua::detail::", "(anonymous namespace)::"}) {
    const std::string p = prefix;
    for (size_t at; (at = s.find(p)) != std::string::npos;) s.erase(at, p.size());
  }
  return s;
}

}  // namespace

std::unique_ptr<DeviceActivity> make_event_activity(Runtime& rt) {
  return std::make_unique<EventActivity>(rt);
}

// --- the profiler
// ---------------------------------------------------------------------------------

Profiler::Profiler(Runtime& rt, bool cupti, uint64_t limit) : rt_(rt), limit_(limit) {
  source_ = cupti ? make_cupti_activity(rt) : make_event_activity(rt);
  rt.monitor().add_observer(this);
}

Profiler::~Profiler() {
  rt_.monitor().remove_observer(this);
  if (source_) source_->stop();
  if (charge_ && charged_ > 0) charge_(-charged_);
}

bool Profiler::keep(int64_t bytes) {
  if (!charge_) return true;
  if (!charge_(bytes)) return false;
  charged_ += bytes;
  return true;
}

Profiler::Mark Profiler::mark() {
  return Mark{static_cast<uint32_t>(ops_.size()), steady_seconds()};
}

void Profiler::begin_op(const OpInfo& op, Stream& s) {
  if (ops_.size() >= limit_ || !keep(static_cast<int64_t>(2 * sizeof(ProfiledOp) + 64))) {
    ++dropped_ops_;
    open_.push_back(0);
    return;
  }
  ops_.push_back(ProfiledOp{op.name, op.category,
                            rt_.monitor().site_id ? rt_.monitor().site_id() : 0, s.device(), s.id(),
                            steady_seconds(), 0});
  const auto id = static_cast<uint32_t>(ops_.size());
  open_.push_back(id);
  source_->begin_op(id, op, s);
}

void Profiler::end_op(const OpInfo&, Stream& s) {
  if (open_.empty()) return;
  const uint32_t id = open_.back();
  open_.pop_back();
  if (id == 0) return;
  ops_[id - 1].host_t1 = steady_seconds();
  source_->end_op(id, s);
}

void Profiler::collect() {
  const size_t before = records_.size();
  source_->collect(records_);
  // Records of the same operation share its stream as culua names it.
  for (size_t i = before; i < records_.size(); ++i) {
    ActivityRecord& r = records_[i];
    if (r.op > 0 && r.op <= ops_.size()) r.stream = ops_[r.op - 1].stream;
  }
  size_t kept = std::min<size_t>(records_.size(), limit_);
  for (size_t i = before; i < kept; ++i) {
    if (!keep(static_cast<int64_t>(2 * sizeof(ActivityRecord) + records_[i].name.size() + 64))) {
      kept = i;
      break;
    }
  }
  if (records_.size() > kept) {
    dropped_ops_ += records_.size() - kept;
    records_.resize(kept);
  }
}

void Profiler::stop() {
  if (!recording_) return;
  recording_ = false;
  rt_.monitor().remove_observer(this);
  collect();
  source_->stop();
}

ProfileReport Profiler::report(const Mark& from) {
  if (recording_) collect();
  ProfileReport rep;
  rep.backend = backend_name(rt_.kind());
  rep.source = source_->source();
  rep.dropped = source_->dropped() + dropped_ops_;
  rep.op_list.assign(ops_.begin() + std::min<size_t>(from.op, ops_.size()), ops_.end());
  rep.ops = rep.op_list.size();
  for (const ActivityRecord& r : records_) {
    const bool mine = r.op > 0 ? r.op > from.op : r.t0 >= from.t;
    if (!mine) continue;
    rep.rows.push_back(r);
    if (r.op > 0) rep.rows.back().op = r.op - from.op;  // indexes op_list
  }
  std::sort(rep.rows.begin(), rep.rows.end(), [](const ActivityRecord& a, const ActivityRecord& b) {
    return a.t0 != b.t0 ? a.t0 < b.t0 : a.t1 < b.t1;
  });
  const SiteTable& sites = rt_.monitor().sites;
  rep.site_names.reserve(sites.size());
  for (uint32_t i = 0; i < sites.size(); ++i) rep.site_names.push_back(sites.name(i));
  rep.records = rep.rows.size();
  if (rep.rows.empty()) return rep;

  // Per device: the span, the union of busy intervals and the holes between them. A record's
  // "idle before" is the hole that ended when it started (the device waited for it).
  std::map<std::string, ProfileRow> kernels, lines;
  std::map<std::string, std::vector<std::string>> line_ops;
  std::vector<ProfileGap> gaps;
  const double origin = rep.rows.front().t0;
  double first = rep.rows.front().t0, last = rep.rows.front().t1;
  std::map<int, std::pair<double, double>> device_span;  // first start, busy end so far
  std::map<int, std::string> device_last_line;
  for (const ActivityRecord& r : rep.rows) {
    first = std::min(first, r.t0);
    last = std::max(last, r.t1);
    const double dur = std::max(r.t1 - r.t0, 0.0);
    rep.device_ms += ms(dur);
    const std::string line = rep.line_of(r);
    const std::string line_key = line.empty() ? "(not from a script line)" : line;
    double idle = 0;
    auto [it, fresh] = device_span.try_emplace(r.device, r.t0, r.t1);
    if (fresh) {
      rep.busy_ms += ms(dur);
    } else {
      double& end = it->second.second;
      if (r.t0 > end) {
        idle = r.t0 - end;
        ++rep.gaps;
        rep.idle_ms += ms(idle);
        gaps.push_back(
            ProfileGap{r.device, ms(end - origin), ms(idle), device_last_line[r.device], line_key});
      }
      if (r.t1 > end) {
        rep.busy_ms += ms(r.t1 - std::max(r.t0, end));
        end = r.t1;
      }
    }
    device_last_line[r.device] = line_key;
    for (auto* table : {&kernels, &lines}) {
      const std::string& key = table == &kernels ? r.name : line_key;
      ProfileRow& row = (*table)[key];
      if (row.calls == 0) {
        row.key = key;
        row.min_us = row.max_us = dur * 1e6;
        if (table == &kernels) row.detail = activity_kind_name(r.kind);
      }
      ++row.calls;
      row.total_ms += ms(dur);
      row.min_us = std::min(row.min_us, dur * 1e6);
      row.max_us = std::max(row.max_us, dur * 1e6);
      row.idle_before_ms += ms(idle);
    }
    if (r.op > 0 && r.op <= rep.op_list.size()) {
      std::vector<std::string>& names = line_ops[line_key];
      const std::string& op = rep.op_list[r.op - 1].name;
      if (std::find(names.begin(), names.end(), op) == names.end()) names.push_back(op);
    }
  }
  rep.span_ms = ms(last - first);
  auto finish = [&](std::map<std::string, ProfileRow>& table, std::vector<ProfileRow>& out) {
    for (auto& [key, row] : table) {
      row.mean_us = row.total_ms * 1e3 / static_cast<double>(row.calls);
      row.share = rep.device_ms > 0 ? row.total_ms / rep.device_ms : 0;
      out.push_back(row);
    }
    std::stable_sort(out.begin(), out.end(), [](const ProfileRow& a, const ProfileRow& b) {
      return a.total_ms > b.total_ms;
    });
  };
  finish(kernels, rep.by_kernel);
  for (auto& [key, names] : line_ops) {
    std::string d;
    for (size_t i = 0; i < names.size() && i < 4; ++i) d += (i ? ", " : "") + names[i];
    if (names.size() > 4) d += fmt::format(" (+{})", names.size() - 4);
    lines[key].detail = d;
  }
  finish(lines, rep.by_line);
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const ProfileGap& a, const ProfileGap& b) { return a.ms > b.ms; });
  if (gaps.size() > 5) gaps.resize(5);
  rep.largest_gaps = std::move(gaps);
  return rep;
}

// --- the report ----------------------------------------------------------------------------------

std::string ProfileReport::line_of(const ActivityRecord& r) const {
  if (r.op == 0 || r.op > op_list.size()) return {};
  const uint32_t site = op_list[r.op - 1].site;
  return site < site_names.size() ? site_names[site] : std::string();
}

std::string ProfileReport::text(size_t top) const {
  std::string s = fmt::format("profile: {} device record{} from {} operation{} ({})\n", records,
                              records == 1 ? "" : "s", ops, ops == 1 ? "" : "s", source);
  if (dropped > 0) {
    s += fmt::format("  {} more not recorded (past the limit or the activity buffers)\n", dropped);
  }
  if (records == 0) return s + "  nothing ran on the device\n";
  s += fmt::format(
      "  span {:.3f} ms: device busy {:.3f} ms ({:.1f}%), idle {:.3f} ms in {} gap{}; device time "
      "of all records {:.3f} ms\n",
      span_ms, busy_ms, span_ms > 0 ? 100 * busy_ms / span_ms : 0.0, idle_ms, gaps,
      gaps == 1 ? "" : "s", device_ms);
  auto table = [&](const char* title, const std::vector<ProfileRow>& list, size_t width) {
    const bool line_rows = title == std::string("by line");
    s += fmt::format("\n  {:<{}} {:>7} {:>10} {:>6} {:>9} {:>9} {:>9} {:>10}  {}\n", title, width,
                     "calls", "total ms", "share", "mean us", "min us", "max us", "idle ms",
                     line_rows ? "operations" : "kind");
    const size_t n = top == 0 ? list.size() : std::min(top, list.size());
    for (size_t i = 0; i < n; ++i) {
      const ProfileRow& r = list[i];
      s += fmt::format(
          "  {:<{}} {:>7} {:>10.3f} {:>5.1f}% {:>9.2f} {:>9.2f} {:>9.2f} {:>10.3f}  {}\n",
          shorten(line_rows ? r.key : display_name(r.key), width, line_rows), width, r.calls,
          r.total_ms, 100 * r.share, r.mean_us, r.min_us, r.max_us, r.idle_before_ms, r.detail);
    }
    if (n < list.size()) s += fmt::format("  ... {} more (:print(0) shows all)\n", list.size() - n);
  };
  table("by kernel", by_kernel, 56);
  table("by line", by_line, 36);
  if (!largest_gaps.empty()) {
    s += "\n  largest idle gaps of the device (\"idle ms\" above: the gap before a row's work):\n";
    for (const ProfileGap& g : largest_gaps) {
      s += fmt::format("  {:>10.3f} ms at {:.3f} ms on device {}, after {} before {}\n", g.ms, g.t0,
                       g.device, g.before, g.after);
    }
  }
  return s;
}

namespace {

json::Value row_json(const ProfileRow& r, const char* key_name, const char* detail_name) {
  return json::Value::Object{
      {key_name, r.key},        {detail_name, r.detail}, {"calls", r.calls},
      {"total_ms", r.total_ms}, {"mean_us", r.mean_us},  {"min_us", r.min_us},
      {"max_us", r.max_us},     {"share", r.share},      {"idle_before_ms", r.idle_before_ms}};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string ProfileReport::json() const {
  using json::Value;
  using Object = Value::Object;
  Value::List kernels, lines, gap_list, records_list;
  for (const ProfileRow& r : by_kernel) kernels.push_back(row_json(r, "name", "kind"));
  for (const ProfileRow& r : by_line) lines.push_back(row_json(r, "line", "operations"));
  for (const ProfileGap& g : largest_gaps) {
    gap_list.push_back(Object{{"device", g.device},
                              {"at_ms", g.t0},
                              {"ms", g.ms},
                              {"after", g.before},
                              {"before", g.after}});
  }
  const double origin = rows.empty() ? 0 : rows.front().t0;
  for (const ActivityRecord& r : rows) {
    Object o{{"name", r.name},
             {"kind", activity_kind_name(r.kind)},
             {"device", r.device},
             {"stream", r.stream},
             {"start_us", (r.t0 - origin) * 1e6},
             {"end_us", (r.t1 - origin) * 1e6},
             {"duration_us", (r.t1 - r.t0) * 1e6},
             {"line", line_of(r)}};
    if (r.op > 0 && r.op <= op_list.size()) o.emplace_back("operation", op_list[r.op - 1].name);
    if (r.kind == ActivityKind::Kernel && r.registers >= 0) {
      o.emplace_back("grid", Value::List{Value(static_cast<uint64_t>(r.grid[0])),
                                         Value(static_cast<uint64_t>(r.grid[1])),
                                         Value(static_cast<uint64_t>(r.grid[2]))});
      o.emplace_back("block", Value::List{Value(static_cast<uint64_t>(r.block[0])),
                                          Value(static_cast<uint64_t>(r.block[1])),
                                          Value(static_cast<uint64_t>(r.block[2]))});
      o.emplace_back("registers", r.registers);
      o.emplace_back("static_shared", r.static_shared);
      o.emplace_back("dynamic_shared", r.dynamic_shared);
    }
    if (r.bytes > 0) o.emplace_back("bytes", r.bytes);
    if (r.graph > 0) o.emplace_back("graph", static_cast<uint64_t>(r.graph));
    records_list.emplace_back(std::move(o));
  }
  const Value doc(Object{{"backend", backend},
                         {"source", source},
                         {"span_ms", span_ms},
                         {"busy_ms", busy_ms},
                         {"idle_ms", idle_ms},
                         {"gaps", gaps},
                         {"device_ms", device_ms},
                         {"records", records},
                         {"operations", ops},
                         {"dropped", dropped},
                         {"by_kernel", std::move(kernels)},
                         {"by_line", std::move(lines)},
                         {"largest_gaps", std::move(gap_list)},
                         {"rows", std::move(records_list)}});
  return json::write(doc, json::Layout{1, true}) + "\n";
}

std::string ProfileReport::csv() const {
  std::string s =
      "kind,name,device,stream,start_us,end_us,duration_us,grid_x,grid_y,grid_z,block_x,block_y,"
      "block_z,registers,static_shared,dynamic_shared,bytes,graph,operation,line\n";
  const double origin = rows.empty() ? 0 : rows.front().t0;
  for (const ActivityRecord& r : rows) {
    const bool kernel = r.kind == ActivityKind::Kernel && r.registers >= 0;
    auto opt = [&](int64_t v) { return kernel ? fmt::format("{}", v) : std::string(); };
    s += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                     activity_kind_name(r.kind), csv_field(r.name), r.device, r.stream,
                     (r.t0 - origin) * 1e6, (r.t1 - origin) * 1e6, (r.t1 - r.t0) * 1e6,
                     opt(r.grid[0]), opt(r.grid[1]), opt(r.grid[2]), opt(r.block[0]),
                     opt(r.block[1]), opt(r.block[2]), opt(r.registers), opt(r.static_shared),
                     opt(r.dynamic_shared), r.bytes, r.graph,
                     csv_field(r.op > 0 && r.op <= op_list.size() ? op_list[r.op - 1].name : ""),
                     csv_field(line_of(r)));
  }
  return s;
}

}  // namespace culua::detail::measure
