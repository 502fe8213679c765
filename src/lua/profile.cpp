// cu.profile(fn [, opts]) and culua --profile: the device time of every kernel, copy and fill,
// by kernel and by the script line that queued it (measure/profile.hpp).
#include <cstdio>
#include <fstream>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/sandbox.hpp"
#include "lua/binding.hpp"
#include "lua/sandbox.hpp"
#include "measure/profile.hpp"
#include "measure/trace.hpp"

namespace culua::detail::lua {

namespace {

constexpr char kProfileType[] = "cu.Profile";
constexpr uint64_t kDefaultLimit = 1000000;

struct ProfileBox {
  std::shared_ptr<measure::ProfileReport> report;
};

measure::ProfileReport& check_profile(lua_State* L, int idx) {
  ProfileBox* box = check_box<ProfileBox>(L, idx, kProfileType);
  check_alive(box->report, "profile");
  return *box->report;
}

void push_rows(lua_State* L, const std::vector<measure::ProfileRow>& rows, const char* key_name,
               const char* detail_name) {
  lua_createtable(L, static_cast<int>(rows.size()), 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const measure::ProfileRow& r = rows[i];
    lua_createtable(L, 0, 9);
    set_string(L, key_name, r.key);
    set_string(L, detail_name, r.detail);
    set_integer(L, "calls", r.calls);
    set_number(L, "total_ms", r.total_ms);
    set_number(L, "mean_us", r.mean_us);
    set_number(L, "min_us", r.min_us);
    set_number(L, "max_us", r.max_us);
    set_number(L, "share", r.share);
    set_number(L, "idle_before_ms", r.idle_before_ms);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// p.rows: every record, made on first use (a long run has many).
void push_records(lua_State* L, const measure::ProfileReport& rep) {
  lua_createtable(L, static_cast<int>(rep.rows.size()), 0);
  const double origin = rep.rows.empty() ? 0 : rep.rows.front().t0;
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    const measure::ActivityRecord& r = rep.rows[i];
    lua_createtable(L, 0, 14);
    set_string(L, "name", r.name);
    set_string(L, "kind", measure::activity_kind_name(r.kind));
    set_integer(L, "device", r.device);
    set_integer(L, "stream", r.stream);
    set_number(L, "start_us", (r.t0 - origin) * 1e6);
    set_number(L, "end_us", (r.t1 - origin) * 1e6);
    set_number(L, "duration_us", (r.t1 - r.t0) * 1e6);
    set_string(L, "line", rep.line_of(r));
    if (r.op > 0 && r.op <= rep.op_list.size())
      set_string(L, "operation", rep.op_list[r.op - 1].name);
    if (r.kind == measure::ActivityKind::Kernel && r.registers >= 0) {
      for (auto [key, v] : {std::pair{"grid", r.grid}, std::pair{"block", r.block}}) {
        lua_createtable(L, 3, 0);
        for (int j = 0; j < 3; ++j) {
          lua_pushinteger(L, v[j]);
          lua_rawseti(L, -2, j + 1);
        }
        lua_setfield(L, -2, key);
      }
      set_integer(L, "registers", r.registers);
      set_integer(L, "static_shared", r.static_shared);
      set_integer(L, "dynamic_shared", r.dynamic_shared);
    }
    if (r.bytes > 0) set_integer(L, "bytes", r.bytes);
    if (r.graph > 0) set_integer(L, "graph", r.graph);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

// The profile object: a userdata whose uservalue holds its fields (a plain table).
void push_profile(lua_State* L, std::shared_ptr<measure::ProfileReport> rep) {
  auto* box = static_cast<ProfileBox*>(lua_newuserdatauv(L, sizeof(ProfileBox), 1));
  new (box) ProfileBox{};
  box->report = rep;
  set_metatable(L, kProfileType);
  lua_createtable(L, 0, 16);
  set_string(L, "backend", rep->backend);
  set_string(L, "source", rep->source);
  set_number(L, "span_ms", rep->span_ms);
  set_number(L, "busy_ms", rep->busy_ms);
  set_number(L, "idle_ms", rep->idle_ms);
  set_number(L, "device_ms", rep->device_ms);
  set_integer(L, "gaps", rep->gaps);
  set_integer(L, "records", rep->records);
  set_integer(L, "operations", rep->ops);
  set_integer(L, "dropped", rep->dropped);
  push_rows(L, rep->by_kernel, "name", "kind");
  lua_setfield(L, -2, "kernels");
  push_rows(L, rep->by_line, "line", "operations");
  lua_setfield(L, -2, "lines");
  lua_createtable(L, static_cast<int>(rep->largest_gaps.size()), 0);
  for (size_t i = 0; i < rep->largest_gaps.size(); ++i) {
    const measure::ProfileGap& g = rep->largest_gaps[i];
    lua_createtable(L, 0, 5);
    set_integer(L, "device", g.device);
    set_number(L, "at_ms", g.t0);
    set_number(L, "ms", g.ms);
    set_string(L, "after", g.before);
    set_string(L, "before", g.after);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "largest_gaps");
  lua_setiuservalue(L, -2, 1);
}

int profile_index(lua_State* L) {
  check_profile(L, 1);
  lua_getiuservalue(L, 1, 1);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  if (lua_type(L, 2) == LUA_TSTRING && std::strcmp(lua_tostring(L, 2), "rows") == 0) {
    push_records(L, check_profile(L, 1));
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "rows");
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));  // the methods
  return 1;
}

int profile_tostring(lua_State* L) {
  const std::string s = check_profile(L, 1).text();
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

// p:print([top]): the tables on stdout (top rows of each, default 15; 0: all).
int profile_print(lua_State* L) {
  const measure::ProfileReport& rep = check_profile(L, 1);
  int64_t top = 15;
  if (!lua_isnoneornil(L, 2)) {
    top = as_argument(2, [&] { return check_integer(L, 2, "the number of rows"); });
    if (top < 0) arg_error(2, fmt::format("the number of rows must be >= 0, got {}", top));
  }
  const std::string s = rep.text(static_cast<size_t>(top));
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
  lua_settop(L, 1);
  return 1;
}

void write_text(const std::string& path, const std::string& text, const char* what) {
  check_file_write(path);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    fail(ErrorKind::Value, "cannot write the profile's {} to '{}': cannot open the file", what,
         path);
  f << text;
  f.close();
  if (!f) fail(ErrorKind::Value, "cannot write the profile's {} to '{}': write failed", what, path);
}

// p:json([file]) / p:csv([file]): the text, or written to file (returns the profile then).
template <bool Json>
int profile_text(lua_State* L) {
  const measure::ProfileReport& rep = check_profile(L, 1);
  const char* file = opt_arg_string(L, 2, nullptr);
  const std::string text = Json ? rep.json() : rep.csv();
  if (!file) {
    lua_pushlstring(L, text.data(), text.size());
    return 1;
  }
  write_text(file, text, Json ? "JSON" : "CSV");
  lua_settop(L, 1);
  return 1;
}

int profile_gc(lua_State* L) {
  ProfileBox* box = check_box<ProfileBox>(L, 1, kProfileType);
  box->report.reset();  // a second call, or a use after, finds no report
  return 0;
}

// Charges a sandbox's heap for what the recording holds (dropped past it, as the trace does).
std::shared_ptr<measure::Profiler> start_profiler(lua_State* L, uint64_t limit) {
  Runtime& rt = runtime(L);
  auto p = std::make_shared<measure::Profiler>(rt, rt.kind() == BackendKind::Cuda, limit);
  if (Sandbox* box = Sandbox::of(L)) {
    p->set_memory_account([box](int64_t bytes) { return box->charge_heap(bytes); });
  }
  return p;
}

// Restores the context's profiler when cu.profile's function returns or raises.
struct ProfilerScope {
  ProfilerScope(Context& c, std::shared_ptr<measure::Profiler> p)
      : ctx(c), previous(std::move(ctx.profiler)) {
    ctx.profiler = std::move(p);
  }
  ~ProfilerScope() { ctx.profiler = std::move(previous); }
  Context& ctx;
  std::shared_ptr<measure::Profiler> previous;
  ProfilerScope(const ProfilerScope&) = delete;
  ProfilerScope& operator=(const ProfilerScope&) = delete;
};

// cu.profile(fn [, opts]): runs fn, returns the profile of what it queued (waiting for the device
// first). Inside another profile (or --profile) it reports its own part of that recording.
int l_profile(lua_State* L) {
  if (!lua_isfunction(L, 1)) type_error(L, 1, "function");
  check_options(L, 2, {"limit", "print"});
  Capture::forbid("cu.profile");
  uint64_t limit = kDefaultLimit;
  if (get_option(L, 2, "limit")) {
    const int64_t n = as_option(2, "limit", [&] { return check_integer(L, -1, "limit"); });
    if (n <= 0)
      option_error(2, "limit", ErrorKind::Value, fmt::format("must be positive, got {}", n));
    limit = static_cast<uint64_t>(n);
    lua_pop(L, 1);
  }
  const bool print = opt_boolean(L, 2, "print", false);
  Context& ctx = context(L);
  std::shared_ptr<measure::Profiler> p;
  measure::ProfileMark from;
  const bool nested = ctx.profiler && ctx.profiler->recording();
  if (nested) {
    p = ctx.profiler;
    from = p->mark();
  } else {
    p = start_profiler(L, limit);
  }
  {
    ProfilerScope scope(ctx, p);
    lua_pushvalue(L, 1);
    call_lua(L, 0, 0);
  }
  if (!nested) p->stop();
  auto rep = std::make_shared<measure::ProfileReport>(p->report(from));
  if (print) {
    const std::string s = rep->text();
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  }
  push_profile(L, std::move(rep));
  return 1;
}

}  // namespace

void register_profile(lua_State* L) {
  new_metatable(L, kProfileType);
  const luaL_Reg meta[] = {
      {"__gc", entry<profile_gc>}, {"__tostring", entry<profile_tostring>}, {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  const luaL_Reg methods[] = {{"print", entry<profile_print>},
                              {"json", entry<profile_text<true>>},
                              {"csv", entry<profile_text<false>>},
                              {nullptr, nullptr}};
  luaL_newlib(L, methods);
  lua_pushcclosure(L, entry<profile_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_profile>);
  lua_setfield(L, -2, "profile");
}

// --profile: the whole run (after the trace, so that the trace's slices enclose the profiler's).
bool begin_profile_run(lua_State* L) {
  Context& ctx = context(L);
  if (!ctx.run_options.profile) return true;
  try {
    ctx.profiler = start_profiler(L, kDefaultLimit);
  } catch (const Error& e) {
    std::fprintf(stderr, "culua: --profile: %s\n", e.what());
    std::fflush(stderr);
    return false;
  }
  return true;
}

bool end_profile_run(lua_State* L) {
  Context& ctx = context(L);
  if (!ctx.run_options.profile || !ctx.profiler) return true;
  bool ok = true;
  try {
    ctx.profiler->stop();
    const measure::ProfileReport rep = ctx.profiler->report();
    const std::string& file = ctx.run_options.profile_file;
    if (ctx.trace && !ctx.run_options.trace.empty()) ctx.trace->add_device_rows(rep);
    std::string text = rep.text();
    std::fwrite(text.data(), 1, text.size(), stderr);
    if (!file.empty()) {
      const bool csv = file.size() >= 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
      const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
      write_text(file,
                 json  ? rep.json()
                 : csv ? rep.csv()
                       : text,
                 json  ? "JSON"
                 : csv ? "CSV"
                       : "tables");
      std::fprintf(stderr, "wrote the profile to %s\n", file.c_str());
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "culua: --profile: %s\n", e.what());
    ok = false;
  }
  std::fflush(stderr);
  ctx.profiler.reset();
  return ok;
}

}  // namespace culua::detail::lua
