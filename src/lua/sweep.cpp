// cu.sweep and cu.plot: the Lua front end of the sweep engine (src/measure/sweep.hpp), and plots
// through gnuplot.
//
// cu.sweep converts its table into a measure::SweepSpec whose run function calls the script's
// `run` and builds each Lua row beside the engine's record of the point; the engine writes the
// outputs. Afterwards the rows (Lua tables) are the results' source of truth: tostring, :json(),
// :csv() and :plot() read them back, with whatever the script changed.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "core/version.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/json_value.hpp"
#include "lua/mpi_values.hpp"
#include "lua/sandbox.hpp"
#include "measure/counters.hpp"
#include "measure/isolate.hpp"

#include "measure/plot.hpp"
#include "measure/results.hpp"
#include "measure/sweep.hpp"

#if defined(CULUA_HAVE_MPI)
#include "dist/mpi.hpp"
#endif

namespace culua::detail::lua {

namespace {

using measure::Value;

constexpr char kResultsType[] = "cu.SweepResults";
constexpr char kSessionType[] = "cu.SweepSession";  // the address keys the session
// The session's metatable (an internal type: no cu. name, so not one of the module's types).
constexpr char kSessionMetatable[] = "culua.SweepSession";

// ---- Lua values to result values ----

bool is_data(int type) {
  return type == LUA_TNIL || type == LUA_TBOOLEAN || type == LUA_TNUMBER || type == LUA_TSTRING ||
         type == LUA_TTABLE;
}

// Result values: what JSON can hold (functions, userdata and threads are left out), members in
// the order of result files (measure::sort_result_fields), empty tables as lists.
constexpr ToJsonOptions kResultValue{.order = ToJsonOptions::Order::Fields};

Value to_value(lua_State* L, int idx) {
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

// tostring(v) for error_text, run protected: a __tostring may raise.
int tostring_value(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

// The text of an error value that run raised, as tostring gives it. A __tostring that raises (or
// returns no string) does not end the sweep or lose the error: the text says what happened.
std::string error_text(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER) {
    return lua_tostring(L, idx);
  }
  idx = lua_absindex(L, idx);
  check_stack(L, 2, "cu.sweep");
  lua_pushcfunction(L, tostring_value);
  lua_pushvalue(L, idx);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
    std::string s = lua_tostring(L, -1);
    lua_pop(L, 1);
    return s;
  }
  const int why = lua_type(L, -1);
  std::string s =
      fmt::format("(error object is a {} value whose __tostring raised ", luaL_typename(L, idx));
  s += why == LUA_TSTRING || why == LUA_TNUMBER
           ? std::string("an error: ") + lua_tostring(L, -1) + ")"
           : fmt::format("a {} value)", lua_typename(L, why));
  lua_pop(L, 1);
  return s;
}

// ---- the session: what all sweeps of this Lua state wrote ----

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

int session_gc(lua_State* L) {
  auto* s = static_cast<Session*>(arg_udata(L, 1, kSessionMetatable));
  s->~Session();
  new (s) Session{};  // idempotent
  return 0;
}

Value script_description(lua_State* L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) {
    lua_pop(L, 1);
    return Value();
  }
  const int arg = lua_gettop(L);
  Value::Object o;
  o.reserve(4);
  lua_rawgeti(L, arg, 0);
  if (lua_type(L, -1) == LUA_TSTRING) {
    const std::string path = lua_tostring(L, -1);
    o.emplace_back("path", path);
    if (path != "-") {
      try {
        o.emplace_back("fnv1a64", measure::fnv1a64_hex(measure::read_text_file(path)));
      } catch (const Error&) {
        // The script may have moved since it started; the file is then described without it.
      }
    }
  } else {
    o.emplace_back("path", Value());
  }
  lua_pop(L, 1);
  Value::List args, command;
  for (lua_Integer i = 1; lua_rawgeti(L, arg, i) == LUA_TSTRING; ++i) {
    args.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_Integer first = 0;
  while (true) {
    const int t = lua_rawgeti(L, arg, first - 1);
    lua_pop(L, 1);
    if (t != LUA_TSTRING) break;
    --first;
  }
  for (lua_Integer i = first; lua_rawgeti(L, arg, i) == LUA_TSTRING; ++i) {
    command.emplace_back(lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  o.emplace_back("args", std::move(args));
  o.emplace_back("command", std::move(command));
  return Value(std::move(o));
}

Session& session(lua_State* L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, kSessionType) == LUA_TUSERDATA) {
    auto* s = static_cast<Session*>(lua_touserdata(L, -1));
    lua_pop(L, 1);
    return *s;
  }
  lua_pop(L, 1);
  auto* s = static_cast<Session*>(lua_newuserdatauv(L, sizeof(Session), 0));
  if (luaL_newmetatable(L, kSessionMetatable)) {
    lua_pushcfunction(L, entry<session_gc>);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  new (s) Session{};
  lua_rawsetp(L, LUA_REGISTRYINDEX, kSessionType);
  return *s;
}

Session& started_session(lua_State* L) {
  Session& s = session(L);
  if (!s.started) {
    s.date = measure::utc_timestamp();
    s.script = script_description(L);
    s.started = true;
  }
  return s;
}

Value::Object run_description(lua_State* L, const Session& s) {
  Runtime& rt = runtime(L);
  Value::Object o;
  o.emplace_back("culua_version", CULUA_VERSION);
  o.emplace_back("date", s.date);
  o.emplace_back("host", measure::host_name());
  o.emplace_back("script", s.script);
  const auto backend = backend_name(rt.kind());
  o.emplace_back("backend", std::string(backend));
  try {
    const DeviceInfo d = rt.backend().device_info(rt.device());
    Value::Object dev{{"index", d.index},
                      {"name", d.name},
                      {"sm_count", d.sm_count},
                      {"memory", static_cast<int64_t>(d.memory)},
                      {"l2", static_cast<int64_t>(d.l2)}};
    if (rt.kind() == BackendKind::Cuda)
      dev.emplace_back("cc", fmt::format("{}.{}", d.cc_major, d.cc_minor));
    o.emplace_back("device", std::move(dev));
  } catch (const Error& e) {
    o.emplace_back("device", Value::Object{{"error", e.what()}});
  }
  if (rt.kind() == BackendKind::Cuda) o.emplace_back("cuda", measure::cuda_versions(rt.backend()));
  return o;
}

// ---- results tables ----

std::string string_field(lua_State* L, int idx, const char* key) {
  std::string s;
  if (lua_getfield(L, idx, key) == LUA_TSTRING) s = lua_tostring(L, -1);
  lua_pop(L, 1);
  return s;
}

std::vector<std::string> string_list(lua_State* L, int idx, const char* key) {
  std::vector<std::string> out;
  if (lua_getfield(L, idx, key) == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; ++i) {
      out.emplace_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return out;
}

bool is_results(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return false;
  lua_rawgetp(L, LUA_REGISTRYINDEX, kResultsType);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

void check_results(lua_State* L, int idx) {
  if (!is_results(L, idx)) {
    fail(ErrorKind::Type, "expected the results of cu.sweep ({}), got {}", kResultsType,
         luaL_typename(L, idx));
  }
}

// A point from a row: the axes are its parameters, `status`/`error` its outcome, the other
// members what run returned.
measure::Point point_from_row(lua_State* L, int row, const std::vector<std::string>& axes) {
  row = lua_absindex(L, row);
  measure::Point p;
  for (const std::string& a : axes) {
    if (lua_getfield(L, row, a.c_str()) != LUA_TNIL) p.params.emplace_back(a, to_value(L, -1));
    lua_pop(L, 1);
  }
  p.ok = string_field(L, row, "status") != "failed";
  if (!p.ok) {
    lua_getfield(L, row, "error");
    p.error = lua_isnil(L, -1) ? std::string() : error_text(L, -1);
    lua_pop(L, 1);
  }
  p.result = table_fields(L, row, [&](const std::string& k) {
    return k == "status" || (!p.ok && k == "error") ||
           std::find(axes.begin(), axes.end(), k) != axes.end();
  });
  return p;
}

measure::Sweep sweep_from_results(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  measure::Sweep s;
  s.name = string_field(L, idx, "name");
  s.axes = string_list(L, idx, "axes");
  s.started = string_field(L, idx, "started");
  lua_getfield(L, idx, "seconds");
  s.seconds = lua_tonumber(L, -1);
  lua_getfield(L, idx, "interrupted");
  s.interrupted = lua_toboolean(L, -1);
  lua_pop(L, 2);
  if (lua_getfield(L, idx, "rows") == LUA_TTABLE) {
    for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; ++i) {
      s.points.push_back(point_from_row(L, -1, s.axes));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return s;
}

// The rows of a results object or of a list of tables, as values (for plots).
std::vector<Value> rows_as_values(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (is_results(L, idx)) {
    lua_getfield(L, idx, "rows");
    std::vector<Value> rows = rows_as_values(L, -1);
    lua_pop(L, 1);
    return rows;
  }
  std::vector<Value> rows;
  const lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    if (lua_rawgeti(L, idx, i) != LUA_TTABLE) {
      fail(ErrorKind::Type, "rows[{}] is a {}; rows must be tables", i, luaL_typename(L, -1));
    }
    rows.push_back(to_value(L, -1));
    lua_pop(L, 1);
  }
  return rows;
}

// ---- plots ----

std::string opt_string(lua_State* L, int opts, const char* key, const char* what) {
  std::string s;
  if (get_option(L, opts, key)) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      fail(ErrorKind::Type, "{}{} must be a string, got {}", what, key, luaL_typename(L, -1));
    }
    s = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  return s;
}

// Plot options: a file name, or {x=, y=, series=, file=, logx=, logy=, title=, xlabel=, ylabel=};
// what it leaves out keeps the value in `spec`.
void read_plot_options(lua_State* L, int idx, measure::PlotSpec& spec, const char* what) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    spec.file = lua_tostring(L, idx);
    return;
  }
  if (lua_type(L, idx) != LUA_TTABLE) {
    fail(ErrorKind::Type, "{} must be a file name or a table {{x=, y=, file=, ...}}, got {}", what,
         luaL_typename(L, idx));
  }
  check_fields(L, idx,
               {"x", "y", "series", "file", "logx", "logy", "title", "xlabel", "ylabel", "kind"});
  const std::string prefix = std::string(what) + ".";
  if (std::string kind = opt_string(L, idx, "kind", prefix.c_str()); !kind.empty()) {
    if (kind != "lines" && kind != "roofline") {
      fail(ErrorKind::Value, "{}kind must be \"lines\" or \"roofline\", got \"{}\"", prefix, kind);
    }
    spec.kind = kind == "lines" ? "" : kind;
  }
  for (auto [key, field] : {std::pair{"x", &spec.x}, std::pair{"y", &spec.y},
                            std::pair{"file", &spec.file}, std::pair{"title", &spec.title},
                            std::pair{"xlabel", &spec.xlabel}, std::pair{"ylabel", &spec.ylabel}}) {
    std::string v = opt_string(L, idx, key, prefix.c_str());
    if (!v.empty()) *field = std::move(v);
  }
  if (get_option(L, idx, "series")) {
    spec.series.clear();
    if (lua_type(L, -1) == LUA_TSTRING) {
      spec.series.emplace_back(lua_tostring(L, -1));
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      const lua_Integer n = luaL_len(L, -1);
      for (lua_Integer i = 1; i <= n; ++i) {
        if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
          fail(ErrorKind::Type, "{}series must be a field name or a list of them", prefix);
        }
        spec.series.emplace_back(lua_tostring(L, -1));
        lua_pop(L, 1);
      }
    } else {
      fail(ErrorKind::Type, "{}series must be a field name or a list of them, got {}", prefix,
           luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  for (auto [key, field] : {std::pair{"logx", &spec.logx}, std::pair{"logy", &spec.logy}}) {
    if (get_option(L, idx, key)) {
      if (!lua_isboolean(L, -1)) {
        fail(ErrorKind::Type, "{}{} must be a boolean, got {}", prefix, key, luaL_typename(L, -1));
      }
      *field = lua_toboolean(L, -1) != 0;
      lua_pop(L, 1);
    }
  }
}

// ---- the sweep ----

// Reads the axes at idx into `axes` and pushes a list of their value tables.
void read_axes(lua_State* L, int spec, std::vector<measure::SweepAxis>& axes) {
  const int type = lua_getfield(L, spec, "axes");
  const int given = lua_gettop(L);
  if (type != LUA_TTABLE) {
    fail(ErrorKind::Type,
         "axes must be a list of pairs {{ {{\"n\", {{1024, 4096}}}} }} or a map "
         "{{n = {{1024, 4096}}}}, got {}",
         luaL_typename(L, given));
  }
  lua_newtable(L);  // the value tables, in axis order
  const int values = lua_gettop(L);
  const auto add = [&](std::string name, int vidx) {
    measure::check_axis_name(axes, name);
    if (lua_type(L, vidx) != LUA_TTABLE) {
      fail(ErrorKind::Type, "axis '{}' must be a list of values, got {}", name,
           luaL_typename(L, vidx));
    }
    measure::SweepAxis a;
    a.name = std::move(name);
    const auto count = static_cast<lua_Integer>(lua_rawlen(L, vidx));
    if (count == 0) fail(ErrorKind::Value, "axis '{}' has no values", a.name);
    for (lua_Integer i = 1; i <= count; ++i) {
      const int t = lua_rawgeti(L, vidx, i);
      if (t != LUA_TNUMBER && t != LUA_TSTRING && t != LUA_TBOOLEAN && t != LUA_TTABLE) {
        fail(ErrorKind::Type,
             "axis '{}' value {} is a {}; axis values must be numbers, strings, booleans or tables",
             a.name, i, luaL_typename(L, -1));
      }
      a.values.push_back(to_value(L, -1));
      lua_pop(L, 1);
    }
    lua_pushvalue(L, vidx);
    lua_rawseti(L, values, static_cast<lua_Integer>(axes.size() + 1));
    axes.push_back(std::move(a));
  };

  lua_getfield(L, spec, "order");
  const int order = lua_gettop(L);
  const lua_Unsigned n = lua_rawlen(L, given);
  if (n > 0) {  // a list of {name, values} pairs
    if (!lua_isnil(L, order)) {
      fail(ErrorKind::Value, "order= is for axes given as a map; a list of pairs has its order");
    }
    lua_Unsigned count = 0;
    lua_pushnil(L);
    while (lua_next(L, given)) {
      ++count;
      lua_pop(L, 1);
    }
    if (count != n) {
      fail(ErrorKind::Value,
           "axes must be either a list of {{name, values}} pairs or a map name = values, not both");
    }
    for (lua_Unsigned i = 1; i <= n; ++i) {
      lua_rawgeti(L, given, static_cast<lua_Integer>(i));
      const int pair = lua_gettop(L);
      if (lua_type(L, pair) != LUA_TTABLE || lua_rawgeti(L, pair, 1) != LUA_TSTRING) {
        fail(ErrorKind::Type,
             "axes[{}] must be a pair {{name, values}}, such as {{\"n\", {{1024, "
             "4096}}}}",
             i);
      }
      std::string name = lua_tostring(L, -1);
      lua_rawgeti(L, pair, 2);
      add(std::move(name), lua_gettop(L));
      lua_pop(L, 3);
    }
  } else {  // a map: order= or sorted names
    std::vector<std::string> names;
    lua_pushnil(L);
    while (lua_next(L, given)) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        fail(ErrorKind::Type,
             "axes must be a list of {{name, values}} pairs or a map name = "
             "values; a key is a {}",
             luaL_typename(L, -2));
      }
      names.emplace_back(lua_tostring(L, -2));
      lua_pop(L, 1);
    }
    if (names.empty()) fail(ErrorKind::Value, "axes is empty: give at least one axis");
    std::sort(names.begin(), names.end());
    if (!lua_isnil(L, order)) {
      if (lua_type(L, order) != LUA_TTABLE) {
        fail(ErrorKind::Type, "order must be a list of axis names, got {}",
             luaL_typename(L, order));
      }
      std::vector<std::string> ordered;
      const lua_Integer k = luaL_len(L, order);
      for (lua_Integer i = 1; i <= k; ++i) {
        if (lua_rawgeti(L, order, i) != LUA_TSTRING) {
          fail(ErrorKind::Type, "order[{}] must be an axis name, got {}", i, luaL_typename(L, -1));
        }
        std::string name = lua_tostring(L, -1);
        lua_pop(L, 1);
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          fail(ErrorKind::Value, "order names '{}', which is not an axis", name);
        }
        if (std::find(ordered.begin(), ordered.end(), name) != ordered.end()) {
          fail(ErrorKind::Value, "order names '{}' twice", name);
        }
        ordered.push_back(std::move(name));
      }
      for (const std::string& name : names) {
        if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) {
          fail(ErrorKind::Value, "order does not name axis '{}'", name);
        }
      }
      names = std::move(ordered);
    }
    for (const std::string& name : names) {
      lua_getfield(L, given, name.c_str());
      add(name, lua_gettop(L));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);  // order
  lua_remove(L, given);
}

// Reads json=, csv= and plot= of the spec at 1, or the command line's --json, --csv, --plot.
measure::SweepOutputs read_outputs(lua_State* L) {
  const RunOptions& cli = context(L).run_options;
  measure::SweepOutputs out;
  out.json = opt_string(L, 1, "json", "");
  if (out.json.empty() && !cli.json.empty()) {
    out.json = cli.json;
    out.json_what = "--json file";
  }
  out.csv = opt_string(L, 1, "csv", "");
  if (out.csv.empty() && !cli.csv.empty()) {
    out.csv = cli.csv;
    out.csv_what = "--csv file";
  }
  if (get_option(L, 1, "plot")) {
    read_plot_options(L, -1, out.plot_spec, "plot");
    lua_pop(L, 1);
    out.plot = true;
    if (out.plot_spec.file.empty())
      fail(ErrorKind::Value, "plot needs file= (a .png or .svg file)");
  } else if (!cli.plot.empty()) {
    out.plot = true;
    out.plot_spec.file = cli.plot;
    out.plot_what = "--plot";
  }
  return out;
}

// Pushes p, the parameters of the point `at` (from the axes' value tables at `values`).
void push_params(lua_State* L, const measure::SweepPoint& at,
                 const std::vector<measure::SweepAxis>& axes, int values) {
  check_stack(L, 4, "cu.sweep");
  lua_createtable(L, 0, static_cast<int>(axes.size()));
  for (size_t k = 0; k < axes.size(); ++k) {
    lua_rawgeti(L, values, static_cast<lua_Integer>(k + 1));
    lua_rawgeti(L, -1, static_cast<lua_Integer>(at.at[k]) + 1);
    lua_setfield(L, -3, axes[k].name.c_str());
    lua_pop(L, 1);
  }
}

// Why a value run returned cannot be a point's result (empty: it can).
std::string bad_result(lua_State* L, int idx) {
  const int t = lua_type(L, idx);
  if (t == LUA_TNUMBER || t == LUA_TTABLE || t == LUA_TNIL) return {};
  return fmt::format(
      "run returned a {}: return a cu.bench result, a number (milliseconds) or a table of fields",
      luaL_typename(L, idx));
}

// Adds the row of the point `at` to the table at `rows`: the point's own values, what run
// returned (ok: the value at `result`) or why it failed (the error value at `result`), status and
// error; returns the point's outcome.
measure::PointRun add_row(lua_State* L, const measure::SweepPoint& at,
                          const std::vector<measure::SweepAxis>& axes, int values, int rows,
                          bool ok, int result) {
  result = lua_absindex(L, result);
  const int top = lua_gettop(L);
  check_stack(L, 10, "cu.sweep");
  lua_createtable(L, 0, static_cast<int>(axes.size()) + 4);  // the row
  const int row = lua_gettop(L);
  for (size_t k = 0; k < axes.size(); ++k) {
    lua_rawgeti(L, values, static_cast<lua_Integer>(k + 1));
    lua_rawgeti(L, -1, static_cast<lua_Integer>(at.at[k]) + 1);
    lua_setfield(L, row, axes[k].name.c_str());
    lua_pop(L, 1);
  }
  measure::PointRun outcome;
  if (!ok) {
    outcome = measure::PointRun::failed(error_text(L, result));
  } else if (std::string bad = bad_result(L, result); !bad.empty()) {
    outcome = measure::PointRun::failed(std::move(bad));
  } else if (lua_type(L, result) == LUA_TNUMBER) {
    lua_pushvalue(L, result);
    lua_setfield(L, row, "ms");
    outcome = measure::PointRun::ok({{"ms", to_value(L, result)}});
  } else if (lua_type(L, result) == LUA_TTABLE) {
    // The row keeps every string-keyed field as run returned it except those named like an axis
    // or status; the engine records the same fields as values and warns about the others.
    try {
      outcome =
          measure::PointRun::ok(table_fields(L, result, [](const std::string&) { return false; }));
    } catch (const Error& e) {
      outcome = measure::PointRun::failed(e.what());  // a field JSON cannot hold (a cycle)
    }
    lua_pushnil(L);
    while (lua_next(L, result)) {
      if (lua_type(L, -2) == LUA_TSTRING) {
        const std::string_view key = lua_tostring(L, -2);
        const bool axis = std::any_of(axes.begin(), axes.end(),
                                      [&](const measure::SweepAxis& a) { return a.name == key; });
        if (!axis && key != "status") {
          lua_pushvalue(L, -2);
          lua_pushvalue(L, -2);
          lua_rawset(L, row);
        }
      }
      lua_pop(L, 1);
    }
  }
  const bool succeeded = outcome.status == measure::PointRun::Status::Ok;
  lua_pushstring(L, succeeded ? "ok" : "failed");
  lua_setfield(L, row, "status");
  if (!succeeded) {
    lua_pushlstring(L, outcome.error.data(), outcome.error.size());
    lua_setfield(L, row, "error");
  }
  lua_pushvalue(L, row);  // a failed conversion may have left values above the row
  lua_rawseti(L, rows, static_cast<lua_Integer>(at.index + 1));
  lua_settop(L, top);
  return outcome;
}

// Runs `run` (at index run) for one point under lua_pcall and adds its row to the table at
// `rows` (add_row). An interruption (Ctrl-C: the CLI's hook raises "interrupted!") leaves its
// error value at `interruption` and adds no row.
measure::PointRun run_point(lua_State* L, const measure::SweepPoint& at,
                            const std::vector<measure::SweepAxis>& axes, int run, int values,
                            int rows, int interruption) {
  const int top = lua_gettop(L);
  check_stack(L, 10, "cu.sweep");
  lua_pushvalue(L, run);
  push_params(L, at, axes, values);
  const int status = lua_pcall(L, 1, 1, 0);
  if (status != LUA_OK) {
    const std::string error = error_text(L, -1);
    const std::string_view tail = "interrupted!";
    const Sandbox* box = Sandbox::of(L);  // a sandbox limit ends the sweep as Ctrl-C does
    if ((box && box->limit_reached()) ||
        (error.size() >= tail.size() &&
         error.compare(error.size() - tail.size(), tail.size(), tail) == 0)) {
      lua_replace(L, interruption);  // the error object, raised again after the outputs
      lua_settop(L, top);
      return measure::PointRun::interrupted();
    }
  }
  measure::PointRun outcome = add_row(L, at, axes, values, rows, status == LUA_OK, -1);
  lua_settop(L, top);
  return outcome;
}

// ---- isolated points (docs/sweep.md#isolated-points, measure/isolate.hpp) ----

// "1st", "2nd", "3rd", "4th", ...
std::string ordinal(int n) {
  const int tens = n % 100;
  const int ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : ones == 1                ? "st"
                       : ones == 2                ? "nd"
                       : ones == 3                ? "rd"
                                                  : "th";
  return fmt::format("{}{}", n, suffix);
}

// Pushes a result value as Lua: objects and lists as tables (null members left out, null in a
// list as cu.json.null), numbers as integers or floats as they were written.
void push_value(lua_State* L, const Value& v) {
  check_stack(L, 3, "cu.sweep");
  if (v.is_null()) {
    push_json_null(L);
  } else if (v.is_bool()) {
    lua_pushboolean(L, v.as_bool() ? 1 : 0);
  } else if (v.is_integer()) {
    lua_pushinteger(L, static_cast<lua_Integer>(v.as_integer()));
  } else if (v.is_number()) {
    lua_pushnumber(L, v.as_number());
  } else if (v.is_string()) {
    lua_pushlstring(L, v.as_string().data(), v.as_string().size());
  } else if (v.is_list()) {
    const Value::List& list = v.as_list();
    lua_createtable(L, static_cast<int>(list.size()), 0);
    for (size_t i = 0; i < list.size(); ++i) {
      push_value(L, list[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else {
    const Value::Object& o = v.as_object();
    lua_createtable(L, 0, static_cast<int>(o.size()));
    for (const auto& [key, member] : o) {
      if (member.is_null()) continue;
      push_value(L, member);
      lua_setfield(L, -2, key.c_str());
    }
  }
}

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
                                     int rows, int interruption, const Isolation& iso) {
  const int top = lua_gettop(L);
  check_stack(L, 6, "cu.sweep");
  measure::ChildRun child;
  child.argv = iso.argv;
  child.executable = "/proc/self/exe";  // this very program, also when argv[0] is not a path
  child.timeout_s = iso.timeout_s;
  child.result_path = fmt::format("{}/point-{}", iso.folder, at.index + 1);
  child.environment = {{measure::kIsolateSweepVar, iso.sweep},
                       {measure::kIsolateOccurrenceVar, std::to_string(iso.occurrence)},
                       {measure::kIsolatePointVar, std::to_string(at.index + 1)},
                       {measure::kIsolateJournalVar, iso.journal},
                       {measure::kIsolateResultVar, child.result_path}};
  std::fflush(nullptr);  // what this process printed comes before anything the child says
  const measure::ChildOutcome outcome = measure::run_child(child);
  if (outcome.end == measure::ChildOutcome::End::Interrupted) {
    lua_pushliteral(L, "interrupted!");
    lua_replace(L, interruption);
    return measure::PointRun::interrupted();
  }
  bool ok = false;
  if (outcome.has_result) {
    try {
      unpack_value(L, outcome.result);
      if (lua_type(L, -1) != LUA_TTABLE) fail(ErrorKind::Value, "not a table");
    } catch (const Error& e) {
      lua_settop(L, top);
      lua_pushfstring(L, "the child's result cannot be read: %s", e.what());
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
      ok = lua_getfield(L, -1, "error") == LUA_TNIL;
      if (ok) {
        lua_pop(L, 1);
        lua_getfield(L, -1, "value");
      }
    }
  } else {
    const std::string why = measure::describe_child_failure(outcome, iso.timeout_s);
    lua_pushlstring(L, why.data(), why.size());
  }
  measure::PointRun result = add_row(L, at, axes, values, rows, ok, -1);
  lua_settop(L, top);
  return result;
}

#if defined(CULUA_HAVE_MPI)
// distribute=true under MPI: every rank sends the rows it ran (with their indices: a table
// {interrupted=, rows={[index]=row}}, members that cannot travel left out) to rank 0, which puts
// them into its rows table at `rows` and records every point from the rows.
std::vector<measure::Point> gather_rows(lua_State* L, int rows,
                                        const std::vector<std::string>& axes, size_t total,
                                        const std::vector<size_t>& indices,
                                        std::vector<measure::Point> points, bool& interrupted) {
  namespace mpi = dist::mpi;
  check_stack(L, 8, "cu.sweep");
  const int top = lua_gettop(L);
  lua_createtable(L, 0, 2);
  lua_pushboolean(L, interrupted ? 1 : 0);
  lua_setfield(L, -2, "interrupted");
  lua_createtable(L, 0, static_cast<int>(indices.size()));
  for (size_t i : indices) {
    lua_rawgeti(L, rows, static_cast<lua_Integer>(i + 1));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "rows");
  const std::string mine = pack_value(L, -1, "a row", true);
  lua_settop(L, top);
  const std::vector<std::string> all = mpi::gather_bytes(mine, 0);
  if (mpi::rank() != 0) return points;
  for (size_t r = 1; r < all.size(); ++r) {
    unpack_value(L, all[r]);
    lua_getfield(L, -1, "interrupted");
    interrupted = interrupted || lua_toboolean(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, -1, "rows");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, rows);
    }
    lua_settop(L, top);
  }
  std::vector<measure::Point> out;
  for (lua_Integer i = 1; i <= static_cast<lua_Integer>(total); ++i) {
    if (lua_rawgeti(L, rows, i) == LUA_TTABLE) out.push_back(point_from_row(L, -1, axes));
    lua_pop(L, 1);
  }
  return out;
}
#endif

// distribute=true: which rank this is and how many share the sweep (1 without MPI, or when MPI was
// built but the script was not started by mpirun).
measure::SweepShare sweep_share(bool distribute) {
  measure::SweepShare share;
#if defined(CULUA_HAVE_MPI)
  namespace mpi = dist::mpi;
  if (distribute && (mpi::launched() || mpi::initialized())) {
    share.rank = static_cast<size_t>(mpi::rank());
    share.size = static_cast<size_t>(mpi::size());
  }
#else
  (void)distribute;
#endif
  return share;
}

// While a distributed sweep runs, its rank uses device local_rank % device count (one GPU per
// rank on each node); the device before is selected again afterwards.
class RankDevice {
 public:
  RankDevice(Runtime& rt, bool on) : rt_(rt) {
#if defined(CULUA_HAVE_MPI)
    if (!on) return;
    const int count = rt.backend().device_count();
    previous_ = rt.device();
    const int d = count > 0 ? dist::mpi::local_rank() % count : previous_;
    if (d != previous_) rt.set_device(d);
#else
    (void)on;
#endif
  }
  ~RankDevice() {
    if (previous_ < 0 || rt_.device() == previous_) return;
    try {
      rt_.set_device(previous_);
    } catch (const std::exception&) {
      // A device error while the sweep ran: the sweep's own error says it.
    }
  }
  RankDevice(const RankDevice&) = delete;
  RankDevice& operator=(const RankDevice&) = delete;

 private:
  Runtime& rt_;
  int previous_ = -1;
};

// Pushes the results object of `sweep` whose rows are the table at `rows`.
void push_results(lua_State* L, const measure::Sweep& sweep, int rows) {
  check_stack(L, 6, "cu.sweep");
  lua_createtable(L, 0, 8);
  const int results = lua_gettop(L);
  lua_pushstring(L, sweep.name.c_str());
  lua_setfield(L, results, "name");
  lua_createtable(L, static_cast<int>(sweep.axes.size()), 0);
  for (size_t i = 0; i < sweep.axes.size(); ++i) {
    lua_pushstring(L, sweep.axes[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, results, "axes");
  lua_pushstring(L, sweep.started.c_str());
  lua_setfield(L, results, "started");
  lua_pushvalue(L, rows);
  lua_setfield(L, results, "rows");
  lua_pushnumber(L, sweep.seconds);
  lua_setfield(L, results, "seconds");
  lua_pushboolean(L, sweep.interrupted ? 1 : 0);
  lua_setfield(L, results, "interrupted");
  lua_rawgetp(L, LUA_REGISTRYINDEX, kResultsType);
  lua_setmetatable(L, results);
}

// The options isolate= and timeout= (seconds; 0: none).
struct IsolateOptions {
  bool isolate = false;
  double timeout_s = 0;
};

IsolateOptions read_isolate_options(lua_State* L) {
  IsolateOptions o;
  o.isolate = opt_boolean(L, 1, "isolate", false);
  if (get_option(L, 1, "timeout")) {
    if (lua_type(L, -1) != LUA_TNUMBER) {
      option_error(1, "timeout", ErrorKind::Type,
                   fmt::format("number of seconds expected, got {}", luaL_typename(L, -1)));
    }
    o.timeout_s = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!(o.timeout_s > 0) || !std::isfinite(o.timeout_s)) {
      option_error(1, "timeout", ErrorKind::Value,
                   fmt::format("must be a number of seconds > 0, got {:g}", o.timeout_s));
    }
    if (!o.isolate) {
      option_error(1, "timeout", ErrorKind::Value,
                   "needs isolate = true (a point that runs in this process cannot be stopped "
                   "safely; an isolated one runs in a child process, which is killed)");
    }
  }
  return o;
}

// In a child process of an isolated point, a sweep started before its target: the results the
// parent journaled for it (the sweep does not run, print or write). Pushes them and returns true,
// or returns false when the journal has no such sweep.
bool replay_journaled(lua_State* L, Session& session, const std::string& name, int occurrence) {
  const measure::PointChild& child = context(L).run_options.child;
  if (!session.replay_loaded) {
    session.replay = measure::parse_journal(measure::read_text_file(child.journal),
                                            "the journal of isolated sweep points");
    session.replay_loaded = true;
  }
  for (const measure::JournalEntry& e : session.replay) {
    if (e.name != name || e.occurrence != occurrence) continue;
    for (const auto& [n, count] : e.counts) {  // sweeps that ran inside it count as in the parent
      int& mine = session.counts[n];
      mine = std::max(mine, count);
    }
    const std::vector<Value> rows = measure::sweep_rows(e.sweep);
    check_stack(L, 4, "cu.sweep");
    lua_createtable(L, static_cast<int>(rows.size()), 0);
    const int table = lua_gettop(L);
    for (size_t i = 0; i < rows.size(); ++i) {
      push_value(L, rows[i]);
      lua_rawseti(L, table, static_cast<lua_Integer>(i + 1));
    }
    push_results(L, e.sweep, table);
    return true;
  }
  return false;
}

// In a child process, the target sweep: runs the one point (its output joins the child's stderr,
// which the parent reads), writes what run returned (or its error) to the result file and ends
// the process at once: nothing after the sweep runs.
[[noreturn]] void run_target_point(lua_State* L, Session& session, const measure::SweepSpec& spec,
                                   int run, int values) {
  const measure::PointChild& child = context(L).run_options.child;
  const size_t total = measure::point_count(spec.axes);
  if (child.point > total) {
    fail(ErrorKind::Value, "sweep '{}' has {} points; this child process was asked for point {}",
         spec.name, total, child.point);
  }
  const measure::SweepPoint at = measure::sweep_point(spec.axes, child.point - 1);
  session.in_target = true;
  std::fflush(stdout);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  check_stack(L, 8, "cu.sweep");
  lua_pushvalue(L, run);
  push_params(L, at, spec.axes, values);
  const int status = lua_pcall(L, 1, 1, 0);
  std::string why;
  if (status != LUA_OK) {
    why = error_text(L, -1);
  } else {
    why = bad_result(L, -1);
    if (why.empty() && lua_type(L, -1) == LUA_TTABLE) {  // as add_row records it in the parent
      const int top = lua_gettop(L);
      try {
        table_fields(L, top, [](const std::string&) { return false; });
      } catch (const Error& e) {
        why = e.what();  // a field JSON cannot hold (a cycle)
      }
      lua_settop(L, top);
    }
  }
  lua_createtable(L, 0, 1);  // {value = what run returned} or {error = why it failed}
  if (why.empty()) {
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "value");
  } else {
    lua_pushlstring(L, why.data(), why.size());
    lua_setfield(L, -2, "error");
  }
  std::string bytes;
  try {
    bytes = pack_value(L, -1, "the point's result", true);
  } catch (const Error& e) {
    lua_newtable(L);
    lua_pushfstring(L, "run's result cannot be sent to the parent process: %s", e.what());
    lua_setfield(L, -2, "error");
    bytes = pack_value(L, -1, "the point's result", true);
  }
  measure::write_file_atomically(child.result, bytes);
  std::fflush(nullptr);
  std::_Exit(0);
}

int l_sweep(lua_State* L) {
  if (lua_type(L, 1) != LUA_TTABLE) type_error(L, 1, "table {name=, axes=, run=}");
  lua_settop(L, 1);
  check_stack(L, 30, "cu.sweep");
  check_options(L, 1,
                {"name", "axes", "run", "order", "quiet", "json", "csv", "plot", "distribute",
                 "isolate", "timeout"});
  measure::SweepSpec spec;
  spec.name = as_argument(1, [&] { return opt_string(L, 1, "name", ""); });
  if (spec.name.empty()) spec.name = "sweep";
  lua_getfield(L, 1, "run");
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    option_error(1, "run", ErrorKind::Type,
                 fmt::format("function expected, got {}", luaL_typename(L, -1)));
  }
  const int run = lua_gettop(L);
  as_argument(1, [&] { read_axes(L, 1, spec.axes); });
  const int values = lua_gettop(L);
  spec.quiet = opt_boolean(L, 1, "quiet", false);
  spec.outputs = as_argument(1, [&] { return read_outputs(L); });
  // A child process of an isolated point is no rank of an MPI job: its sweeps are not shared.
  const bool distribute = opt_boolean(L, 1, "distribute", false);
  spec.share = sweep_share(distribute && !context(L).run_options.child.active());
  if (spec.share.rank != 0) {  // only rank 0 prints and writes files
    spec.outputs = measure::SweepOutputs{};
    spec.quiet = true;
  }
  const IsolateOptions isolate = read_isolate_options(L);
  Session& session = started_session(L);
  const RunOptions& options = context(L).run_options;
  // In a child process, the sweeps that run inside its point run here (they are isolated
  // already), printing and writing nothing: the outputs are the parent's.
  const bool isolated = isolate.isolate && !session.in_target;
  if (session.in_target) {
    spec.outputs = measure::SweepOutputs{};
    spec.quiet = true;
  }
  if (isolated) {
    if (options.rerun.empty()) {
      option_error(1, "isolate", ErrorKind::Unsupported,
                   fmt::format("not available here: {}", options.no_rerun));
    }
    if (Sandbox::of(L)) {
      option_error(1, "isolate", ErrorKind::Unsupported,
                   "not available in --sandbox (each child process would have limits of its own)");
    }
    if (spec.share.size > 1) {
      option_error(1, "isolate", ErrorKind::Unsupported,
                   "cannot be combined with distribute = true under mpirun (a child process "
                   "cannot join the MPI job); run the isolated sweep without distribute");
    }
  }

  // Everything that can be known to fail is checked before anything runs.
  lua_createtable(L, static_cast<int>(std::min<size_t>(measure::point_count(spec.axes), 1 << 20)),
                  0);
  const int rows = lua_gettop(L);
  lua_pushnil(L);
  const int interruption = lua_gettop(L);
  spec.run = [&](const measure::SweepPoint& at) {
    return run_point(L, at, spec.axes, run, values, rows, interruption);
  };
  measure::check_sweep(spec);

  // Sweeps are known by their name and which call of that name they are (1st, 2nd, ...): a child
  // process finds the journaled ones and its target so.
  const int occurrence = ++session.counts[spec.name];
  if (options.child.active() && !session.in_target) {
    if (replay_journaled(L, session, spec.name, occurrence)) return 1;
    if (spec.name == options.child.sweep && occurrence == options.child.occurrence) {
      run_target_point(L, session, spec, run, values);
    }
    fail(ErrorKind::Value,
         "the {} sweep named '{}' ran in the child process of an isolated point (of the {} sweep "
         "named '{}'), but not in its parent before that sweep: a script with cu.sweep{{isolate = "
         "true}} must call the same sweeps in the same order up to the isolated one, since every "
         "child runs the script again from the start",
         ordinal(occurrence), spec.name, ordinal(options.child.occurrence), options.child.sweep);
  }

  std::optional<measure::TempFolder> folder;
  Isolation iso;
  if (isolated) {
    folder.emplace("culua-sweep-");
    iso.argv = options.rerun;
    iso.timeout_s = isolate.timeout_s;
    iso.folder = folder->path();
    iso.journal = iso.folder + "/journal.json";
    iso.sweep = spec.name;
    iso.occurrence = occurrence;
    measure::write_file_atomically(iso.journal, measure::journal_json(session.journal));
    spec.run = [&](const measure::SweepPoint& at) {
      return run_isolated_point(L, at, spec.axes, values, rows, interruption, iso);
    };
  }
#if defined(CULUA_HAVE_MPI)
  if (spec.share.size > 1) {
    std::vector<std::string> axis_names;
    for (const measure::SweepAxis& a : spec.axes) axis_names.push_back(a.name);
    const size_t total = measure::point_count(spec.axes);
    spec.share.gather = [&, axis_names, total](const std::vector<size_t>& indices,
                                               std::vector<measure::Point> points,
                                               bool& interrupted) {
      return gather_rows(L, rows, axis_names, total, indices, std::move(points), interrupted);
    };
  }
#endif
  measure::SweepReport report;
  {
    RankDevice device(runtime(L), spec.share.size > 1);
    report = measure::run_sweep(spec, session.files, [&] { return run_description(L, session); });
  }
  folder.reset();
  const measure::Sweep& sweep = report.sweep;
  if (!options.child.active()) {
    session.journal.push_back({spec.name, occurrence, session.counts, sweep});
  }
  if (spec.share.size > 1) {  // rows without holes: rank 0 all, the others those they ran
    lua_createtable(L, static_cast<int>(sweep.points.size()), 0);
    const auto n = static_cast<lua_Integer>(measure::point_count(spec.axes));
    lua_Integer k = 0;
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_rawgeti(L, rows, i) == LUA_TNIL) {
        lua_pop(L, 1);
        continue;
      }
      lua_rawseti(L, -2, ++k);
    }
    lua_replace(L, rows);
  }
  push_results(L, sweep, rows);

  if (sweep.interrupted) {
    for (const std::string& f : report.failures) std::fprintf(stderr, "culua: %s\n", f.c_str());
    lua_pushvalue(L, interruption);
    raise_value(L);
  }
  if (!report.failures.empty()) {
    fail(ErrorKind::Value, "{}", measure::write_failure_message(sweep.name, report.failures));
  }
  return 1;
}

// The test hook behind cu.testing.segfault (require "cu.test_hooks"): ends the process with
// SIGSEGV, as a crashing kernel launch or library does, for the tests of isolated sweep points.
// Only when the environment variable CULUA_TEST_HOOKS is 1, and never under --sandbox (untrusted
// code must not end the process whatever the environment says).
int l_test_segfault(lua_State* L) {
  if (Sandbox::of(L) != nullptr) {
    fail(ErrorKind::Unsupported,
         "is a test hook that crashes the process; it does not run under --sandbox");
  }
  const char* on = std::getenv("CULUA_TEST_HOOKS");
  if (!on || std::strcmp(on, "1") != 0) {
    fail(ErrorKind::Unsupported,
         "is a test hook that crashes the process (SIGSEGV); it runs only when the environment "
         "variable CULUA_TEST_HOOKS is 1");
  }
  std::fflush(nullptr);
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // no core file
  std::signal(SIGSEGV, SIG_DFL);
  std::raise(SIGSEGV);
  return 0;
}

int open_test_hooks(lua_State* L) {
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, entry<l_test_segfault>);
  lua_setfield(L, -2, "segfault");
  return 1;
}

// ---- methods of results ----

// The fields are the table's own; __index runs only for the methods and for a name that is neither.
// An integer key reads the rows: results[i] is results.rows[i] (nil past the end), so ipairs and
// numeric for loops see the results as the list of their rows.
int results_index(lua_State* L) {
  check_results(L, 1);
  if (lua_isinteger(L, 2)) {
    if (lua_getfield(L, 1, "rows") != LUA_TTABLE) return 0;
    lua_rawgeti(L, -1, lua_tointeger(L, 2));
    return 1;
  }
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  fail(ErrorKind::Index,
       "{} has no field or method '{}' (it has name, axes, rows, started, seconds, interrupted, "
       "json, csv, write_json, write_csv, plot)",
       kResultsType, luaL_tolstring(L, 2, nullptr));
}

// #results: the number of rows.
int results_len(lua_State* L) {
  check_results(L, 1);
  lua_Integer n = 0;
  if (lua_getfield(L, 1, "rows") == LUA_TTABLE) n = static_cast<lua_Integer>(lua_rawlen(L, -1));
  lua_pushinteger(L, n);
  return 1;
}

int results_tostring(lua_State* L) {
  check_results(L, 1);
  const std::string md = measure::sweep_markdown(sweep_from_results(L, 1));
  lua_pushlstring(L, md.data(), md.size());
  return 1;
}

std::string results_json_text(lua_State* L) {
  check_results(L, 1);
  Session& s = started_session(L);
  return measure::results_json({run_description(L, s), {sweep_from_results(L, 1)}});
}

std::string results_csv_text(lua_State* L) {
  check_results(L, 1);
  const measure::Sweep s = sweep_from_results(L, 1);
  return measure::sweeps_csv({&s});
}

int results_json(lua_State* L) {
  const std::string text = results_json_text(L);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int results_csv(lua_State* L) {
  const std::string text = results_csv_text(L);
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

int results_write_json(lua_State* L) {
  check_results(L, 1);
  const std::string path = arg_string(L, 2);
  measure::write_text_file(path, results_json_text(L));
  return 0;
}

int results_write_csv(lua_State* L) {
  check_results(L, 1);
  const std::string path = arg_string(L, 2);
  measure::write_text_file(path, results_csv_text(L));
  return 0;
}

// results:plot{file=, x=, y=, series=, ...} (or results:plot("file.png")): the sweep's default
// plot with what the options change.
// Draws `rows` as `spec` says (lines, or the roofline labelled by `axes`; a sweep's own defaults
// when `sweep` is given) into spec.file and returns it; in a Jupyter kernel, without file=, the
// figure is shown under the cell instead and nothing is returned.
int draw_plot(lua_State* L, const measure::PlotSpec& spec, const std::vector<Value>& rows,
              const measure::Sweep* sweep, const std::vector<std::string>& axes, const char* who) {
  auto draw = [&](const std::string& file) {
    measure::PlotSpec at = spec;
    at.file = file;
    if (spec.kind == "roofline") {
      measure::plot_roofline_rows(rows, axes, file, spec.title, who);
    } else if (sweep) {
      measure::plot_sweep(*sweep, rows, at, who);
    } else {
      measure::plot(rows, at, who);
    }
  };
  if (spec.file.empty() && show_plot_inline(L, draw)) return 0;
  if (spec.kind == "roofline" && spec.file.empty())
    arg_error(2, "needs file= (a .png or .svg file)");
  draw(spec.file);
  lua_pushstring(L, spec.file.c_str());
  return 1;
}

int results_plot(lua_State* L) {
  check_results(L, 1);
  const measure::Sweep s = sweep_from_results(L, 1);
  measure::PlotSpec spec = measure::default_plot(s);
  as_argument(2, [&] { read_plot_options(L, 2, spec, "options"); });
  return draw_plot(L, spec, rows_as_values(L, 1), &s, s.axes, "results:plot");
}

// cu.plot(rows, {x=, y=, series=, file=, ...}): rows are a list of tables or sweep results.
int l_plot(lua_State* L) {
  arg_type(L, 1, LUA_TTABLE);
  if (lua_type(L, 2) != LUA_TTABLE) {
    fail(ErrorKind::Type, "expects options {{x=, y=, file=}} after the rows, got {}",
         luaL_typename(L, 2));
  }
  measure::PlotSpec spec;
  if (is_results(L, 1)) spec = measure::default_plot(sweep_from_results(L, 1));
  as_argument(2, [&] { read_plot_options(L, 2, spec, "options"); });
  std::vector<std::string> axes;
  if (is_results(L, 1)) axes = sweep_from_results(L, 1).axes;
  return draw_plot(L, spec, rows_as_values(L, 1), nullptr, axes, "cu.plot");
}

}  // namespace

void check_run_outputs(const RunOptions& options) {
  if (!options.json.empty()) measure::check_writable(options.json, "--json file");
  if (!options.csv.empty()) measure::check_writable(options.csv, "--csv file");
  if (!options.plot.empty()) measure::check_plot_output(options.plot, "--plot");
  if (!options.trace.empty()) measure::check_writable(options.trace, "--trace file");
  if (!options.profile_file.empty())
    measure::check_writable(options.profile_file, "--profile file");
}

void forbid_rerun(lua_State* L, std::string why) {
  RunOptions& options = context(L).run_options;
  options.rerun.clear();
  options.no_rerun = std::move(why);
}

void register_sweep(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, entry<open_test_hooks>);
  lua_setfield(L, -2, "cu.test_hooks");
  lua_pop(L, 1);
  new_metatable(L, kResultsType);
  const luaL_Reg methods[] = {{"json", entry<results_json>},
                              {"csv", entry<results_csv>},
                              {"write_json", entry<results_write_json>},
                              {"write_csv", entry<results_write_csv>},
                              {"plot", entry<results_plot>},
                              {nullptr, nullptr}};
  luaL_newlib(L, methods);
  lua_pushcclosure(L, entry<results_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, entry<results_tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, entry<results_len>);
  lua_setfield(L, -2, "__len");
  lua_pop(L, 1);

  const luaL_Reg functions[] = {
      {"sweep", entry<l_sweep>}, {"plot", entry<l_plot>}, {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
}

}  // namespace culua::detail::lua
