// The sweep engine, independent of Lua: the points of a parameter sweep (every combination of
// the axes' values, the last axis fastest), the progress bar, each point's outcome, interruption,
// timing, and the outputs (a markdown table on stdout, JSON and CSV files, a plot). cu.sweep is
// its Lua front end; an embedding application can run a sweep with a C++ function per point.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "measure/plot.hpp"
#include "measure/results.hpp"

namespace culua::detail::measure {

struct SweepAxis {
  std::string name;
  std::vector<Value> values;
};

// One point, as the run function sees it.
struct SweepPoint {
  size_t index = 0;        // 0-based, in iteration order
  std::vector<size_t> at;  // per axis, the index of its value
  Value::Object params;    // axis name = value, in axis order
  std::string label;       // "n=1024 dtype=f32" (the progress bar's)
};

// What running one point gave.
struct PointRun {
  enum class Status { Ok, Failed, Interrupted };
  Status status = Status::Ok;
  // Ok: the point's results (a number of milliseconds is the field `ms`). Fields named like an
  // axis or "status" are dropped (the point's own values win) with one warning per sweep.
  Value::Object fields;
  std::string error;  // Failed: why

  static PointRun ok(Value::Object fields) { return {Status::Ok, std::move(fields), {}}; }
  static PointRun failed(std::string error) { return {Status::Failed, {}, std::move(error)}; }
  static PointRun interrupted() { return {Status::Interrupted, {}, {}}; }
};

// Where the results go besides the returned sweep. The `what`s name each output in messages
// ("json= file", "--json file", "plot=", "--plot").
struct SweepOutputs {
  std::string json, json_what = "json= file";
  std::string csv, csv_what = "csv= file";
  bool plot = false;
  PlotSpec plot_spec;  // the fields given (file= at least); the others default from the sweep
  std::string plot_what = "plot=";
};

// A sweep split over the processes of a job (cu.sweep{distribute=true}): this process runs the
// points whose index % size == rank (round-robin), then calls `gather` once with the indices of
// the points it ran and their records; at rank 0 gather returns every point of the sweep in point
// order (and sets `interrupted` when any process was interrupted), elsewhere this process's own.
// Only rank 0 writes the outputs and prints the table. Every process must call gather, also when
// interrupted: a failed point is a failed row, never a missing one.
struct SweepShare {
  size_t rank = 0;
  size_t size = 1;
  std::function<std::vector<Point>(const std::vector<size_t>& indices, std::vector<Point> points,
                                   bool& interrupted)>
      gather;
};

struct SweepSpec {
  std::string name = "sweep";
  std::vector<SweepAxis> axes;
  // Runs one point. A culua::detail::Error it throws fails the point (ErrorKind::Interrupted
  // interrupts the sweep); other exceptions end the sweep and propagate.
  std::function<PointRun(const SweepPoint&)> run;
  bool quiet = false;  // no table on stdout, unless an output could not be written
  SweepOutputs outputs;
  SweepShare share;  // one process: size 1, no gather
};

// The files of all sweeps of one run (a file named by several sweeps holds all of them: each
// write rewrites it whole) and the plots' numbering.
struct SweepSession {
  std::map<std::string, std::vector<Sweep>> json_files, csv_files;
  std::map<std::string, int> plot_files;
};

struct SweepReport {
  Sweep sweep;                          // interrupted: the points before the interruption
  std::vector<std::string> collisions;  // field names run returned that name an axis or status
  std::vector<std::string> failures;    // outputs that could not be written, why
};

// Raises culua::detail::Error for an axis name that cannot be one (empty, "status", "error",
// or one of `axes` already).
void check_axis_name(const std::vector<SweepAxis>& axes, const std::string& name);
// Checks what can be known to fail before a sweep runs: its axes, the number of points (at most
// 10^8), the output files (writable) and the plot (format, gnuplot present).
void check_sweep(const SweepSpec& spec);
// The number of points of the axes.
size_t point_count(const std::vector<SweepAxis>& axes);
// The point `index` (0-based, in iteration order: the last axis fastest) of the axes, as the run
// function sees it (an isolated point's child process runs that one point).
SweepPoint sweep_point(const std::vector<SweepAxis>& axes, size_t index);

// Runs the sweep (check_sweep first): every point, a progress bar on stderr when it is a
// terminal, a warning on stderr for colliding fields, then the outputs: the markdown table on
// stdout (unless quiet), the files, the plot. `run_description` gives the "run" members of a
// result file. Write failures are reported, not raised (the results are kept).
SweepReport run_sweep(const SweepSpec& spec, SweepSession& session,
                      const std::function<Value::Object()>& run_description);

// "sweep 'name' ran, but <failures> (its table is printed above)".
std::string write_failure_message(const std::string& name,
                                  const std::vector<std::string>& failures);

// The rows of a sweep as plots read them: params, result fields, status and error.
std::vector<Value> sweep_rows(const Sweep& s);
// A sweep's plot: x = the first axis, y = the primary metric, one line per value of the others.
PlotSpec default_plot(const Sweep& s);
// Plots rows of the sweep `s` (raises when no point has a numeric result).
void plot_sweep(const Sweep& s, const std::vector<Value>& rows, const PlotSpec& spec,
                const std::string& who);
// Raises unless `path` can be written (an existing writable file, or a writable directory).
void check_writable(const std::string& path, const std::string& what);
// Checks a plot output before anything runs: format, gnuplot, writable.
void check_plot_output(const std::string& file, const std::string& what);
// The message prefix for an output: "culua --plot" for options, "cu.sweep's plot=" otherwise.
std::string output_who(const std::string& what);

}  // namespace culua::detail::measure
