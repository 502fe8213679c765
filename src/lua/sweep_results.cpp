// The results of cu.sweep (cu.SweepResults: a table of name, axes, rows, ... with methods) and
// plots: results:plot and cu.plot, through gnuplot. The rows (Lua tables) are the results' source
// of truth: tostring, :json(), :csv() and :plot() read them back, with whatever the script changed.
#include <algorithm>
#include <string>
#include <vector>

#include "lua/sweep_internal.hpp"
#include "measure/counters.hpp"
#include "measure/plot.hpp"
#include "measure/results.hpp"
#include "measure/sweep.hpp"

namespace culua::detail::lua::sweeps {

namespace {

constexpr char kResultsType[] = "cu.SweepResults";

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

}  // namespace

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

namespace {

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

// results:plot{file=, x=, y=, series=, ...} (or results:plot("file.png")): the sweep's default
// plot with what the options change.
int results_plot(lua_State* L) {
  check_results(L, 1);
  const measure::Sweep s = sweep_from_results(L, 1);
  measure::PlotSpec spec = measure::default_plot(s);
  as_argument(2, [&] { read_plot_options(L, 2, spec, "options"); });
  return draw_plot(L, spec, rows_as_values(L, 1), &s, s.axes, "results:plot");
}

}  // namespace

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

void register_results(lua_State* L) {
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
}

}  // namespace culua::detail::lua::sweeps
