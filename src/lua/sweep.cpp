// cu.sweep: the Lua front end of the sweep engine (src/measure/sweep.hpp). Reads the options (the
// axes, the outputs), then converts its table into a measure::SweepSpec whose run function calls
// the script's `run` and builds each Lua row beside the engine's record of the point; the engine
// writes the outputs. The results object and plots: sweep_results.cpp; isolated points and the
// MPI share: sweep_isolate.cpp; the session: sweep_session.cpp; what they share:
// sweep_internal.hpp.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/sandbox.hpp"
#include "lua/sweep_internal.hpp"
#include "measure/isolate.hpp"
#include "measure/sweep.hpp"

namespace culua::detail::lua {

namespace sweeps {

namespace {

// tostring(v) for error_text, run protected: a __tostring may raise.
int tostring_value(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

}  // namespace

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

// ---- rows ----

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

std::string bad_result(lua_State* L, int idx) {
  const int t = lua_type(L, idx);
  if (t == LUA_TNUMBER || t == LUA_TTABLE || t == LUA_TNIL) return {};
  return fmt::format(
      "run returned a {}: return a cu.bench result, a number (milliseconds) or a table of fields",
      luaL_typename(L, idx));
}

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

namespace {

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

}  // namespace

}  // namespace sweeps

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
  sweeps::preload_test_hooks(L);
  sweeps::register_results(L);

  const luaL_Reg functions[] = {
      {"sweep", entry<sweeps::l_sweep>}, {"plot", entry<sweeps::l_plot>}, {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
}

}  // namespace culua::detail::lua
