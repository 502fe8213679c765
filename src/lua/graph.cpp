// cu.graph and cu.Graph: the work a Lua function queues, captured once and launched many times
// (core/runtime/graph.hpp).
#include <cstring>
#include <new>

#include "core/base/error.hpp"
#include "core/runtime/graph.hpp"
#include "fuse/kernel_cache.hpp"
#include "fuse/recorder.hpp"
#include "lua/binding.hpp"
#include "lua/fuse.hpp"

namespace culua::detail::lua {

namespace {

struct GraphBox {
  std::shared_ptr<Graph> graph;
  bool fuse = false;  // cu.graph(fn, {fuse = true}): captures (and updates) run fn fused
};

GraphBox* test_box(lua_State* L, int idx) {
  void* p = lua_touserdata(L, idx);
  if (!p || !has_metatable(L, idx, context(L).graph_mt)) return nullptr;
  return static_cast<GraphBox*>(p);
}

Graph& check_graph(lua_State* L, int idx) {
  GraphBox* box = test_box(L, idx);
  if (!box) type_error(L, idx, kGraphType);
  check_alive(box->graph, "graph");
  box->graph->check_alive();
  return *box->graph;
}

// "file.lua:12": where the caller is.
std::string caller_site(lua_State* L) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) return {};
  return std::string(ar.short_src) + ":" + std::to_string(ar.currentline);
}

// The options of cu.graph / g:update: string keys from `allowed`, and the positional arguments of
// the function (opts[1], opts[2], ...). Returns how many positional arguments there are.
int check_graph_options(lua_State* L, int idx, std::initializer_list<const char*> allowed) {
  check_options(L, idx, allowed, true);
  if (lua_isnoneornil(L, idx)) return 0;
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  if (n > 200) fail(ErrorKind::Value, "too many arguments for the graph's function ({})", n);
  return static_cast<int>(n);
}

// Calls the function at `fn` with the `nargs` positional entries of the table at `opts`; with
// `fuse`, its elementwise operations are recorded and flushed as groups into the capture (on CUDA
// one generated kernel node per group: docs/fusion.md).
// `box`: the graph's userdata, whose user value holds the `scratch` arrays of a fused capture.
std::function<void()> graph_function(lua_State* L, int fn, int opts, int nargs, bool fuse,
                                     int box) {
  return [L, fn, opts, nargs, fuse, box] {
    check_stack(L, nargs + 1, "graph function arguments");
    lua_pushvalue(L, fn);
    for (int i = 1; i <= nargs; ++i) lua_rawgeti(L, opts, i);
    if (!fuse || runtime(L).monitor().recorder) {
      call_lua(L, nargs, 0);
      return;
    }
    Context& ctx = context(L);
    if (!ctx.fused_kernels) ctx.fused_kernels = std::make_shared<fuse::KernelCache>();
    lua_getiuservalue(L, box, 1);
    std::vector<fuse::Span> scratch = scratch_spans(L, -1);
    lua_pop(L, 1);
    fuse::Recorder recorder(runtime(L), false, ctx.fused_kernels.get());
    recorder.set_scratch(std::move(scratch));
    call_lua(L, nargs, 0);
    recorder.finish();
  };
}

// cu.graph(fn [, {stream=, name=, fuse=, scratch=, args...}]).
int l_graph(lua_State* L) {
  if (lua_type(L, 1) != LUA_TFUNCTION) type_error(L, 1, "function");
  const int nargs = check_graph_options(L, 2, {"stream", "name", "fuse", "scratch"});
  const bool fuse = opt_boolean(L, 2, "fuse", false);
  Runtime& rt = runtime(L);
  if (fuse) rt.backend().warm_compiler();
  Stream* given = opt_stream(L, 2);
  std::string name;
  if (get_option(L, 2, "name")) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      option_error(2, "name", ErrorKind::Type,
                   fmt::format("string expected, got {}", luaL_typename(L, -1)));
    }
    name = lua_tostring(L, -1);
    lua_pop(L, 1);
  } else {
    name = defined_at(L, 1);
  }
  const std::string site = caller_site(L);
  Stream& s = given ? *given : rt.current_stream();
  lua_settop(L, 2);
  refuse_when_closing(L, "graphs");
  auto* box = static_cast<GraphBox*>(lua_newuserdatauv(L, sizeof(GraphBox), 1));
  new (box) GraphBox{};
  box->fuse = fuse;
  set_metatable(L, kGraphType);
  push_scratch_option(L, 2, 2);
  lua_setiuservalue(L, 3, 1);
  {
    CollectorPaused paused(L);
    CurrentStreamScope scope(rt, s);
    box->graph =
        Graph::capture(rt, s, std::move(name), site, graph_function(L, 1, 2, nargs, fuse, 3));
  }
  return 1;
}

// g:launch([stream]).
int g_launch(lua_State* L) {
  Graph& g = check_graph(L, 1);
  Stream& s = lua_isnoneornil(L, 2) ? runtime(L).current_stream() : check_stream(L, 2);
  g.launch(s, 1);
  lua_settop(L, 1);
  return 1;
}

// g:replay(n [, stream]): n launches from one call.
int g_replay(lua_State* L) {
  Graph& g = check_graph(L, 1);
  const int64_t n = as_argument(2, [&] { return check_integer(L, 2, "the number of launches"); });
  if (n < 0) arg_error(2, fmt::format("the number of launches must be >= 0, got {}", n));
  Stream& s = lua_isnoneornil(L, 3) ? runtime(L).current_stream() : check_stream(L, 3);
  g.launch(s, n);
  lua_settop(L, 1);
  return 1;
}

// g:update(fn [, {args...}]): "updated" or "reinstantiated".
int g_update(lua_State* L) {
  check_graph(L, 1);
  if (lua_type(L, 2) != LUA_TFUNCTION) type_error(L, 2, "function");
  const int nargs = check_graph_options(L, 3, {});
  lua_settop(L, 3);
  const std::shared_ptr<Graph> keep = test_box(L, 1)->graph;  // even if fn frees the graph
  const bool fuse = test_box(L, 1)->fuse;
  GraphUpdate result;
  {
    CollectorPaused paused(L);
    CurrentStreamScope scope(runtime(L), keep->stream());
    result = keep->update(graph_function(L, 2, 3, nargs, fuse, 1));
  }
  const auto r = graph_update_name(result);
  lua_pushlstring(L, r.data(), r.size());
  return 1;
}

int g_free(lua_State* L) {
  GraphBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kGraphType);
  if (box->graph && Capture::active() && !box->graph->released()) {
    fail(ErrorKind::Capture, "a graph cannot be freed while another graph is captured");
  }
  if (box->graph) box->graph->release();
  box->graph.reset();
  return 0;
}

int g_gc(lua_State* L) {
  GraphBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kGraphType);
  box->graph.reset();
  return 0;
}

std::string describe(const Graph& g) {
  return fmt::format(
      "cu.Graph '{}' ({} node{}, device {}, captured at {} in {:.3f} ms, instantiated in {:.3f} "
      "ms, {} array{} of {}, launched {} time{})",
      g.name(), g.nodes(), g.nodes() == 1 ? "" : "s", g.device(), g.site().empty() ? "?" : g.site(),
      g.capture_ms(), g.instantiate_ms(), g.buffers(), g.buffers() == 1 ? "" : "s",
      format_bytes(static_cast<double>(g.buffer_bytes())), g.launches(),
      g.launches() == 1 ? "" : "s");
}

int g_tostring(lua_State* L) {
  GraphBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kGraphType);
  if (!box->graph || box->graph->released()) {
    lua_pushliteral(L, "cu.Graph(<freed>)");
    return 1;
  }
  const std::string s = describe(*box->graph);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

void push_string(lua_State* L, const std::string& s) {
  lua_pushlstring(L, s.data(), s.size());
}

int g_index(lua_State* L) {
  GraphBox* box = test_box(L, 1);
  if (!box) type_error(L, 1, kGraphType);
  if (push_upvalue_method(L)) return 1;
  const char* key = lua_tostring(L, 2);
  const std::string_view k = key ? key : "";
  if (k == "freed") {
    lua_pushboolean(L, !box->graph || box->graph->released());
    return 1;
  }
  const Graph& g = check_graph(L, 1);
  if (k == "nodes") {
    lua_pushinteger(L, static_cast<lua_Integer>(g.nodes()));
  } else if (k == "instantiate_ms") {
    lua_pushnumber(L, g.instantiate_ms());
  } else if (k == "capture_ms") {
    lua_pushnumber(L, g.capture_ms());
  } else if (k == "launches") {
    lua_pushinteger(L, g.launches());
  } else if (k == "updates") {
    lua_pushinteger(L, g.updates());
  } else if (k == "reinstantiations") {
    lua_pushinteger(L, g.reinstantiations());
  } else if (k == "device") {
    lua_pushinteger(L, g.device());
  } else if (k == "name") {
    push_string(L, g.name());
  } else if (k == "site") {
    push_string(L, g.site());
  } else if (k == "arrays") {
    lua_pushinteger(L, static_cast<lua_Integer>(g.buffers()));
  } else if (k == "bytes") {
    lua_pushinteger(L, static_cast<lua_Integer>(g.buffer_bytes()));
  } else if (k == "ops") {
    const auto& names = g.op_names();
    check_stack(L, 2);
    lua_createtable(L, static_cast<int>(names.size()), 0);
    for (size_t i = 0; i < names.size(); ++i) {
      push_string(L, names[i]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else if (k == "ledger") {
    push_ledger(L, g.ledger_per_launch());
  } else {
    fail(ErrorKind::Index, "cu.Graph has no field or method '{}'", luaL_tolstring(L, 2, nullptr));
  }
  return 1;
}

const luaL_Reg kMethods[] = {
    {"launch", entry<g_launch>}, {"replay", entry<g_replay>}, {"update", entry<g_update>},
    {"free", entry<g_free>},     {nullptr, nullptr},
};

}  // namespace

Graph* test_graph(lua_State* L, int idx) {
  GraphBox* box = test_box(L, idx);
  if (!box) return nullptr;
  return &check_graph(L, idx);
}

void register_graph(lua_State* L) {
  new_metatable(L, kGraphType);
  context(L).graph_mt = lua_topointer(L, -1);
  const luaL_Reg meta[] = {{"__gc", entry<g_gc>},
                           {"__close", entry<g_free>},
                           {"__tostring", entry<g_tostring>},
                           {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, kMethods);
  lua_pushcclosure(L, entry<g_index>, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_graph>);
  lua_setfield(L, -2, "graph");
}

}  // namespace culua::detail::lua
