#include "measure/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace culua::detail::measure {

namespace {

// Sweep name and parameters sorted by name; a repeated key gets "#2", "#3", ... so that a sweep
// run twice in one file matches the second run of the other file.
std::vector<std::vector<std::string>> point_keys(const ResultFile& f) {
  std::map<std::string, int> seen;
  std::vector<std::vector<std::string>> keys;
  for (const Sweep& s : f.sweeps) {
    auto& sk = keys.emplace_back();
    for (const Point& p : s.points) {
      Value::Object params = p.params;
      std::sort(params.begin(), params.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string key = to_json(Value(s.name)) + to_json(Value(std::move(params)));
      const int n = ++seen[key];
      if (n > 1) key += fmt::format("#{}", n);
      sk.push_back(std::move(key));
    }
  }
  return keys;
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  if (l.size() > 80) l = l.substr(0, 77) + "...";
  return l;
}

Comparison judge(const Sweep& s, const Point& old_p, const Point& new_p,
                 const CompareOptions& options) {
  Comparison c;
  c.sweep = s.name;
  c.axes = s.axes;
  c.params = new_p.params;
  if (!old_p.ok || !new_p.ok) {
    c.verdict = Verdict::Failed;
    if (!old_p.ok) c.note = "old: " + first_line(old_p.error);
    if (!new_p.ok) c.note += (c.note.empty() ? "" : "; ") + ("new: " + first_line(new_p.error));
    return c;
  }
  const auto new_m = primary_metric(new_p, options.metric);
  const auto old_m = primary_metric(old_p, new_m ? new_m->path : options.metric);
  c.metric = new_m ? new_m->path : options.metric;
  if (old_m) c.old_value = old_m->value;
  if (new_m) c.new_value = new_m->value;
  if (!new_m || !old_m) {
    c.verdict = Verdict::Unknown;
    if (c.metric.empty()) {
      c.note = "no numeric result";
    } else {
      c.note = fmt::format("no {} in the {} file", c.metric, new_m ? "old" : "new");
    }
    return c;
  }
  if (!(old_m->value > 0) || !std::isfinite(old_m->value) || !std::isfinite(new_m->value)) {
    c.verdict = Verdict::Unknown;
    c.note = "old value is not a positive number";
    return c;
  }
  c.diff = (new_m->value - old_m->value) / old_m->value;
  c.noise = std::max(old_m->noise, new_m->noise);
  if (std::fabs(c.diff) <= std::max(c.noise, options.threshold)) {
    c.verdict = Verdict::Same;
  } else {
    const bool better = new_m->lower_is_better ? c.diff < 0 : c.diff > 0;
    c.verdict = better ? Verdict::Faster : Verdict::Slower;
  }
  return c;
}

Comparison one_sided(const Sweep& s, const Point& p, Verdict v, const CompareOptions& options) {
  Comparison c;
  c.sweep = s.name;
  c.axes = s.axes;
  c.params = p.params;
  c.verdict = v;
  if (auto m = primary_metric(p, options.metric)) {
    c.metric = m->path;
    (v == Verdict::Added ? c.new_value : c.old_value) = m->value;
  }
  if (!p.ok) c.note = "failed: " + first_line(p.error);
  return c;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Same:
      return "same";
    case Verdict::Faster:
      return "faster";
    case Verdict::Slower:
      return "slower";
    case Verdict::Added:
      return "added";
    case Verdict::Removed:
      return "removed";
    case Verdict::Failed:
      return "failed";
    case Verdict::Unknown:
      return "unknown";
  }
  return "?";
}

std::vector<Comparison> compare(const ResultFile& old_file, const ResultFile& new_file,
                                const CompareOptions& options) {
  const auto old_keys = point_keys(old_file);
  const auto new_keys = point_keys(new_file);
  std::map<std::string, std::pair<size_t, size_t>> old_index;
  for (size_t s = 0; s < old_keys.size(); ++s) {
    for (size_t p = 0; p < old_keys[s].size(); ++p) old_index[old_keys[s][p]] = {s, p};
  }
  std::vector<std::vector<bool>> matched(old_keys.size());
  for (size_t s = 0; s < old_keys.size(); ++s) matched[s].assign(old_keys[s].size(), false);

  std::vector<std::string> names;
  for (const auto* f : {&new_file, &old_file}) {
    for (const Sweep& s : f->sweeps) {
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
    }
  }
  std::vector<Comparison> out;
  for (const std::string& name : names) {
    for (size_t s = 0; s < new_file.sweeps.size(); ++s) {
      const Sweep& ns = new_file.sweeps[s];
      if (ns.name != name) continue;
      for (size_t p = 0; p < ns.points.size(); ++p) {
        const auto it = old_index.find(new_keys[s][p]);
        if (it == old_index.end()) {
          out.push_back(one_sided(ns, ns.points[p], Verdict::Added, options));
          continue;
        }
        const auto [os, op] = it->second;
        matched[os][op] = true;
        out.push_back(judge(ns, old_file.sweeps[os].points[op], ns.points[p], options));
      }
    }
    for (size_t s = 0; s < old_file.sweeps.size(); ++s) {
      const Sweep& os = old_file.sweeps[s];
      if (os.name != name) continue;
      for (size_t p = 0; p < os.points.size(); ++p) {
        if (!matched[s][p]) out.push_back(one_sided(os, os.points[p], Verdict::Removed, options));
      }
    }
  }
  return out;
}

std::string comparison_markdown(const std::vector<Comparison>& all) {
  std::string out;
  size_t begin = 0;
  while (begin < all.size()) {
    size_t end = begin;
    while (end < all.size() && all[end].sweep == all[begin].sweep) ++end;
    std::vector<std::string> axes = all[begin].axes;
    std::vector<std::string> metrics;
    std::vector<double> times;
    for (size_t i = begin; i < end; ++i) {
      const Comparison& c = all[i];
      for (const auto& [k, _] : c.params) {
        if (std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
      }
      if (!c.metric.empty() &&
          std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end()) {
        metrics.push_back(c.metric);
      }
      if (is_milliseconds(c.metric)) {
        if (c.old_value) times.push_back(*c.old_value);
        if (c.new_value) times.push_back(*c.new_value);
      }
    }
    const bool all_times = std::all_of(metrics.begin(), metrics.end(),
                                       [](const std::string& m) { return is_milliseconds(m); });
    const TimeUnit unit = all_times ? choose_time_unit(times) : TimeUnit{"", 1.0};
    const std::string suffix = all_times && !metrics.empty() ? fmt::format(" ({})", unit.name) : "";

    Table t;
    for (const std::string& a : axes) {
      t.header.push_back(a);
      t.numeric.push_back(true);
    }
    const bool metric_column = metrics.size() > 1;
    if (metric_column) {
      t.header.emplace_back("metric");
      t.numeric.push_back(false);
    }
    for (const std::string& h : {"old" + suffix, "new" + suffix, std::string("diff"),
                                 std::string("noise"), std::string("status")}) {
      t.header.push_back(h);
      t.numeric.push_back(h != "status");
    }
    for (size_t i = begin; i < end; ++i) {
      const Comparison& c = all[i];
      auto& row = t.rows.emplace_back();
      for (size_t a = 0; a < axes.size(); ++a) {
        const Value* v = find(c.params, axes[a]);
        row.push_back(v ? to_text(*v) : std::string());
        if (v && !v->is_number()) t.numeric[a] = false;
      }
      if (metric_column) row.push_back(c.metric);
      const auto value = [&](const std::optional<double>& v) {
        return v ? format_significant(*v * unit.per_ms) : std::string();
      };
      row.push_back(value(c.old_value));
      row.push_back(value(c.new_value));
      const bool judged = c.verdict == Verdict::Same || c.verdict == Verdict::Faster ||
                          c.verdict == Verdict::Slower;
      row.push_back(judged ? fmt::format("{:+.1f}%", c.diff * 100) : std::string());
      row.push_back(judged ? fmt::format("{:.1f}%", c.noise * 100) : std::string());
      row.push_back(c.note.empty() ? verdict_name(c.verdict)
                                   : fmt::format("{} ({})", verdict_name(c.verdict), c.note));
    }
    if (!out.empty()) out += "\n";
    out += "### " + all[begin].sweep;
    if (metrics.size() == 1) out += " (" + metrics[0] + ")";
    out += "\n\n" + markdown(t);
    begin = end;
  }
  return out;
}

std::string comparison_summary(const std::vector<Comparison>& c) {
  const auto count = [&](Verdict v) {
    return std::count_if(c.begin(), c.end(), [v](const Comparison& x) { return x.verdict == v; });
  };
  return fmt::format(
      "{} point{}: {} same, {} faster, {} slower, {} added, {} removed, {} failed, {} "
      "unknown",
      c.size(), c.size() == 1 ? "" : "s", count(Verdict::Same), count(Verdict::Faster),
      count(Verdict::Slower), count(Verdict::Added), count(Verdict::Removed),
      count(Verdict::Failed), count(Verdict::Unknown));
}

}  // namespace culua::detail::measure
