// Measurement bindings: cu.time, cu.clock and the os.clock tripwire, cu.ledger, cu.strict,
// cu.trace and cu.range.
#include <cstdio>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "lua/binding.hpp"
#include "lua/sandbox.hpp"
#include "measure/trace.hpp"

#if defined(CULUA_HAVE_CUDA)
#include <nvtx3/nvToolsExt.h>
#endif

namespace culua::detail::lua {

namespace {

constexpr char kLedgerType[] = "cu.Ledger";
constexpr uint64_t kDefaultTraceLimit = 1000000;

// "script.lua:12": the innermost Lua frame with a line that is not one of culua's own Lua modules.
std::string script_site(lua_State* L) {
  if (!L) return {};
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    if (std::strncmp(ar.source, "@lua/cu/", 8) == 0) continue;
    return fmt::format("{}:{}", ar.short_src, ar.currentline);
  }
  return {};
}

// The same line, interned in the monitor's site table (the profiler's per-operation record).
uint32_t script_site_id(lua_State* L, SiteTable& sites) {
  if (!L) return 0;
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
    if (std::strncmp(ar.source, "@lua/cu/", 8) == 0) continue;
    return sites.intern(ar.source, ar.source, ar.currentline, ar.short_src);
  }
  return 0;
}

// The host-clock tripwire: a clock read while device work is queued measures the queueing only.
void check_clock(lua_State* L, const char* which) {
  Context& ctx = context(L);
  if (!ctx.rt->monitor().work_pending()) return;
  const std::string found = script_site(L);
  const char* site = found.empty() ? "?" : found.c_str();
  if (!ctx.warned_sites.insert(fmt::format("{}@{}", which, site)).second) return;
  std::fprintf(stderr,
               "culua: warning: %s at %s read while device work is still queued: the time does not "
               "include that work, which only finishes later (launches return before the device "
               "runs them). Time device work with cu.time(fn) or cu.bench(fn), or call cu.sync() "
               "before reading the clock.\n",
               which, site);
  std::fflush(stderr);
}

int l_clock(lua_State* L) {
  Capture::forbid("cu.clock()");
  check_options(L, 1, {"warn"});
  if (opt_boolean(L, 1, "warn", true)) check_clock(L, "cu.clock()");
  lua_pushnumber(L, steady_seconds());
  return 1;
}

// os.clock with the tripwire; upvalue 1 is the original.
int l_os_clock(lua_State* L) {
  if (!Capture::active()) check_clock(L, "os.clock()");
  lua_pushvalue(L, lua_upvalueindex(1));
  call_lua(L, 0, 1);
  return 1;
}

// cu.time(fn [, {stream=}]): events around fn on the stream, synchronized; milliseconds.
int l_time(lua_State* L) {
  if (!lua_isfunction(L, 1)) type_error(L, 1, "function");
  check_options(L, 2, {"stream"});
  Runtime& rt = runtime(L);
  Stream* given = opt_stream(L, 2);
  Stream& s = given ? *given : rt.current_stream();
  Backend& b = rt.backend();
  auto start = b.create_event(s.device(), true);
  auto stop = b.create_event(s.device(), true);
  start->record(s);
  lua_pushvalue(L, 1);
  call_lua(L, 0, 0);
  stop->record(s);
  {
    Monitor::Wait wait(rt.monitor(), "cu.time", false);
    stop->synchronize();
  }
  rt.monitor().idle(s);  // the stop event was the last work queued on s
  lua_pushnumber(L, start->elapsed_ms(*stop));
  return 1;
}

// --- cu.ledger -----------------------------------------------------------------------------------

struct LedgerField {
  const char* name;
  uint64_t Ledger::*member;
};
constexpr LedgerField kLedgerFields[] = {
    {"h2d_bytes", &Ledger::h2d_bytes},
    {"d2h_bytes", &Ledger::d2h_bytes},
    {"d2d_bytes", &Ledger::d2d_bytes},
    {"h2d_calls", &Ledger::h2d_calls},
    {"d2h_calls", &Ledger::d2h_calls},
    {"d2d_calls", &Ledger::d2d_calls},
    {"pageable_bytes", &Ledger::pageable_bytes},
    {"pageable_calls", &Ledger::pageable_calls},
    {"pinned_bytes", &Ledger::pinned_bytes},
    {"pinned_calls", &Ledger::pinned_calls},
    {"p2p_bytes", &Ledger::p2p_bytes},
    {"p2p_calls", &Ledger::p2p_calls},
    {"syncs", &Ledger::syncs},
    {"implicit_syncs", &Ledger::implicit_syncs},
    {"allocs", &Ledger::allocs},
    {"alloc_bytes", &Ledger::alloc_bytes},
    {"launches", &Ledger::launches},
    {"graph_launches", &Ledger::graph_launches},
    {"nccl_calls", &Ledger::nccl_calls},
    {"nccl_bytes", &Ledger::nccl_bytes},
    {"fused_ops", &Ledger::fused_ops},
    {"fused_groups", &Ledger::fused_groups},
    {"fused_kernels", &Ledger::fused_kernels},
    {"fused_compiles", &Ledger::fused_compiles},
    {"fused_compile_us", &Ledger::fused_compile_us},
    {"fused_disk_hits", &Ledger::fused_disk_hits},
    {"fused_memory_hits", &Ledger::fused_memory_hits},
    {"fused_early_flushes", &Ledger::fused_early_flushes},
};

}  // namespace

void push_ledger(lua_State* L, const Ledger& l) {
  lua_createtable(L, 0, static_cast<int>(std::size(kLedgerFields)));
  for (const LedgerField& f : kLedgerFields) {
    lua_pushinteger(L, static_cast<lua_Integer>(l.*f.member));
    lua_setfield(L, -2, f.name);
  }
  set_metatable(L, kLedgerType);
}

namespace {

Ledger check_ledger(lua_State* L, int idx) {
  check_type(L, idx, kLedgerType);
  Ledger l;
  for (const LedgerField& f : kLedgerFields) {
    lua_getfield(L, idx, f.name);
    l.*f.member = static_cast<uint64_t>(lua_tointeger(L, -1));
    lua_pop(L, 1);
  }
  return l;
}

int ledger_sub(lua_State* L) {
  const Ledger a = check_ledger(L, 1), b = check_ledger(L, 2);
  Ledger d;
  for (const LedgerField& f : kLedgerFields) d.*f.member = a.*f.member - b.*f.member;
  push_ledger(L, d);
  return 1;
}

int ledger_tostring(lua_State* L) {
  const Ledger l = check_ledger(L, 1);
  auto bytes = [](uint64_t b) { return format_bytes(static_cast<double>(b)); };
  std::string s = fmt::format(
      "host->device {} in {} call{} | device->host {} in {} call{} | device->device {} in {} "
      "call{} | pageable {} ({} call{}), pinned {} ({} call{}) | {} sync{} ({} implicit) | {} "
      "allocation{} ({}) | {} operation{} queued | {} graph launch{}",
      bytes(l.h2d_bytes), l.h2d_calls, l.h2d_calls == 1 ? "" : "s", bytes(l.d2h_bytes), l.d2h_calls,
      l.d2h_calls == 1 ? "" : "s", bytes(l.d2d_bytes), l.d2d_calls, l.d2d_calls == 1 ? "" : "s",
      bytes(l.pageable_bytes), l.pageable_calls, l.pageable_calls == 1 ? "" : "s",
      bytes(l.pinned_bytes), l.pinned_calls, l.pinned_calls == 1 ? "" : "s", l.syncs,
      l.syncs == 1 ? "" : "s", l.implicit_syncs, l.allocs, l.allocs == 1 ? "" : "s",
      bytes(l.alloc_bytes), l.launches, l.launches == 1 ? "" : "s", l.graph_launches,
      l.graph_launches == 1 ? "" : "es");
  if (l.fused_ops) {
    s += fmt::format(" | fused {} operation{} into {} group{}", l.fused_ops,
                     l.fused_ops == 1 ? "" : "s", l.fused_groups, l.fused_groups == 1 ? "" : "s");
    if (l.fused_kernels) {
      s += fmt::format(" ({} generated kernel launch{}; {} compile{} in {:.1f} ms, {} from disk)",
                       l.fused_kernels, l.fused_kernels == 1 ? "" : "es", l.fused_compiles,
                       l.fused_compiles == 1 ? "" : "s",
                       static_cast<double>(l.fused_compile_us) / 1000.0, l.fused_disk_hits);
    }
    if (l.fused_early_flushes) {
      s += fmt::format(", {} early flush{}", l.fused_early_flushes,
                       l.fused_early_flushes == 1 ? "" : "es");
    }
  }
  if (l.p2p_calls) {
    s += fmt::format(" | between devices {} in {} call{}", bytes(l.p2p_bytes), l.p2p_calls,
                     l.p2p_calls == 1 ? "" : "s");
  }
  const std::string nccl = l.nccl_calls == 0
                               ? std::string()
                               : fmt::format(" | NCCL {} in {} call{}", bytes(l.nccl_bytes),
                                             l.nccl_calls, l.nccl_calls == 1 ? "" : "s");
  s += nccl;
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

// The counts are the table's own fields; __index runs only for a name that is none of them.
int ledger_index(lua_State* L) {
  check_type(L, 1, kLedgerType);
  std::string names;
  for (const LedgerField& f : kLedgerFields)
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  fail(ErrorKind::Index, "{} has no field '{}' (it has {})", kLedgerType,
       luaL_tolstring(L, 2, nullptr), names);
}

// cu.ledger(): the counts since start. cu.ledger(fn): the counts of fn's run.
int l_ledger(lua_State* L) {
  Monitor& m = runtime(L).monitor();
  if (lua_isnoneornil(L, 1)) {
    push_ledger(L, m.ledger);
    return 1;
  }
  if (!lua_isfunction(L, 1)) type_error(L, 1, "function or no value");
  const Ledger before = m.ledger;
  lua_pushvalue(L, 1);
  call_lua(L, 0, 0);
  Ledger d;
  for (const LedgerField& f : kLedgerFields) d.*f.member = m.ledger.*f.member - before.*f.member;
  push_ledger(L, d);
  return 1;
}

// --- cu.strict -----------------------------------------------------------------------------------

struct StrictScope {
  explicit StrictScope(Monitor& m) : m_(m) { ++m_.strict; }
  ~StrictScope() { --m_.strict; }
  StrictScope(const StrictScope&) = delete;
  StrictScope& operator=(const StrictScope&) = delete;
  Monitor& m_;
};

// cu.strict(fn, ...): calls fn(...) with implicit synchronizations raising; returns its results.
// An error of fn ends the scope too (call_lua: unwound in culua's build of Lua, caught and raised
// again after the scope in stock Lua).
int l_strict(lua_State* L) {
  if (!lua_isfunction(L, 1)) type_error(L, 1, "function");
  StrictScope scope(runtime(L).monitor());
  call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// --- cu.trace ------------------------------------------------------------------------------------

void push_summary(lua_State* L, const measure::TraceSummary& s) {
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, s.span_ms);
  lua_setfield(L, -2, "span_ms");
  lua_pushnumber(L, s.busy_ms);
  lua_setfield(L, -2, "busy_ms");
  lua_pushnumber(L, s.overlap_ms);
  lua_setfield(L, -2, "overlap_ms");
  lua_pushnumber(L, s.overlap);
  lua_setfield(L, -2, "overlap");
  lua_pushinteger(L, static_cast<lua_Integer>(s.ops));
  lua_setfield(L, -2, "ops");
  lua_pushinteger(L, static_cast<lua_Integer>(s.dropped));
  lua_setfield(L, -2, "dropped");
  lua_createtable(L, static_cast<int>(s.streams.size()), 0);
  for (size_t i = 0; i < s.streams.size(); ++i) {
    const measure::StreamSummary& st = s.streams[i];
    lua_createtable(L, 0, 6);
    lua_pushstring(L, st.name.c_str());
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, st.device);
    lua_setfield(L, -2, "device");
    lua_pushinteger(L, static_cast<lua_Integer>(st.stream));
    lua_setfield(L, -2, "id");
    lua_pushnumber(L, st.busy_ms);
    lua_setfield(L, -2, "busy_ms");
    lua_pushinteger(L, static_cast<lua_Integer>(st.ops));
    lua_setfield(L, -2, "ops");
    lua_pushinteger(L, static_cast<lua_Integer>(st.bytes));
    lua_setfield(L, -2, "bytes");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "streams");
  const std::string text = s.text();
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "text");
}

// In a sandbox a trace's records count against the Lua heap limit (a running trace grew hundreds
// of MB under a 32 MiB cap); past it, they are dropped as past the trace's limit.
void account_in_sandbox(lua_State* L, measure::TraceRecorder& t) {
  if (Sandbox* box = Sandbox::of(L)) {
    t.set_memory_account([box](int64_t bytes) { return box->charge_heap(bytes); });
  }
}

measure::TraceRecorder& last_trace(lua_State* L) {
  Context& ctx = context(L);
  if (!ctx.trace) fail(ErrorKind::Value, "no trace was started (call cu.trace.start() first)");
  return *ctx.trace;
}

int l_trace_start(lua_State* L) {
  check_options(L, 1, {"limit"});
  Context& ctx = context(L);
  if (ctx.trace && ctx.trace->recording()) {
    fail(ErrorKind::Value, "a trace is already recording (cu.trace.stop() first)");
  }
  uint64_t limit = kDefaultTraceLimit;
  if (get_option(L, 1, "limit")) {
    const int64_t n = as_option(1, "limit", [&] { return check_integer(L, -1, "limit"); });
    if (n <= 0)
      option_error(1, "limit", ErrorKind::Value, fmt::format("must be positive, got {}", n));
    limit = static_cast<uint64_t>(n);
    lua_pop(L, 1);
  }
  ctx.trace.reset();
  ctx.trace = std::make_shared<measure::TraceRecorder>(*ctx.rt, limit);
  account_in_sandbox(L, *ctx.trace);
  return 0;
}

// cu.trace.stop([file]): stops, writes the Chrome trace when a file is given, returns the summary.
int l_trace_stop(lua_State* L) {
  const char* file = opt_arg_string(L, 1, nullptr);
  measure::TraceRecorder& t = last_trace(L);
  t.stop();
  const measure::TraceSummary s = t.summary();
  if (file) t.write_chrome_json(file);
  push_summary(L, s);
  return 1;
}

// cu.trace.summary([{quiet=true}]): prints and returns the summary of the last (or running) trace.
int l_trace_summary(lua_State* L) {
  check_options(L, 1, {"quiet"});
  const bool quiet = opt_boolean(L, 1, "quiet", false);
  const measure::TraceSummary s = last_trace(L).summary();
  if (!quiet) {
    const std::string text = s.text();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  push_summary(L, s);
  return 1;
}

int l_trace_recording(lua_State* L) {
  Context& ctx = context(L);
  lua_pushboolean(L, ctx.trace && ctx.trace->recording());
  return 1;
}

// --- cu.range ------------------------------------------------------------------------------------

struct RangeScope {
  RangeScope(Context& ctx, std::string name, std::string site)
      : ctx_(ctx), name_(std::move(name)), site_(std::move(site)), t0_(steady_seconds()) {
#if defined(CULUA_HAVE_CUDA)
    nvtxRangePushA(name_.c_str());
#endif
  }
  ~RangeScope() {
#if defined(CULUA_HAVE_CUDA)
    nvtxRangePop();
#endif
    if (ctx_.trace && ctx_.trace->recording())
      ctx_.trace->host_range(name_, t0_, steady_seconds(), site_);
  }
  RangeScope(const RangeScope&) = delete;
  RangeScope& operator=(const RangeScope&) = delete;
  Context& ctx_;
  std::string name_, site_;
  double t0_;
};

// cu.range(name, fn, ...): fn(...) inside an NVTX range (Nsight Systems) and a trace range.
int l_range(lua_State* L) {
  const char* name = arg_string(L, 1);
  if (!lua_isfunction(L, 2)) type_error(L, 2, "function");
  RangeScope scope(context(L), name, script_site(L));
  lua_remove(L, 1);
  call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

}  // namespace

void register_measure(lua_State* L) {
  const luaL_Reg functions[] = {{"clock", entry<l_clock>},   {"time", entry<l_time>},
                                {"ledger", entry<l_ledger>}, {"strict", entry<l_strict>},
                                {"range", entry<l_range>},   {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);

  const luaL_Reg trace[] = {{"start", entry<l_trace_start>},
                            {"stop", entry<l_trace_stop>},
                            {"summary", entry<l_trace_summary>},
                            {"recording", entry<l_trace_recording>},
                            {nullptr, nullptr}};
  luaL_newlib(L, trace);
  lua_setfield(L, -2, "trace");

  new_metatable(L, kLedgerType);
  lua_pushcfunction(L, entry<ledger_sub>);
  lua_setfield(L, -2, "__sub");
  lua_pushcfunction(L, entry<ledger_index>);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, entry<ledger_tostring>);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);

  // os.clock gets the tripwire too.
  lua_getglobal(L, "os");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "clock");
    if (lua_iscfunction(L, -1)) {
      lua_pushcclosure(L, entry<l_os_clock>, 1);
      lua_setfield(L, -2, "clock");
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);

  Context* ctx = &context(L);
  ctx->rt->monitor().site = [ctx] { return script_site(ctx->active); };
  ctx->rt->monitor().site_id = [ctx] {
    return script_site_id(ctx->active, ctx->rt->monitor().sites);
  };
}

bool begin_run(lua_State* L) {
  Context& ctx = context(L);
  if (ctx.run_options.strict) ++ctx.rt->monitor().strict;
  if (!ctx.run_options.trace.empty()) {
    ctx.trace = std::make_shared<measure::TraceRecorder>(*ctx.rt, kDefaultTraceLimit);
    account_in_sandbox(L, *ctx.trace);
  }
  return begin_profile_run(L);
}

bool end_run(lua_State* L) {
  Context& ctx = context(L);
  const bool profiled = end_profile_run(L);  // first: its device rows go into the trace
  if (ctx.run_options.trace.empty() || !ctx.trace) return profiled;
  bool written = profiled;
  try {
    ctx.trace->stop();
    const std::string text = ctx.trace->summary().text();
    ctx.trace->write_chrome_json(ctx.run_options.trace);
    std::fprintf(stderr, "%swrote the trace to %s (open it in https://ui.perfetto.dev)\n",
                 text.c_str(), ctx.run_options.trace.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "culua: --trace: %s\n", e.what());
    written = false;
  }
  std::fflush(stderr);
  return written;
}

}  // namespace culua::detail::lua
