// What the files of cu.sweep share (namespace lua::sweeps): Lua values as result values, the
// session, rows, the results object and plots, isolated points and the MPI share. cu.sweep's entry
// and its run: sweep.cpp; the session: sweep_session.cpp; the results object and plots:
// sweep_results.cpp; isolated points, the MPI share and the test hook: sweep_isolate.cpp.
#pragma once

#include <lua.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "lua/binding.hpp"
#include "lua/json_value.hpp"
#include "measure/isolate.hpp"
#include "measure/results.hpp"
#include "measure/sweep.hpp"

namespace culua::detail::lua::sweeps {

using measure::Value;

// ---- Lua values to result values ----

inline bool is_data(int type) {
  return type == LUA_TNIL || type == LUA_TBOOLEAN || type == LUA_TNUMBER || type == LUA_TSTRING ||
         type == LUA_TTABLE;
}

// Result values: what JSON can hold (functions, userdata and threads are left out), members in
// the order of result files (measure::sort_result_fields), empty tables as lists.
inline constexpr ToJsonOptions kResultValue{.order = ToJsonOptions::Order::Fields};

inline Value to_value(lua_State* L, int idx) {
  return to_json_value(L, idx, kResultValue);
}

// The data members of the table at idx whose keys are strings or numbers, sorted; `skip` leaves
// out members by name.
template <class Skip>
Value::Object table_fields(lua_State* L, int idx, Skip&& skip) {
  idx = lua_absindex(L, idx);
  check_stack(L, 4, "result value");
  Value::Object o;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const int key = lua_type(L, -2);
    if ((key == LUA_TSTRING || key == LUA_TNUMBER) && is_data(lua_type(L, -1))) {
      lua_pushvalue(L, -2);  // converted on a copy: lua_next needs the key unchanged
      std::string name = lua_tostring(L, -1);
      lua_pop(L, 1);
      if (!skip(name)) {
        try {
          o.emplace_back(name, to_value(L, -1));
        } catch (const Error& e) {
          fail(e.kind(), "field '{}': {}", name, e.what());  // a cycle: name where it starts
        }
      }
    }
    lua_pop(L, 1);
  }
  measure::sort_result_fields(o);
  return o;
}

// ---- the session: what all sweeps of this Lua state wrote (sweep_session.cpp) ----

// Files named by several sweeps of one run hold all of them (each write rewrites the whole
// file); the run's description (script, arguments, date) is taken when the first sweep starts.
// For isolated points it also counts the cu.sweep calls of each name and keeps the journal of
// the completed sweeps (the parent), or reads it (a child).
struct Session {
  bool started = false;
  std::string date;
  Value script;
  measure::SweepSession files;
  std::map<std::string, int> counts;           // cu.sweep calls of each name
  std::vector<measure::JournalEntry> journal;  // the completed sweeps (not in a child)
  bool replay_loaded = false;                  // a child: the parent's journal, read once
  std::vector<measure::JournalEntry> replay;
  bool in_target = false;  // a child: its point is running
};

// The session of this Lua state, made on first use; the date and the script are taken then.
Session& started_session(lua_State* L);

// The run's description in result files: culua's version, the date, host, script, backend and
// device.
Value::Object run_description(lua_State* L, const Session& s);

// ---- rows (sweep.cpp) ----

// The text of an error value that run raised, as tostring gives it. A __tostring that raises (or
// returns no string) does not end the sweep or lose the error: the text says what happened.
std::string error_text(lua_State* L, int idx);

// Pushes p, the parameters of the point `at` (from the axes' value tables at `values`).
void push_params(lua_State* L, const measure::SweepPoint& at,
                 const std::vector<measure::SweepAxis>& axes, int values);

// Why a value run returned cannot be a point's result (empty: it can).
std::string bad_result(lua_State* L, int idx);

// Adds the row of the point `at` to the table at `rows`: the point's own values, what run
// returned (ok: the value at `result`) or why it failed (the error value at `result`), status and
// error; returns the point's outcome.
measure::PointRun add_row(lua_State* L, const measure::SweepPoint& at,
                          const std::vector<measure::SweepAxis>& axes, int values, int rows,
                          bool ok, int result);

// ---- the results object and plots (sweep_results.cpp) ----

// A point from a row: the axes are its parameters, `status`/`error` its outcome, the other
// members what run returned.
measure::Point point_from_row(lua_State* L, int row, const std::vector<std::string>& axes);

// Pushes the results object of `sweep` whose rows are the table at `rows`.
void push_results(lua_State* L, const measure::Sweep& sweep, int rows);

// Option `key` of the table at `opts`: a string, or empty when absent; `what` prefixes the
// message of a value that is not a string.
std::string opt_string(lua_State* L, int opts, const char* key, const char* what);

// Plot options: a file name, or {x=, y=, series=, file=, logx=, logy=, title=, xlabel=, ylabel=};
// what it leaves out keeps the value in `spec`.
void read_plot_options(lua_State* L, int idx, measure::PlotSpec& spec, const char* what);

// cu.plot(rows, {x=, y=, series=, file=, ...}): rows are a list of tables or sweep results.
int l_plot(lua_State* L);

// The metatable of the results object (cu.SweepResults) and its methods.
void register_results(lua_State* L);

// ---- isolated points and the MPI share (sweep_isolate.cpp) ----

// "1st", "2nd", "3rd", "4th", ...
std::string ordinal(int n);

// The parent's side: runs the point in a child process (measure::run_child) and adds its row.
struct Isolation {
  std::vector<std::string> argv;
  double timeout_s = 0;
  std::string folder, journal;
  std::string sweep;
  int occurrence = 0;
};

measure::PointRun run_isolated_point(lua_State* L, const measure::SweepPoint& at,
                                     const std::vector<measure::SweepAxis>& axes, int values,
                                     int rows, int interruption, const Isolation& iso);

#if defined(CULUA_HAVE_MPI)
// distribute=true under MPI: every rank sends the rows it ran (with their indices: a table
// {interrupted=, rows={[index]=row}}, members that cannot travel left out) to rank 0, which puts
// them into its rows table at `rows` and records every point from the rows.
std::vector<measure::Point> gather_rows(lua_State* L, int rows,
                                        const std::vector<std::string>& axes, size_t total,
                                        const std::vector<size_t>& indices,
                                        std::vector<measure::Point> points, bool& interrupted);
#endif

// distribute=true: which rank this is and how many share the sweep (1 without MPI, or when MPI was
// built but the script was not started by mpirun).
measure::SweepShare sweep_share(bool distribute);

// While a distributed sweep runs, its rank uses device local_rank % device count (one GPU per
// rank on each node); the device before is selected again afterwards.
class RankDevice {
 public:
  RankDevice(Runtime& rt, bool on);
  ~RankDevice();
  RankDevice(const RankDevice&) = delete;
  RankDevice& operator=(const RankDevice&) = delete;

 private:
  Runtime& rt_;
  int previous_ = -1;
};

// The options isolate= and timeout= (seconds; 0: none).
struct IsolateOptions {
  bool isolate = false;
  double timeout_s = 0;
};

IsolateOptions read_isolate_options(lua_State* L);

// In a child process of an isolated point, a sweep started before its target: the results the
// parent journaled for it (the sweep does not run, print or write). Pushes them and returns true,
// or returns false when the journal has no such sweep.
bool replay_journaled(lua_State* L, Session& session, const std::string& name, int occurrence);

// In a child process, the target sweep: runs the one point (its output joins the child's stderr,
// which the parent reads), writes what run returned (or its error) to the result file and ends
// the process at once: nothing after the sweep runs.
[[noreturn]] void run_target_point(lua_State* L, Session& session, const measure::SweepSpec& spec,
                                   int run, int values);

// Registers the module "cu.test_hooks" in package.preload (cu.testing.segfault).
void preload_test_hooks(lua_State* L);

}  // namespace culua::detail::lua::sweeps
