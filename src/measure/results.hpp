// Results of parameter sweeps, independent of Lua: the value tree of every point, the result
// file (JSON), CSV and markdown tables, and the primary metric that comparisons and plots use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/base/json.hpp"

namespace culua::detail::measure {

// Result values are JSON values (src/core/base/json.hpp).
using json::find;
using json::set_member;
using json::Value;

// JSON text through json::write. indent < 0: one line; otherwise objects spread over lines while
// lists of scalars and short objects of scalars stay on one line.
inline std::string to_json(const Value& v, int indent = -1) {
  return json::write(v, {indent, true});
}
// Parses JSON; raises culua::detail::Error (ErrorKind::Value) naming `what` and the position.
inline Value parse_json(std::string_view text, std::string_view what) {
  return json::parse(text, what);
}

// The position of a result field in tables and files: cu.bench's fields in their order (name,
// samples, gpu, cpu, min, median, ...), then every other name.
int result_field_rank(std::string_view key);
// Sorts members by result_field_rank, then by name (result files do not change from run to run).
void sort_result_fields(Value::Object& o);

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
// Reads a result file; raises culua::detail::Error naming `what` for invalid JSON or a file that is
// not a culua result file.
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
Value::Object cuda_versions(Backend& backend);

}  // namespace culua::detail::measure
