#include "measure/plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/base/error.hpp"
#include "core/runtime/sandbox.hpp"

extern char** environ;

namespace culua::detail::measure {

std::string gnuplot_quoted(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

namespace {

std::string quoted(std::string_view s) {
  return gnuplot_quoted(s);
}

// A string field of the tab-separated data file.
std::string data_text(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    if (c == '"') c = '\'';
  }
  return s.empty() ? "-" : s;
}

std::string field_list(const Value& row) {
  std::string s;
  if (!row.is_object()) return "not a table";
  for (const auto& [k, _] : row.as_object()) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

bool is_power_of_two(double v) {
  if (v < 1 || v != std::floor(v) || v > 9.0e15) return false;
  const auto i = static_cast<uint64_t>(v);
  return (i & (i - 1)) == 0;
}

// A temporary folder removed with its files.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/culua-plot-XXXXXX";
    if (!mkdtemp(tmpl.data())) {
      fail(ErrorKind::Value, "cannot create a temporary folder for gnuplot ({}): {}", tmpl,
           std::strerror(errno));
    }
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    for (const std::string& f : files_) ::unlink(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string file(const char* name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// Runs gnuplot on `script`; returns its exit status and what it printed on stderr.
int run_gnuplot(const std::string& gnuplot, const std::string& script, const std::string& output,
                std::string* messages) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot";
  std::string arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) fail(ErrorKind::Value, "cannot start {}: {}", gnuplot, std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) fail(ErrorKind::Value, "waiting for gnuplot: {}", std::strerror(errno));
  }
  *messages = read_text_file(output);
  while (!messages->empty() && (messages->back() == '\n' || messages->back() == ' ')) {
    messages->pop_back();
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

std::string terminal_lines(const std::string& format, const std::string& file) {
  std::string s;
  if (format == "png") {
    s += "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
         "  set terminal pngcairo size 900,560 noenhanced\n"
         "} else {\n"
         "  set terminal png size 900,560 noenhanced\n"
         "}\n";
  } else {
    s += "set terminal svg size 900,560 dynamic noenhanced background rgb 'white'\n";
  }
  return s + "set output " + quoted(file) + "\n";
}

std::string plot_format(const std::string& file, const std::string& who) {
  if (file.empty()) fail(ErrorKind::Value, "{} needs file= (a .png or .svg file name)", who);
  const size_t dot = file.rfind('.');
  const size_t slash = file.rfind('/');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash)
                        ? std::string()
                        : file.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "png" || ext == "svg") return ext;
  fail(ErrorKind::Value, "{} cannot write '{}': the file name must end in .png or .svg", who, file);
}

std::string find_gnuplot() {
  const char* env = std::getenv("PATH");
  const std::string_view path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string_view::npos) end = path.size();
    std::string candidate(end > begin ? path.substr(begin, end - begin) : ".");
    candidate.append("/gnuplot");
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    begin = end + 1;
  }
  return {};
}

std::string gnuplot_missing_message(const std::string& who) {
  return who + " needs gnuplot (Debian package gnuplot-nox), which was not found on PATH";
}

namespace {

// The request in the order a reader gives it: the data (x=, y=), then the file.
std::string check_request(const PlotSpec& spec, const std::string& who) {
  if (spec.x.empty()) fail(ErrorKind::Value, "{} needs x= (the field of the horizontal axis)", who);
  if (spec.y.empty()) fail(ErrorKind::Value, "{} needs y= (the field of the vertical axis)", who);
  return plot_format(spec.file, who);
}

// NaN (of either sign) and the infinities as a message names them.
const char* nonfinite_text(double v) {
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

}  // namespace

PlotScript plot_script(const std::vector<Value>& rows, const PlotSpec& spec,
                       const std::string& data_path, const std::string& who) {
  const std::string format = check_request(spec, who);

  struct Row {
    const Value* x;
    double y;
    std::string series;
  };
  std::vector<Row> used;
  bool any_y = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Value& r = rows[i];
    const auto y = r.number_at(spec.y);
    if (!y) continue;
    any_y = true;
    const Value* x = r.at_path(spec.x);
    if (!x || !x->is_scalar() || x->is_null()) continue;
    // gnuplot cannot place NaN or an infinity (it fails on the tics, or drops the point without a
    // word): the row is named instead.
    if (x->is_number() && !std::isfinite(x->as_number())) {
      fail(ErrorKind::Value, "rows[{}] has {} at x = '{}'; x values must be finite numbers", i + 1,
           nonfinite_text(x->as_number()), spec.x);
    }
    if (!std::isfinite(*y)) {
      fail(ErrorKind::Value, "rows[{}] has {} at y = '{}'; y values must be finite numbers", i + 1,
           nonfinite_text(*y), spec.y);
    }
    std::string label;
    for (const std::string& s : spec.series) {
      const Value* v = r.at_path(s);
      label += (label.empty() ? "" : ", ") + s + "=" + (v ? to_text(*v) : std::string("?"));
    }
    used.push_back({x, *y, std::move(label)});
  }
  if (used.empty()) {
    const std::string fields =
        rows.empty() ? "there are no rows" : "fields of the first row: " + field_list(rows.front());
    if (!any_y) {
      fail(ErrorKind::Value, "no row has a number at y = '{}' ({})", spec.y, fields);
    }
    fail(ErrorKind::Value, "no row with a number at y = '{}' has a value at x = '{}' ({})", spec.y,
         spec.x, fields);
  }

  const bool numeric_x =
      std::all_of(used.begin(), used.end(), [](const Row& r) { return r.x->is_number(); });
  std::vector<std::string> categories;  // non-numeric x: positions in first-seen order
  if (!numeric_x) {
    for (const Row& r : used) {
      const std::string t = to_text(*r.x);
      if (std::find(categories.begin(), categories.end(), t) == categories.end()) {
        categories.push_back(t);
      }
    }
  }
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY;
  bool integer_x = true, powers_of_two = true;
  for (const Row& r : used) {
    ymin = std::min(ymin, r.y);
    if (!numeric_x) continue;
    const double x = r.x->as_number();
    xmin = std::min(xmin, x);
    xmax = std::max(xmax, x);
    integer_x = integer_x && x == std::floor(x);
    powers_of_two = powers_of_two && is_power_of_two(x);
  }
  const bool logx = spec.logx.value_or(numeric_x && xmin > 0 && xmax >= 100 * xmin);
  const bool logy = spec.logy.value_or(false);
  if (logx && !numeric_x) {
    fail(ErrorKind::Value, "logx needs numbers at x = '{}'", spec.x);
  }
  if (logx && !(xmin > 0)) {
    fail(ErrorKind::Value, "logx needs positive values at x = '{}' (the smallest is {})", spec.x,
         xmin);
  }
  if (logy && !(ymin > 0)) {
    fail(ErrorKind::Value, "logy needs positive values at y = '{}' (the smallest is {})", spec.y,
         ymin);
  }

  std::vector<std::string> series;
  for (const Row& r : used) {
    if (std::find(series.begin(), series.end(), r.series) == series.end()) {
      series.push_back(r.series);
    }
  }
  PlotScript out;
  out.series = series.size();
  out.points = used.size();
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<const Row*> block;
    for (const Row& r : used) {
      if (r.series == series[i]) block.push_back(&r);
    }
    const auto position = [&](const Row* r) {
      if (numeric_x) return r->x->as_number();
      const std::string t = to_text(*r->x);
      return static_cast<double>(std::find(categories.begin(), categories.end(), t) -
                                 categories.begin());
    };
    std::stable_sort(block.begin(), block.end(),
                     [&](const Row* a, const Row* b) { return position(a) < position(b); });
    if (i) out.data += "\n\n";
    for (const Row* r : block) {
      if (numeric_x) {
        out.data += fmt::format("{}\t{}\n", r->x->as_number(), r->y);
      } else {
        out.data += fmt::format("{}\t{}\t{}\n", position(r), data_text(to_text(*r->x)), r->y);
      }
    }
  }

  std::string& s = out.script;
  s += terminal_lines(format, spec.file);
  s += "set datafile separator \"\\t\"\n";
  if (!spec.title.empty()) s += "set title " + quoted(spec.title) + "\n";
  s += "set xlabel " + quoted(spec.xlabel.empty() ? spec.x : spec.xlabel) + "\n";
  std::string ylabel = spec.ylabel;
  if (ylabel.empty()) {
    ylabel = spec.y == "ms" ? "time (ms)" : spec.y + (is_milliseconds(spec.y) ? " (ms)" : "");
  }
  s += "set ylabel " + quoted(ylabel) + "\n";
  s += "set grid\n";
  s += "set key below\n";
  if (logx) s += powers_of_two ? "set logscale x 2\n" : "set logscale x 10\n";
  if (numeric_x) {
    // A sweep has few x values: tics at exactly those.
    std::vector<double> xs;
    for (const Row& r : used) xs.push_back(r.x->as_number());
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    if (xs.size() <= 16) {
      s += "set xtics (";
      for (size_t i = 0; i < xs.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", xs[i]);
      s += ")\n";
    }
    if (integer_x) s += "set format x '%.0f'\n";
    if (xs.size() > 8 || (logx && xmax >= 1e5)) s += "set xtics rotate by -45\n";
  }
  if (logy) s += "set logscale y 10\n";
  if (!numeric_x) {
    s += fmt::format("set xrange [-0.5:{}]\n", static_cast<double>(categories.size()) - 0.5);
    if (categories.size() > 8) s += "set xtics rotate by -45\n";
  }
  s += "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    if (i) s += ", \\\n     ";
    s += i == 0 ? quoted(data_path) : std::string("''");
    s += fmt::format(" index {} using {} with linespoints pt 7 ps 0.8 lw 1.5 title ", i,
                     numeric_x ? "1:2" : "1:3:xtic(2)");
    s += quoted(series[i].empty() ? spec.y : series[i]);
  }
  s += "\n";
  return out;
}

void plot(const std::vector<Value>& rows, const PlotSpec& spec, const std::string& who) {
  check_request(spec, who);
  run_gnuplot_plot(
      spec.file,
      [&](const std::string& data_path) { return plot_script(rows, spec, data_path, who); }, who);
}

std::vector<std::pair<std::string, std::string>> render_inline(
    const std::function<void(const std::string& file)>& plot_to) {
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> out;
  FilePolicySuspended own_files;
  for (const char* ext : {"png", "svg"}) {
    const std::string file = dir.file((std::string("figure.") + ext).c_str());
    plot_to(file);
    out.emplace_back(std::string(ext) == "png" ? "image/png" : "image/svg+xml",
                     read_text_file(file));
  }
  return out;
}

void run_gnuplot_plot(const std::string& file,
                      const std::function<PlotScript(const std::string& data_path)>& make,
                      const std::string& who) {
  check_file_write(file);
  FilePolicySuspended own_files;  // the temporary data, script and messages files
  TempDir dir;
  const std::string data_path = dir.file("data.tsv");
  const std::string script_path = dir.file("plot.gp");
  const std::string messages_path = dir.file("messages.txt");
  // The request is checked before gnuplot is looked for: a bad one is reported as such.
  const PlotScript p = make(data_path);
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) fail(ErrorKind::Unsupported, "{}", gnuplot_missing_message(who));
  write_text_file(data_path, p.data);
  write_text_file(script_path, p.script);
  // Truncated first: a file left from before cannot pass for gnuplot's, and an unwritable path
  // fails here with the system's reason rather than inside gnuplot.
  write_text_file(file, "");
  std::string messages;
  const int status = run_gnuplot(gnuplot, script_path, messages_path, &messages);
  struct stat st {};
  const bool written = ::stat(file.c_str(), &st) == 0 && st.st_size > 0;
  if (status != 0 || !written) {
    fail(ErrorKind::Value, "gnuplot failed to plot {} (exit status {}){}{}", file, status,
         messages.empty() ? "" : ":\n", messages);
  }
}

}  // namespace culua::detail::measure
