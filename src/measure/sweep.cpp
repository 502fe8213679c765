#include "measure/sweep.hpp"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/base/error.hpp"

namespace culua::detail::measure {

namespace {

// The progress bar on stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(size_t total) : on_(total > 0 && isatty(STDERR_FILENO) == 1), total_(total) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { clear(); }

  void show(size_t index, const std::string& label) {
    if (!on_) return;
    size_t columns = 80;
    winsize ws{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) columns = ws.ws_col;
    constexpr size_t kWidth = 20;
    const size_t filled = index * kWidth / total_;
    std::string line = fmt::format("[{}>{}] {}/{} ", std::string(filled, '='),
                                   std::string(kWidth - filled - 1, ' '), index + 1, total_);
    line += label;
    if (line.size() >= columns) line.resize(columns - 1);  // a wrapped line cannot be cleared
    std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool on_;
  bool shown_ = false;
  size_t total_;
};

// The file the k-th sweep plotting to `path` writes: path itself, then name-2.png, name-3.png.
std::string numbered_plot_file(SweepSession& s, const std::string& path) {
  const int k = ++s.plot_files[path];
  if (k == 1) return path;
  const size_t dot = path.rfind('.');
  return path.substr(0, dot) + fmt::format("-{}", k) + path.substr(dot);
}

bool is_axis(const std::vector<SweepAxis>& axes, std::string_view name) {
  return std::any_of(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.name == name; });
}

// The point's record: the fields that do not collide, the names of those that do.
Point record(const SweepSpec& spec, const SweepPoint& at, PointRun&& run,
             std::vector<std::string>& collisions) {
  Point p;
  p.params = at.params;
  p.ok = run.status == PointRun::Status::Ok;
  if (!p.ok) {
    p.error = std::move(run.error);
    return p;
  }
  for (auto& [key, value] : run.fields) {
    if (key == "status" || is_axis(spec.axes, key)) {
      if (std::find(collisions.begin(), collisions.end(), key) == collisions.end()) {
        collisions.push_back(key);
      }
    } else {
      p.result.emplace_back(key, std::move(value));
    }
  }
  return p;
}

// Writes the files and the plot, prints the table; returns what could not be written.
std::vector<std::string> write_outputs(const SweepSpec& spec, const Sweep& sweep,
                                       SweepSession& session,
                                       const std::function<Value::Object()>& run_description) {
  const SweepOutputs& out = spec.outputs;
  std::vector<std::string> failures;
  const auto attempt = [&](auto&& write) {
    try {
      write();
    } catch (const Error& e) {
      failures.emplace_back(e.what());
    }
  };
  if (!out.json.empty()) {
    auto& sweeps = session.json_files[out.json];
    sweeps.push_back(sweep);
    attempt([&] {
      write_text_file(
          out.json, results_json({run_description ? run_description() : Value::Object{}, sweeps}));
    });
  }
  if (!out.csv.empty()) {
    auto& sweeps = session.csv_files[out.csv];
    sweeps.push_back(sweep);
    std::vector<const Sweep*> list;
    for (const auto& s : sweeps) list.push_back(&s);
    attempt([&] { write_text_file(out.csv, sweeps_csv(list)); });
  }
  if (out.plot) {
    PlotSpec plot = default_plot(sweep);
    const PlotSpec& given = out.plot_spec;
    if (!given.x.empty()) plot.x = given.x;
    if (!given.y.empty()) plot.y = given.y;
    if (!given.series.empty()) plot.series = given.series;
    if (!given.title.empty()) plot.title = given.title;
    plot.xlabel = given.xlabel;
    plot.ylabel = given.ylabel;
    plot.logx = given.logx;
    plot.logy = given.logy;
    plot.file = numbered_plot_file(session, given.file);
    attempt([&] { plot_sweep(sweep, sweep_rows(sweep), plot, output_who(out.plot_what)); });
  }
  if (!spec.quiet || !failures.empty()) {
    const std::string text = "### " + sweep.name + "\n\n" + sweep_markdown(sweep) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  return failures;
}

}  // namespace

void check_axis_name(const std::vector<SweepAxis>& axes, const std::string& name) {
  if (name.empty()) fail(ErrorKind::Value, "an axis name is empty");
  if (name == "status" || name == "error") {
    fail(ErrorKind::Value, "'{}' cannot be an axis name (it is a column of the results)", name);
  }
  if (is_axis(axes, name)) fail(ErrorKind::Value, "axis '{}' is given twice", name);
}

size_t point_count(const std::vector<SweepAxis>& axes) {
  size_t total = 1;
  for (const SweepAxis& a : axes) {
    total *= a.values.size();
    if (total > 100'000'000) fail(ErrorKind::Value, "the axes make more than 10^8 points");
  }
  return total;
}

SweepPoint sweep_point(const std::vector<SweepAxis>& axes, size_t index) {
  SweepPoint at;
  at.index = index;
  at.at.assign(axes.size(), 0);
  size_t rest = index;
  for (size_t k = axes.size(); k-- > 0;) {
    at.at[k] = rest % axes[k].values.size();
    rest /= axes[k].values.size();
  }
  for (size_t k = 0; k < axes.size(); ++k) {
    const SweepAxis& a = axes[k];
    if (k) at.label += ' ';
    at.label.append(a.name).append(1, '=').append(to_text(a.values[at.at[k]]));
    at.params.emplace_back(a.name, a.values[at.at[k]]);
  }
  return at;
}

void check_sweep(const SweepSpec& spec) {
  if (!spec.run) fail(ErrorKind::Value, "sweep '{}' has no run function", spec.name);
  std::vector<SweepAxis> seen;
  for (const SweepAxis& a : spec.axes) {
    check_axis_name(seen, a.name);
    if (a.values.empty()) fail(ErrorKind::Value, "axis '{}' has no values", a.name);
    seen.push_back({a.name, {}});
  }
  point_count(spec.axes);
  const SweepOutputs& out = spec.outputs;
  if (!out.json.empty()) check_writable(out.json, out.json_what);
  if (!out.csv.empty()) check_writable(out.csv, out.csv_what);
  if (out.plot) check_plot_output(out.plot_spec.file, out.plot_what);
}

SweepReport run_sweep(const SweepSpec& spec, SweepSession& session,
                      const std::function<Value::Object()>& run_description) {
  check_sweep(spec);
  const size_t total = point_count(spec.axes);
  SweepReport report;
  Sweep& sweep = report.sweep;
  sweep.name = spec.name;
  for (const SweepAxis& a : spec.axes) sweep.axes.push_back(a.name);
  sweep.started = utc_timestamp();
  std::vector<std::vector<std::string>> labels;
  for (const SweepAxis& a : spec.axes) {
    labels.emplace_back();
    for (const Value& v : a.values) labels.back().push_back(to_text(v));
  }

  const SweepShare& share = spec.share;
  const bool shared = share.size > 1;
  std::vector<size_t> indices;  // of the points this process ran
  const auto t0 = std::chrono::steady_clock::now();
  {
    Progress progress(share.rank == 0 ? total : 0);
    SweepPoint at;
    at.at.assign(spec.axes.size(), 0);  // the last axis fastest
    for (size_t point = 0; point < total; ++point) {
      if (point > 0) {
        for (size_t k = spec.axes.size(); k-- > 0;) {
          if (++at.at[k] < spec.axes[k].values.size()) break;
          at.at[k] = 0;
        }
      }
      if (shared && point % share.size != share.rank) continue;
      at.index = point;
      at.label.clear();
      at.params.clear();
      for (size_t k = 0; k < spec.axes.size(); ++k) {
        const SweepAxis& a = spec.axes[k];
        if (k) at.label += ' ';
        at.label.append(a.name).append(1, '=').append(labels[k][at.at[k]]);
        at.params.emplace_back(a.name, a.values[at.at[k]]);
      }
      progress.show(point, at.label);

      PointRun run;
      try {
        run = spec.run(at);
      } catch (const Error& e) {
        run = e.kind() == ErrorKind::Interrupted ? PointRun::interrupted()
                                                 : PointRun::failed(e.what());
      }
      // An interruption (Ctrl-C) ends the sweep; what it gathered is kept.
      if (run.status == PointRun::Status::Interrupted) {
        sweep.interrupted = true;
        break;
      }
      sweep.points.push_back(record(spec, at, std::move(run), report.collisions));
      indices.push_back(point);
    }
  }
  if (share.gather) {
    bool interrupted = sweep.interrupted;
    sweep.points = share.gather(indices, std::move(sweep.points), interrupted);
    sweep.interrupted = interrupted;
  }
  sweep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (!report.collisions.empty()) {
    std::string names;
    for (const auto& c : report.collisions)
      names.append(names.empty() ? "'" : ", '").append(c).append("'");
    std::fprintf(stderr,
                 "culua: warning: sweep '%s': run returned fields named like %s; the rows keep the "
                 "point's own values\n",
                 spec.name.c_str(), names.c_str());
  }
  if (share.rank == 0) report.failures = write_outputs(spec, sweep, session, run_description);
  return report;
}

std::string write_failure_message(const std::string& name,
                                  const std::vector<std::string>& failures) {
  std::string msg = fmt::format("sweep '{}' ran, but ", name);
  for (size_t i = 0; i < failures.size(); ++i) msg += (i ? "; " : "") + failures[i];
  return msg + " (its table is printed above)";
}

std::vector<Value> sweep_rows(const Sweep& s) {
  std::vector<Value> rows;
  rows.reserve(s.points.size());
  for (const Point& p : s.points) {
    Value::Object row = p.params;
    for (const auto& [k, v] : p.result) set_member(row, k, v);
    set_member(row, "status", p.ok ? "ok" : "failed");
    if (!p.ok) set_member(row, "error", p.error);
    sort_result_fields(row);
    rows.emplace_back(std::move(row));
  }
  return rows;
}

PlotSpec default_plot(const Sweep& s) {
  PlotSpec spec;
  if (!s.axes.empty()) spec.x = s.axes.front();
  spec.y = primary_metric_path(s);
  if (s.axes.size() > 1) spec.series.assign(s.axes.begin() + 1, s.axes.end());
  spec.title = s.name;
  return spec;
}

void plot_sweep(const Sweep& s, const std::vector<Value>& rows, const PlotSpec& spec,
                const std::string& who) {
  if (spec.y.empty()) {
    fail(ErrorKind::Value, "no point of sweep '{}' has a numeric result to plot", s.name);
  }
  plot(rows, spec, who);
}

void check_writable(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(ErrorKind::Value, "{} {} is a directory", what, path);
    if (::access(path.c_str(), W_OK) != 0) {
      fail(ErrorKind::Value, "cannot write {} {}: {}", what, path, std::strerror(errno));
    }
    return;
  }
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? std::string(".") : (slash == 0 ? "/" : path.substr(0, slash));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    fail(ErrorKind::Value, "cannot write {} {}: {} ({})", what, path, std::strerror(errno), dir);
  }
}

void check_plot_output(const std::string& file, const std::string& what) {
  const std::string who = output_who(what);
  plot_format(file, who);
  if (find_gnuplot().empty()) fail(ErrorKind::Unsupported, "{}", gnuplot_missing_message(who));
  check_writable(file, what + " file");
}

std::string output_who(const std::string& what) {
  return what[0] == '-' ? "culua " + what : "cu.sweep's " + what;
}

}  // namespace culua::detail::measure
