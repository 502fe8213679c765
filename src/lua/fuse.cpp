// cu.fuse(fn[, opts]): fn runs as ordinary Lua, its elementwise operations recorded and run as a
// few passes over their elements when it returns (src/fuse, docs/fusion.md).
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/graph.hpp"
#include "core/runtime/runtime.hpp"
#include "fuse/kernel_cache.hpp"
#include "fuse/recorder.hpp"
#include "lua/binding.hpp"
#include "lua/fuse.hpp"

namespace culua::detail::lua {

void push_scratch_option(lua_State* L, int opts, int arg) {
  if (!get_option(L, opts, "scratch")) {
    lua_pushnil(L);
    return;
  }
  if (lua_type(L, -1) != LUA_TTABLE) {
    option_error(arg, "scratch", ErrorKind::Type,
                 fmt::format("a list of arrays expected, got {}", luaL_typename(L, -1)));
  }
  const auto n = static_cast<int>(lua_rawlen(L, -1));
  lua_createtable(L, n, 0);
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, -2, i);
    if (!test_array(L, -1)) {
      option_error(arg, "scratch", ErrorKind::Type,
                   fmt::format("entry {}: array expected, got {}", i, luaL_typename(L, -1)));
    }
    lua_rawseti(L, -2, i);
  }
  lua_remove(L, -2);
}

std::vector<fuse::Span> scratch_spans(lua_State* L, int idx) {
  std::vector<fuse::Span> spans;
  if (lua_type(L, idx) != LUA_TTABLE) return spans;
  const auto n = static_cast<int>(lua_rawlen(L, idx));
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    ArrayBox* box = test_array(L, -1);  // an array: push_scratch_option checked every entry
    lua_pop(L, 1);
    if (!box->array.alive()) {
      box->array.check_alive(fmt::format("scratch array {} of the fused function", i));
    }
    spans.push_back(fuse::span_of(box->array.view()));
  }
  return spans;
}

namespace {

// CULUA_FUSE=0: fused functions run eagerly (each operation launched as it is written).
bool fusion_off() {
  const char* env = std::getenv("CULUA_FUSE");
  return env && std::strcmp(env, "0") == 0;
}

// explain's text, through io.write (as print would: a redirected io.output receives it).
void write_explained(lua_State* L, const std::string& text) {
  if (text.empty()) return;
  lua_getglobal(L, "io");
  if (lua_istable(L, -1)) lua_getfield(L, -1, "write");
  if (lua_isfunction(L, -1)) {
    lua_pushlstring(L, text.data(), text.size());
    call_lua(L, 1, 0);
  } else {
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

// Runs the function at index 1 with the arguments above it, recorded; returns its results (the
// stack holds them). `sources`: the generated kernels of the groups are added to it.
// How a fused function runs (its options).
struct Mode {
  bool explain = false;
  bool generate_single = false;     // groups of one operation as generated kernels too
  std::vector<fuse::Span> scratch;  // cu.fuse's `scratch` arrays
};

int run_recorded(lua_State* L, const Mode& mode, std::vector<std::string>* sources) {
  Runtime& rt = runtime(L);
  const int nargs = lua_gettop(L) - 1;
  int status = LUA_OK;
  std::string explained;
  {
    Context& ctx = context(L);
    if (!ctx.fused_kernels) ctx.fused_kernels = std::make_shared<fuse::KernelCache>();
    fuse::Recorder recorder(rt, mode.explain, ctx.fused_kernels.get(), mode.generate_single);
    recorder.keep_sources(sources);
    recorder.set_scratch(mode.scratch);
    const CollectorPaused paused(L);
    status = lua_pcall(L, nargs, LUA_MULTRET, 0);
    // Also after an error: what fn recorded runs, as it would have without cu.fuse.
    recorder.finish(status == LUA_OK);
    explained = recorder.explained();
  }
  if (mode.explain) write_explained(L, explained);
  if (status != LUA_OK) raise_value(L);
  return lua_gettop(L);
}

// cu.fuse(fn, {replay = true}): a call whose arguments match an earlier call's (the same arrays,
// tables, functions and strings; numbers, booleans and cu.complex values equal, integers and
// floats told apart), on the same stream, launches the graph that call's work was captured into
// instead of running fn again, and returns that call's results. A signature is captured on its
// second call (the first runs as an ordinary fused call: arguments that never repeat pay nothing
// for it). A function whose capture fails (it reads values on the host, waits, ...) runs fused
// for that signature from then on. The graphs keep every array they touch alive.
constexpr size_t kMaxTakes = 8;

struct Take {
  std::shared_ptr<Graph> graph;  // null: seen once, or not replayable (`replayable` false)
  bool replayable = true;
  Stream* stream = nullptr;
  int nargs = 0;
  int nresults = 0;
  int ref = LUA_NOREF;  // registry: {args..., results...}, which also keeps them alive
  uint64_t used = 0;
};

struct ReplayBox {
  std::vector<Take> takes;
  uint64_t clock = 0;
  uint64_t replays = 0;
};

ReplayBox* replay_box(lua_State* L, int idx) {
  return static_cast<ReplayBox*>(lua_touserdata(L, idx));
}

void drop_take(lua_State* L, Take& t) {
  if (t.graph) t.graph->release();
  t.graph.reset();
  luaL_unref(L, LUA_REGISTRYINDEX, t.ref);
  t.ref = LUA_NOREF;
}

int replay_gc(lua_State* L);

// The metatable of the replay state (its __gc), made once per Lua state and kept in the registry
// under this file's key (a light userdata: internal, no name of a culua type).
char replay_metatable_key;
void push_replay_metatable(lua_State* L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &replay_metatable_key) == LUA_TTABLE) return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, entry<replay_gc>);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "cu.fuse replay state");
  lua_setfield(L, -2, "__metatable");  // getmetatable() shows this, not the table
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &replay_metatable_key);
}

int replay_gc(lua_State* L) {
  // Only the replay state itself (debug.getmetatable reaches the function): anything else raises.
  bool ours = lua_type(L, 1) == LUA_TUSERDATA && lua_getmetatable(L, 1);
  if (ours) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &replay_metatable_key);
    ours = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 2);
  }
  if (!ours) type_error(L, 1, "cu.fuse replay state");
  ReplayBox* box = replay_box(L, 1);
  for (Take& t : box->takes) drop_take(L, t);
  box->~ReplayBox();
  return 0;
}

bool is_complex(lua_State* L, int idx) {
  return has_metatable(L, idx, context(L).complex_mt);
}

// Is the argument at `idx` the same, for replay, as the value on top of the stack?
bool same_argument(lua_State* L, int idx) {
  const int t = lua_type(L, idx);
  if (t != lua_type(L, -1)) return false;
  if (t == LUA_TNUMBER) {
    if (lua_isinteger(L, idx) != lua_isinteger(L, -1)) return false;
    if (lua_isinteger(L, idx)) return lua_tointeger(L, idx) == lua_tointeger(L, -1);
    const lua_Number a = lua_tonumber(L, idx), b = lua_tonumber(L, -1);
    return std::memcmp(&a, &b, sizeof a) == 0;  // NaN matches NaN, 0.0 is not -0.0
  }
  if (t == LUA_TUSERDATA && is_complex(L, idx) && is_complex(L, -1)) {
    return std::memcmp(lua_touserdata(L, idx), lua_touserdata(L, -1), 2 * sizeof(double)) == 0;
  }
  return lua_rawequal(L, idx, -1) != 0;
}

// The take whose arguments are the arguments at 2..nargs+1, recorded on `s`, or null.
Take* find_take(lua_State* L, ReplayBox& box, int nargs, const Stream* s) {
  for (Take& t : box.takes) {
    if (t.nargs != nargs || t.stream != s) continue;
    lua_rawgeti(L, LUA_REGISTRYINDEX, t.ref);
    bool same = true;
    for (int i = 1; i <= nargs && same; ++i) {
      lua_rawgeti(L, -1, i);
      same = same_argument(L, i + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (same) return &t;
  }
  return nullptr;
}

// A new take for the arguments at 2..nargs+1 (replacing the least recently used past kMaxTakes).
Take& new_take(lua_State* L, ReplayBox& box, int nargs, Stream* s) {
  Take* slot = nullptr;
  if (box.takes.size() < kMaxTakes) {
    box.takes.emplace_back();
    slot = &box.takes.back();
  } else {
    slot = &box.takes[0];
    for (Take& t : box.takes) {
      if (t.used < slot->used) slot = &t;
    }
    drop_take(L, *slot);
    *slot = Take{};
  }
  lua_createtable(L, nargs, 0);
  for (int i = 1; i <= nargs; ++i) {
    lua_pushvalue(L, i + 1);
    lua_rawseti(L, -2, i);
  }
  slot->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  slot->nargs = nargs;
  slot->stream = s;
  slot->used = ++box.clock;
  return *slot;
}

// Keeps the results (the stack above `base`) in the take's table, after its arguments.
void keep_results(lua_State* L, Take& t, int base) {
  const int n = lua_gettop(L) - base;
  lua_rawgeti(L, LUA_REGISTRYINDEX, t.ref);
  for (int i = 1; i <= n; ++i) {
    lua_pushvalue(L, base + i);
    lua_rawseti(L, -2, t.nargs + i);
  }
  lua_pop(L, 1);
  t.nresults = n;
}

// Pushes the take's results.
int push_results(lua_State* L, const Take& t) {
  check_stack(L, t.nresults + 1, "fused function results");
  lua_rawgeti(L, LUA_REGISTRYINDEX, t.ref);
  const int table = lua_gettop(L);
  for (int i = 1; i <= t.nresults; ++i) lua_rawgeti(L, table, t.nargs + i);
  lua_remove(L, table);
  return t.nresults;
}

// The replaying call: the stack holds fn (1) and its arguments; upvalue 3 is the ReplayBox.
int replaying_call(lua_State* L, const Mode& mode) {
  Runtime& rt = runtime(L);
  ReplayBox& box = *replay_box(L, lua_upvalueindex(3));
  const int nargs = lua_gettop(L) - 1;
  Stream& s = rt.current_stream();
  Take* t = find_take(L, box, nargs, &s);
  if (t && t->graph) {
    t->used = ++box.clock;
    t->graph->launch(s, 1);
    ++box.replays;
    if (mode.explain) {
      write_explained(
          L, fmt::format("replayed the graph of an earlier call with these arguments ({} node{})\n",
                         t->graph->nodes(), t->graph->nodes() == 1 ? "" : "s"));
    }
    lua_settop(L, 0);
    return push_results(L, *t);
  }
  if (!t) {  // first call with these arguments: remember them, run as usual
    new_take(L, box, nargs, &s);
    return run_recorded(L, mode, nullptr);
  }
  if (!t->replayable) {
    t->used = ++box.clock;
    return run_recorded(L, mode, nullptr);
  }
  // Second call: capture fn's fused work on the current stream, launch it, keep it.
  Take& take = *t;
  take.used = ++box.clock;
  const std::string name = "cu.fuse replay of " + defined_at(L, 1);
  std::shared_ptr<Graph> graph;
  Context& ctx = context(L);
  if (!ctx.fused_kernels) ctx.fused_kernels = std::make_shared<fuse::KernelCache>();
  // Any error ends the capture (and drops what it captured): fn, pure, then runs again as an
  // ordinary fused call, which runs what it queues before the error as eager code would and raises
  // it. A function whose capture fails (it reads values on the host, waits, ...) runs fused for
  // these arguments from then on.
  struct Failed {};
  int status = LUA_OK;
  std::string explained;
  try {
    const CollectorPaused paused(L);
    graph = Graph::capture(rt, s, name, defined_at(L, 1), [&] {
      check_stack(L, nargs + 1, "fused function arguments");
      for (int i = 1; i <= nargs + 1; ++i) lua_pushvalue(L, i);
      fuse::Recorder recorder(rt, mode.explain, ctx.fused_kernels.get(), mode.generate_single);
      recorder.set_scratch(mode.scratch);
      status = lua_pcall(L, nargs, LUA_MULTRET, 0);
      if (status != LUA_OK) throw Failed{};
      recorder.finish();
      explained = recorder.explained();
    });
  } catch (const Failed&) {
    graph.reset();
  } catch (const Error&) {
    graph.reset();
  }
  if (!graph) {
    take.replayable = false;
    lua_settop(L, nargs + 1);
    return run_recorded(L, mode, nullptr);
  }
  if (mode.explain) {
    write_explained(L, explained + fmt::format("captured for replay: a graph of {} node{}\n",
                                               graph->nodes(), graph->nodes() == 1 ? "" : "s"));
  }
  graph->launch(s, 1);
  take.graph = std::move(graph);
  keep_results(L, take, nargs + 1);
  return lua_gettop(L) - (nargs + 1);
}

// The function cu.fuse returns: upvalue 1 is fn, upvalue 2 its mode (1: explain, 2:
// generate_single), upvalue 3 the replay state (nil without replay = true), upvalue 4 the scratch
// arrays (nil without).
int fused_call(lua_State* L) {
  check_stack(L, 2, "fused function call");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (fusion_off() || runtime(L).monitor().recorder) {  // nested: the outer call records
    call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  const lua_Integer bits = lua_tointeger(L, lua_upvalueindex(2));
  const Mode mode{(bits & 1) != 0, (bits & 2) != 0, scratch_spans(L, lua_upvalueindex(4))};
  if (!lua_isnil(L, lua_upvalueindex(3)) && !Capture::active()) return replaying_call(L, mode);
  return run_recorded(L, mode, nullptr);
}

// cu.fuse(fn [, {explain=, replay=, generate_single=, scratch=}]) (through the table's __call:
// argument 1 is cu.fuse itself).
int l_fuse(lua_State* L) {
  lua_remove(L, 1);
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  check_options(L, 2, {"explain", "replay", "generate_single", "scratch"});
  runtime(L).backend().warm_compiler();  // its first call may compile, or load from the disk
  const bool explain = opt_boolean(L, 2, "explain", false);
  const bool replay = opt_boolean(L, 2, "replay", false);
  const bool single = opt_boolean(L, 2, "generate_single", false);
  lua_settop(L, 2);
  push_scratch_option(L, 2, 2);
  lua_replace(L, 2);  // 1: fn, 2: the scratch arrays
  lua_pushinteger(L, (explain ? 1 : 0) | (single ? 2 : 0));
  if (replay) {
    new (lua_newuserdatauv(L, sizeof(ReplayBox), 0)) ReplayBox{};
    push_replay_metatable(L);
    lua_setmetatable(L, -2);
  } else {
    lua_pushnil(L);
  }
  lua_rotate(L, 2, -1);  // fn, mode, replay, scratch
  lua_pushcclosure(L, entry<fused_call>, 4);
  return 1;
}

// cu.fuse.reset(f): forgets the calls a replaying fused function recorded (their graphs, and the
// arrays they kept alive); the next calls record afresh. Returns how many it forgot.
int l_reset(lua_State* L) {
  if (lua_tocfunction(L, 1) != entry<fused_call>) {
    type_error(L, 1, "function returned by cu.fuse");
  }
  int n = 0;
  if (lua_getupvalue(L, 1, 3) && lua_type(L, -1) == LUA_TUSERDATA) {
    ReplayBox* box = replay_box(L, -1);
    for (Take& t : box->takes) {
      drop_take(L, t);
      ++n;
    }
    box->takes.clear();
  }
  lua_pushinteger(L, n);
  return 1;
}

// cu.fuse.source(fn, ...): runs fn(...) fused; returns the CUDA sources of its groups of several
// operations (each complete: the prelude and the kernel), as a list.
int l_source(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  if (runtime(L).monitor().recorder) {
    throw PlainError("cu.fuse.source cannot run inside a fused function");
  }
  std::vector<std::string> sources;
  run_recorded(L, Mode{}, &sources);
  lua_settop(L, 0);
  lua_createtable(L, static_cast<int>(sources.size()), 0);
  for (size_t i = 0; i < sources.size(); ++i) {
    lua_pushlstring(L, sources[i].data(), sources[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

}  // namespace

void register_fuse(lua_State* L) {
  lua_createtable(L, 0, 2);  // cu.fuse: callable, with cu.fuse.source and cu.fuse.reset
  lua_pushcfunction(L, entry<l_source>);
  lua_setfield(L, -2, "source");
  lua_pushcfunction(L, entry<l_reset>);
  lua_setfield(L, -2, "reset");
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, entry<l_fuse>);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "fuse");
}

}  // namespace culua::detail::lua
