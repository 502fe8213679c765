// Results of parameter sweeps, independent of Lua: the value tree of every point, the result
// file (JSON), CSV and markdown tables, and the primary metric that comparisons and plots use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace culua::detail::measure {

// A JSON-like value. Objects keep their members in insertion order.
class Value {
 public:
  using List = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;

  Value() = default;
  Value(bool b) : v_(b) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(int64_t i) : v_(i) {}
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(List l) : v_(std::move(l)) {}
  Value(Object o) : v_(std::move(o)) {}

  bool is_null() const { return v_.index() == 0; }
  bool is_bool() const { return v_.index() == 1; }
  bool is_integer() const { return v_.index() == 2; }
  bool is_number() const { return v_.index() == 2 || v_.index() == 3; }
  bool is_string() const { return v_.index() == 4; }
  bool is_list() const { return v_.index() == 5; }
  bool is_object() const { return v_.index() == 6; }
  bool is_scalar() const { return !is_list() && !is_object(); }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_integer() const { return std::get<int64_t>(v_); }
  double as_number() const;  // integers convert
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& as_list() { return std::get<List>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // An object's member, or null when this is not an object or has no such member.
  const Value* get(std::string_view key) const;
  // A member reached through a dotted path ("gpu.median"); null when any step is missing.
  const Value* at_path(std::string_view path) const;
  // The number at a dotted path, when there is one.
  std::optional<double> number_at(std::string_view path) const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, List, Object> v_;
};

// Finds a member of an object.
const Value* find(const Value::Object& o, std::string_view key);
// Sets a member, replacing one of the same name.
void set_member(Value::Object& o, std::string key, Value v);

// JSON text. indent < 0: one line; otherwise objects spread over lines while lists of scalars
// stay on one line. Non-finite numbers become null; invalid UTF-8 becomes U+FFFD.
std::string to_json(const Value& v, int indent = -1);
// Parses JSON; raises culua::detail::Error (ErrorKind::Value) naming `what` and the position.
Value parse_json(std::string_view text, std::string_view what);

// Short text of a value for tables: 1024, f32, true, 0.5, [64, 64].
std::string to_text(const Value& v);
// A number with `digits` significant digits in plain notation (12.35, 1235, 0.001235); very
// small or large magnitudes use exponents.
std::string format_significant(double v, int digits = 4);

// One point of a sweep: its parameters, whether run succeeded, and everything run returned (a
// number of milliseconds is kept as the field `ms`).
struct Point {
  Value::Object params;
  bool ok = true;
  std::string error;  // why it failed
  Value::Object result;
};

struct Sweep {
  std::string name;
  std::vector<std::string> axes;
  std::vector<Point> points;
  std::string started;  // UTC, ISO 8601
  double seconds = 0;   // wall time of the whole sweep
  bool interrupted = false;
};

// A result file: what the run was (version, script, backend, device, ...) and its sweeps.
struct ResultFile {
  Value::Object run;
  std::vector<Sweep> sweeps;
};

// Marks culua result files (the member "format").
inline constexpr char kResultFormat[] = "culua-results";
inline constexpr int kResultFormatVersion = 1;

// The JSON text of a result file (`run`'s members, then "sweeps").
std::string results_json(const ResultFile& file);
// Reads a result file; raises culua::detail::Error naming `what` for invalid JSON or a file that is not
// a culua result file.
ResultFile parse_results(std::string_view text, std::string_view what);

// The value a point is judged by: gpu.median for bench results, `ms` for run functions that
// return a number, else the first numeric field. Throughputs (GBps, TFLOPs, ...) are better
// when higher.
struct Metric {
  std::string path;
  double value = 0;
  double noise = 0;  // relative standard deviation (a fraction); 0 when not measured
  bool lower_is_better = true;
};
// The metric of `p` at `path`, or chosen as above when `path` is empty; none for failed points
// and points without a number there.
std::optional<Metric> primary_metric(const Point& p, std::string_view path = {});
// The metric path of the first point that has one (empty when none has).
std::string primary_metric_path(const Sweep& s);
// Whether the metric at `path` is a time in milliseconds (gpu.median, cpu.mean, ms, ...).
bool is_milliseconds(std::string_view path);
// A unit for a table of times in milliseconds: "µs" (factor 1000) when their median is below
// 1 ms, else "ms".
struct TimeUnit {
  const char* name;
  double per_ms;
};
TimeUnit choose_time_unit(const std::vector<double>& ms);

// A table of text cells; `numeric` columns are right-aligned in markdown.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};
// The columns people read: the axes, then for bench results gpu median, noise, GB/s, TFLOP/s,
// cpu median, samples; `ms` as time; other scalar fields in first-seen order (nested objects
// with dotted names); notes (launch-bound, throttled, clock changes); status when any failed.
Table summary_table(const Sweep& s);
// A markdown table with aligned columns.
std::string markdown(const Table& t);
inline std::string sweep_markdown(const Sweep& s) {
  return markdown(summary_table(s));
}
// CSV of one or more sweeps: sweep, the axes, status, error, then every scalar field (nested
// objects flattened as gpu.median, times in milliseconds). Lists are left out (see JSON).
std::string sweeps_csv(const std::vector<const Sweep*>& sweeps);

// Writes a file whole; raises culua::detail::Error naming the path and the system's reason.
void write_text_file(const std::string& path, std::string_view content);
// Reads a file whole; raises culua::detail::Error naming the path.
std::string read_text_file(const std::string& path);

// 64-bit FNV-1a of the bytes, as 16 hex digits.
std::string fnv1a64_hex(std::string_view bytes);
// The current time, UTC, ISO 8601 ("2026-11-21T17:22:32Z").
std::string utc_timestamp();
std::string host_name();
// {driver=, runtime=} CUDA versions ("13.0") on a CUDA build; an empty object otherwise.
Value::Object cuda_versions();

}  // namespace culua::detail::measure
