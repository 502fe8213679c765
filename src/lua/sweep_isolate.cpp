// cu.sweep's isolated points (docs/sweep.md#isolated-points, measure/isolate.hpp): the parent
// runs each point in a child process that runs the script again; a child replays the sweeps its
// parent journaled, runs its one point and writes the result. Also the MPI share of a distributed
// sweep (distribute = true) and the test hook that crashes a child (cu.test_hooks).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lua/cu_module.hpp"
#include "lua/json_value.hpp"
#include "lua/mpi_values.hpp"
#include "lua/sandbox.hpp"
#include "lua/sweep_internal.hpp"
#include "measure/isolate.hpp"
#include "measure/sweep.hpp"

#if defined(CULUA_HAVE_MPI)
#include "dist/mpi.hpp"
#endif

namespace culua::detail::lua::sweeps {

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

namespace {

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

}  // namespace

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

RankDevice::RankDevice(Runtime& rt, bool on) : rt_(rt) {
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

RankDevice::~RankDevice() {
  if (previous_ < 0 || rt_.device() == previous_) return;
  try {
    rt_.set_device(previous_);
  } catch (const std::exception&) {
    // A device error while the sweep ran: the sweep's own error says it.
  }
}

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

namespace {

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

}  // namespace

void preload_test_hooks(lua_State* L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, entry<open_test_hooks>);
  lua_setfield(L, -2, "cu.test_hooks");
  lua_pop(L, 1);
}

}  // namespace culua::detail::lua::sweeps
