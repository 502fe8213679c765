#include "measure/results.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/base/error.hpp"
#include "core/runtime/sandbox.hpp"

namespace culua::detail::measure {

namespace {

// ---- result files ----

Value::List axis_values(const Sweep& s, const std::string& axis) {
  Value::List values;
  for (const Point& p : s.points) {
    const Value* v = find(p.params, axis);
    if (v && std::find(values.begin(), values.end(), *v) == values.end()) values.push_back(*v);
  }
  return values;
}

Value sweep_value(const Sweep& s) {
  Value::Object o;
  o.reserve(8);
  o.emplace_back("name", s.name);
  Value::List axes;
  for (const std::string& a : s.axes) {
    axes.emplace_back(Value::Object{{"name", a}, {"values", axis_values(s, a)}});
  }
  o.emplace_back("axes", std::move(axes));
  const std::string metric = primary_metric_path(s);
  if (!metric.empty()) o.emplace_back("metric", metric);
  if (!s.started.empty()) o.emplace_back("started", s.started);
  o.emplace_back("seconds", s.seconds);
  if (s.interrupted) o.emplace_back("interrupted", true);
  Value::List points;
  points.reserve(s.points.size());
  for (const Point& p : s.points) {
    Value::Object po;
    po.reserve(4);
    po.emplace_back("params", p.params);
    po.emplace_back("status", p.ok ? "ok" : "failed");
    if (!p.ok) po.emplace_back("error", p.error);
    po.emplace_back("result", p.result);
    points.emplace_back(std::move(po));
  }
  o.emplace_back("points", std::move(points));
  return Value(std::move(o));
}

[[noreturn]] void bad_file(std::string_view what, const std::string& where, std::string_view why) {
  fail(ErrorKind::Value, "{}: {}{}", what, where.empty() ? "" : where + ": ", why);
}

const Value& member(const Value& o, const char* key, std::string_view what,
                    const std::string& where) {
  const Value* v = o.get(key);
  if (!v) bad_file(what, where, fmt::format("\"{}\" is missing", key));
  return *v;
}

// Writers that cannot tell an empty table from an empty list (Lua's) may write [] for {}.
bool is_empty_list(const Value& v) {
  return v.is_list() && v.as_list().empty();
}

Sweep parse_sweep(const Value& v, std::string_view what, const std::string& where) {
  if (!v.is_object()) bad_file(what, where, "not an object");
  Sweep s;
  const Value& name = member(v, "name", what, where);
  if (!name.is_string()) bad_file(what, where, "\"name\" is not a string");
  s.name = name.as_string();
  if (const Value* axes = v.get("axes"); axes && axes->is_list()) {
    for (const Value& a : axes->as_list()) {
      if (a.is_string()) {
        s.axes.push_back(a.as_string());
      } else if (const Value* n = a.get("name"); n && n->is_string()) {
        s.axes.push_back(n->as_string());
      }
    }
  }
  if (const Value* t = v.get("started"); t && t->is_string()) s.started = t->as_string();
  if (auto t = v.number_at("seconds")) s.seconds = *t;
  if (const Value* i = v.get("interrupted"); i && i->is_bool()) s.interrupted = i->as_bool();
  const Value& points = member(v, "points", what, where);
  if (!points.is_list()) bad_file(what, where, "\"points\" is not a list");
  size_t k = 0;
  for (const Value& pv : points.as_list()) {
    ++k;
    const std::string at = fmt::format("{}, point {}", where, k);
    if (!pv.is_object()) bad_file(what, at, "not an object");
    Point p;
    const Value& params = member(pv, "params", what, at);
    if (!is_empty_list(params)) {
      if (!params.is_object()) bad_file(what, at, "\"params\" is not an object");
      p.params = params.as_object();
    }
    if (const Value* st = pv.get("status")) {
      if (!st->is_string()) bad_file(what, at, "\"status\" is not a string");
      p.ok = st->as_string() == "ok";
    }
    if (const Value* e = pv.get("error"); e && e->is_string()) p.error = e->as_string();
    if (const Value* r = pv.get("result"); r && !is_empty_list(*r)) {
      if (!r->is_object()) bad_file(what, at, "\"result\" is not an object");
      p.result = r->as_object();
    }
    s.points.push_back(std::move(p));
  }
  return s;
}

// ---- tables ----

const Value* path_in(const Value::Object& o, std::string_view path) {
  const size_t dot = path.find('.');
  const Value* v = find(o, path.substr(0, dot));
  if (!v || dot == std::string_view::npos) return v;
  return v->at_path(path.substr(dot + 1));
}

std::optional<double> number_in(const Value::Object& o, std::string_view path) {
  const Value* v = path_in(o, path);
  if (!v || !v->is_number()) return std::nullopt;
  return v->as_number();
}

// Scalar members, nested objects with dotted names; lists are left out.
void flatten(const Value::Object& o, const std::string& prefix,
             std::vector<std::pair<std::string, const Value*>>& out) {
  for (const auto& [k, v] : o) {
    if (v.is_object()) {
      flatten(v.as_object(), prefix + k + ".", out);
    } else if (v.is_scalar()) {
      out.emplace_back(prefix + k, &v);
    }
  }
}

void add_unique(std::vector<std::string>& names, const std::string& n) {
  if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
}

// Fields of a cu.bench result that have their own columns (or none).
bool is_bench_field(std::string_view k) {
  static constexpr std::string_view fields[] = {"name",
                                                "samples",
                                                "gpu",
                                                "cpu",
                                                "GBps",
                                                "TFLOPs",
                                                "bytes",
                                                "flops",
                                                "launch_bound",
                                                "gated",
                                                "clock",
                                                "throttled",
                                                "device",
                                                "backend",
                                                "times",
                                                "cpu_times",
                                                "device_index",
                                                "mode",
                                                "warmup",
                                                "hot",
                                                "options",
                                                "stop",
                                                "elapsed",
                                                "notes",
                                                "throttled_samples",
                                                "throttle_reasons"};
  return std::find(std::begin(fields), std::end(fields), k) != std::end(fields);
}

bool is_bench(const Point& p) {
  return p.ok && number_in(p.result, "gpu.median").has_value();
}

std::string first_line(std::string_view s, size_t max_chars) {
  s = s.substr(0, s.find('\n'));
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++chars > max_chars) {
      out += "…";
      break;
    }
    out += s[i];
  }
  return out;
}

std::string notes_of(const Point& p) {
  std::vector<std::string> notes;
  if (const Value* lb = find(p.result, "launch_bound"); lb && lb->is_bool() && lb->as_bool()) {
    notes.emplace_back("launch-bound");
  }
  if (auto t = number_in(p.result, "throttled"); t && *t > 0) {
    notes.push_back(fmt::format("throttled ({} samples)", static_cast<int64_t>(*t)));
  }
  auto before = number_in(p.result, "clock.before");
  auto after = number_in(p.result, "clock.after");
  if (before && after && *before > 0 && std::fabs(*after - *before) > 0.02 * *before) {
    notes.push_back(fmt::format("clock {:.0f}→{:.0f} MHz", *before, *after));
  }
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : ", ") + n;
  return s;
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string markdown_cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos &&
      (s.empty() || (s.front() != ' ' && s.back() != ' '))) {
    return s;
  }
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string csv_text(const Value& v) {
  if (v.is_null()) return "";
  if (v.is_number() && !v.is_integer()) {
    const double d = v.as_number();
    return std::isfinite(d) ? fmt::format("{}", d)
                            : (std::isnan(d) ? "nan"
                               : d > 0       ? "inf"
                                             : "-inf");
  }
  return to_text(v);
}

bool lower_is_better(std::string_view path) {
  std::string last(
      path.substr(path.rfind('.') == std::string_view::npos ? 0 : path.rfind('.') + 1));
  std::transform(last.begin(), last.end(), last.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  static constexpr std::string_view rates[] = {"gbps",      "gb/s",       "tflops",  "gflops",
                                               "bandwidth", "throughput", "speedup", "per_s"};
  for (auto r : rates) {
    if (last.find(r) != std::string::npos) return false;
  }
  return true;
}

}  // namespace

int result_field_rank(std::string_view k) {
  static constexpr std::string_view order[] = {
      "name",         "samples",   "gpu",   "cpu",    "min",    "median", "mean",    "stddev",
      "p10",          "p90",       "noise", "GBps",   "TFLOPs", "bytes",  "flops",   "ms",
      "launch_bound", "throttled", "clock", "before", "after",  "device", "backend", "times"};
  const auto it = std::find(std::begin(order), std::end(order), k);
  return static_cast<int>(it - std::begin(order));
}

void sort_result_fields(Value::Object& o) {
  std::stable_sort(o.begin(), o.end(), [](const auto& a, const auto& b) {
    const int ra = result_field_rank(a.first), rb = result_field_rank(b.first);
    return ra != rb ? ra < rb : a.first < b.first;
  });
}

std::string to_text(const Value& v) {
  if (v.is_null()) return "";
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  if (v.is_integer()) return fmt::format("{}", v.as_integer());
  if (v.is_number()) return fmt::format("{}", v.as_number());
  if (v.is_string()) return v.as_string();
  if (v.is_list()) {
    std::string s = "[";
    for (const Value& e : v.as_list()) s += (s.size() > 1 ? ", " : "") + to_text(e);
    return s + "]";
  }
  return to_json(v);
}

std::string format_significant(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const int e = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (e >= 15 || e < -5) return fmt::format("{:.{}g}", v, digits);
  if (e >= digits - 1) return fmt::format("{:.0f}", v);
  return fmt::format("{:.{}f}", v, digits - 1 - e);
}

std::string results_json(const ResultFile& file) {
  Value::Object root;
  root.reserve(file.run.size() + 3);
  root.emplace_back("format", kResultFormat);
  root.emplace_back("format_version", kResultFormatVersion);
  for (const auto& [k, v] : file.run) {
    if (k != "format" && k != "format_version" && k != "sweeps") root.emplace_back(k, v);
  }
  Value::List sweeps;
  for (const Sweep& s : file.sweeps) sweeps.push_back(sweep_value(s));
  root.emplace_back("sweeps", std::move(sweeps));
  return to_json(Value(std::move(root)), 2) + "\n";
}

ResultFile parse_results(std::string_view text, std::string_view what) {
  const Value root = parse_json(text, what);
  const Value* format = root.get("format");
  if (!format || !format->is_string() || format->as_string() != kResultFormat) {
    fail(ErrorKind::Value, "{} is not a culua result file (it has no \"format\": \"{}\")", what,
         kResultFormat);
  }
  if (auto version = root.number_at("format_version"); version && *version > kResultFormatVersion) {
    fail(ErrorKind::Value, "{} has format version {}; this culua reads up to version {}", what,
         *version, kResultFormatVersion);
  }
  const Value* sweeps = root.get("sweeps");
  if (!sweeps || !sweeps->is_list()) bad_file(what, "", "\"sweeps\" is missing or not a list");
  ResultFile f;
  for (const auto& [k, v] : root.as_object()) {
    if (k != "sweeps") f.run.emplace_back(k, v);
  }
  size_t k = 0;
  for (const Value& s : sweeps->as_list()) {
    f.sweeps.push_back(parse_sweep(s, what, fmt::format("sweep {}", ++k)));
  }
  return f;
}

bool is_milliseconds(std::string_view path) {
  if (path == "ms" || (path.size() > 3 && path.substr(path.size() - 3) == "_ms")) return true;
  if (path.size() > 3 && path.substr(path.size() - 3) == ".ms") return true;
  for (std::string_view side : {"gpu.", "cpu."}) {
    if (path.substr(0, 4) != side) continue;
    const auto stat = path.substr(4);
    for (std::string_view s : {"min", "median", "mean", "stddev", "p10", "p90", "max"}) {
      if (stat == s) return true;
    }
  }
  return false;
}

std::optional<Metric> primary_metric(const Point& p, std::string_view path) {
  if (!p.ok) return std::nullopt;
  std::string chosen(path);
  if (chosen.empty()) {
    if (number_in(p.result, "gpu.median")) {
      chosen = "gpu.median";
    } else if (number_in(p.result, "ms")) {
      chosen = "ms";
    } else {
      std::vector<std::pair<std::string, const Value*>> fields;
      flatten(p.result, "", fields);
      for (const auto& [name, v] : fields) {
        if (v->is_number() && name != "noise" && name.find(".noise") == std::string::npos) {
          chosen = name;
          break;
        }
      }
    }
  }
  if (chosen.empty()) return std::nullopt;
  const auto value = number_in(p.result, chosen);
  if (!value) return std::nullopt;
  Metric m;
  m.path = chosen;
  m.value = *value;
  m.lower_is_better = lower_is_better(chosen);
  // The noise beside the metric: gpu.noise for gpu.median, a top-level `noise` for top-level
  // fields.
  const size_t dot = chosen.rfind('.');
  const std::string noise_path =
      dot == std::string::npos ? "noise" : chosen.substr(0, dot + 1) + "noise";
  if (auto n = number_in(p.result, noise_path); n && std::isfinite(*n) && *n >= 0) m.noise = *n;
  return m;
}

std::string primary_metric_path(const Sweep& s) {
  for (const Point& p : s.points) {
    if (auto m = primary_metric(p)) return m->path;
  }
  return {};
}

TimeUnit choose_time_unit(const std::vector<double>& ms) {
  std::vector<double> v;
  for (double x : ms) {
    if (std::isfinite(x)) v.push_back(x);
  }
  if (v.empty()) return {"ms", 1.0};
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2] < 1.0 ? TimeUnit{"µs", 1000.0} : TimeUnit{"ms", 1.0};
}

Table summary_table(const Sweep& s) {
  Table t;
  const size_t n = s.points.size();
  t.rows.assign(n, {});
  const auto add_column = [&](std::string header, bool numeric, auto&& cell) {
    t.header.push_back(std::move(header));
    t.numeric.push_back(numeric);
    for (size_t i = 0; i < n; ++i) t.rows[i].push_back(cell(s.points[i]));
  };

  for (const std::string& axis : s.axes) {
    bool numeric = true;
    for (const Point& p : s.points) {
      const Value* v = find(p.params, axis);
      if (v && !v->is_number()) numeric = false;
    }
    add_column(axis, numeric, [&](const Point& p) {
      const Value* v = find(p.params, axis);
      return v ? to_text(*v) : std::string();
    });
  }

  bool bench = false, cpu = false, gbps = false, tflops = false, samples = false, ms = false;
  std::vector<double> times;
  for (const Point& p : s.points) {
    if (!p.ok) continue;
    if (is_bench(p)) {
      bench = true;
      times.push_back(*number_in(p.result, "gpu.median"));
      if (auto c = number_in(p.result, "cpu.median")) {
        cpu = true;
        times.push_back(*c);
      }
      gbps = gbps || number_in(p.result, "GBps");
      tflops = tflops || number_in(p.result, "TFLOPs");
      samples = samples || number_in(p.result, "samples");
    } else if (auto m = number_in(p.result, "ms")) {
      ms = true;
      times.push_back(*m);
    }
  }
  const TimeUnit unit = choose_time_unit(times);
  const auto time_cell = [&](const Point& p, const char* path) {
    auto v = p.ok ? number_in(p.result, path) : std::nullopt;
    return v ? format_significant(*v * unit.per_ms) : std::string();
  };
  const auto number_cell = [&](const Point& p, const char* path) {
    auto v = is_bench(p) ? number_in(p.result, path) : std::nullopt;
    return v ? format_significant(*v) : std::string();
  };
  if (bench) {
    add_column(fmt::format("gpu median ({})", unit.name), true, [&](const Point& p) {
      return is_bench(p) ? time_cell(p, "gpu.median") : std::string();
    });
    add_column("noise", true, [&](const Point& p) {
      auto v = is_bench(p) ? number_in(p.result, "gpu.noise") : std::nullopt;
      return v ? fmt::format("{:.1f}%", *v * 100) : std::string();
    });
    if (gbps) add_column("GB/s", true, [&](const Point& p) { return number_cell(p, "GBps"); });
    if (tflops) {
      add_column("TFLOP/s", true, [&](const Point& p) { return number_cell(p, "TFLOPs"); });
    }
    if (cpu) {
      add_column(fmt::format("cpu median ({})", unit.name), true, [&](const Point& p) {
        return is_bench(p) ? time_cell(p, "cpu.median") : std::string();
      });
    }
    if (samples) {
      add_column("samples", true, [&](const Point& p) {
        const Value* v = is_bench(p) ? find(p.result, "samples") : nullptr;
        return v ? to_text(*v) : std::string();
      });
    }
  }
  if (ms) {
    add_column(fmt::format("time ({})", unit.name), true,
               [&](const Point& p) { return is_bench(p) ? std::string() : time_cell(p, "ms"); });
  }

  // Other scalar fields, in first-seen order.
  std::vector<std::string> extra;
  for (const Point& p : s.points) {
    if (!p.ok) continue;
    const bool b = is_bench(p);
    std::vector<std::pair<std::string, const Value*>> fields;
    flatten(p.result, "", fields);
    for (const auto& [name, v] : fields) {
      const std::string top = name.substr(0, name.find('.'));
      if ((b && is_bench_field(top)) || (ms && name == "ms")) continue;
      add_unique(extra, name);
    }
  }
  for (const std::string& name : extra) {
    bool numeric = true;
    for (const Point& p : s.points) {
      const Value* v = path_in(p.result, name);
      if (v && !v->is_number()) numeric = false;
    }
    add_column(name, numeric, [&](const Point& p) {
      const Value* v = p.ok ? path_in(p.result, name) : nullptr;
      if (!v || !v->is_scalar()) return std::string();
      return v->is_number() && !v->is_integer() ? format_significant(v->as_number()) : to_text(*v);
    });
  }

  if (bench && std::any_of(s.points.begin(), s.points.end(),
                           [](const Point& p) { return !notes_of(p).empty(); })) {
    add_column("notes", false, [](const Point& p) { return notes_of(p); });
  }
  if (std::any_of(s.points.begin(), s.points.end(), [](const Point& p) { return !p.ok; })) {
    add_column("status", false, [](const Point& p) {
      return p.ok ? std::string("ok") : "failed: " + first_line(p.error, 60);
    });
  }
  return t;
}

std::string markdown(const Table& t) {
  const size_t cols = t.header.size();
  std::vector<std::string> header(cols);
  std::vector<std::vector<std::string>> rows(t.rows.size(), std::vector<std::string>(cols));
  std::vector<size_t> width(cols, 3);
  for (size_t c = 0; c < cols; ++c) {
    header[c] = markdown_cell(t.header[c]);
    width[c] = std::max(width[c], display_width(header[c]));
    for (size_t r = 0; r < t.rows.size(); ++r) {
      rows[r][c] = c < t.rows[r].size() ? markdown_cell(t.rows[r][c]) : std::string();
      width[c] = std::max(width[c], display_width(rows[r][c]));
    }
  }
  const auto line = [&](const std::vector<std::string>& cells, bool align) {
    std::string s = "|";
    for (size_t c = 0; c < cols; ++c) {
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      s += ' ';
      s += align && t.numeric[c] ? pad + cells[c] : cells[c] + pad;
      s += " |";
    }
    return s + "\n";
  };
  std::string out = line(header, false);
  out += "|";
  for (size_t c = 0; c < cols; ++c) {
    out += ' ' + std::string(width[c] - (t.numeric[c] ? 1 : 0), '-') + (t.numeric[c] ? ":" : "") +
           " |";
  }
  out += "\n";
  for (const auto& r : rows) out += line(r, true);
  return out;
}

std::string sweeps_csv(const std::vector<const Sweep*>& sweeps) {
  std::vector<std::string> columns{"sweep"};
  for (const Sweep* s : sweeps) {
    for (const std::string& a : s->axes) add_unique(columns, a);
  }
  add_unique(columns, "status");
  add_unique(columns, "error");
  std::vector<std::vector<std::pair<std::string, std::string>>> rows;
  for (const Sweep* s : sweeps) {
    for (const Point& p : s->points) {
      std::vector<std::pair<std::string, std::string>> row;
      const auto put = [&row](const std::string& k, std::string v) {
        for (const auto& [name, _] : row) {
          if (name == k) return;
        }
        row.emplace_back(k, std::move(v));
      };
      put("sweep", s->name);
      for (const auto& [k, v] : p.params) put(k, csv_text(v));
      put("status", p.ok ? "ok" : "failed");
      if (!p.ok) put("error", p.error);
      std::vector<std::pair<std::string, const Value*>> fields;
      flatten(p.result, "", fields);
      for (const auto& [name, v] : fields) {
        add_unique(columns, name);
        put(name, csv_text(*v));
      }
      rows.push_back(std::move(row));
    }
  }
  std::string out;
  for (size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + csv_cell(columns[c]);
  out += "\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c) out += ',';
      for (const auto& [name, v] : row) {
        if (name == columns[c]) {
          out += csv_cell(v);
          break;
        }
      }
    }
    out += "\n";
  }
  return out;
}

void write_text_file(const std::string& path, std::string_view content) {
  check_file_write(path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail(ErrorKind::Value, "cannot write {}: {}", path, std::strerror(errno));
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const int saved = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    fail(ErrorKind::Value, "cannot write {}: {}", path, std::strerror(written ? errno : saved));
  }
}

std::string read_text_file(const std::string& path) {
  check_file_read(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(ErrorKind::Value, "cannot read {}: {}", path, std::strerror(errno));
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) fail(ErrorKind::Value, "cannot read {}: read error", path);
  return text;
}

std::string fnv1a64_hex(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

Value::Object cuda_versions(Backend& backend) {
  Value::Object o;
  const auto text = [](int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); };
  const BackendVersions v = backend.versions();
  if (v.driver > 0) o.emplace_back("driver", text(v.driver));
  if (v.runtime > 0) o.emplace_back("runtime", text(v.runtime));
  return o;
}

}  // namespace culua::detail::measure
