// The `cu` module table: device queries, synchronization, clocks, and the wiring of the types.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <numbers>
#include <utility>

#include "core/base/error.hpp"
#include "core/ops/ops.hpp"
#include "core/version.hpp"
#include "dist/mpi.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/embedded_modules.hpp"

namespace culua::detail::lua {

namespace {

void push_device_info(lua_State* L, const DeviceInfo& d, bool cuda) {
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, d.index);
  lua_setfield(L, -2, "index");
  lua_pushstring(L, d.name.c_str());
  lua_setfield(L, -2, "name");
  lua_pushinteger(L, d.sm_count);
  lua_setfield(L, -2, "sm_count");
  lua_pushinteger(L, static_cast<lua_Integer>(d.memory));
  lua_setfield(L, -2, "memory");
  lua_pushinteger(L, static_cast<lua_Integer>(d.l2));
  lua_setfield(L, -2, "l2");
  if (cuda) {
    lua_pushfstring(L, "%d.%d", d.cc_major, d.cc_minor);
    lua_setfield(L, -2, "cc");
  }
}

// peers: {[j] = {access=, link=}} for every other device j (keys are device indices).
void push_peers(lua_State* L, Backend& b, int device, int n) {
  lua_createtable(L, 0, n > 1 ? n - 1 : 0);
  for (int j = 0; j < n; ++j) {
    if (j == device) continue;
    const PeerLink link = b.peer_link(device, j);
    lua_createtable(L, 0, 2);
    lua_pushboolean(L, link.access);
    lua_setfield(L, -2, "access");
    lua_pushlstring(L, link.link.data(), link.link.size());
    lua_setfield(L, -2, "link");
    lua_rawseti(L, -2, j);
  }
  lua_setfield(L, -2, "peers");
}

int l_devices(lua_State* L) {
  Backend& b = runtime(L).backend();
  const int n = b.device_count();
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; ++i) {
    push_device_info(L, b.device_info(i), b.kind() == BackendKind::Cuda);
    push_peers(L, b, i, n);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

int l_device(lua_State* L) {
  Runtime& rt = runtime(L);
  if (!lua_isnoneornil(L, 1)) rt.set_device(check_device_index(L, 1));
  lua_pushinteger(L, rt.device());
  return 1;
}

// cu.use_device(i): selects device i until the returned value is closed (`local _ <close> =
// cu.use_device(i)`), which selects the previous device again, also when an error leaves the
// block. The collector never restores: only closing does.
constexpr char kDeviceUseType[] = "cu.DeviceUse";
struct DeviceUse {
  int device = 0;
  int previous = 0;
  bool closed = true;
};

int l_use_device(lua_State* L) {
  Runtime& rt = runtime(L);
  const int d = check_device_index(L, 1);
  if (lua_gettop(L) > 1)
    arg_error(2, fmt::format("no value expected, got {}", luaL_typename(L, 2)));
  refuse_when_closing(L, "device scopes");
  auto* u = static_cast<DeviceUse*>(lua_newuserdatauv(L, sizeof(DeviceUse), 0));
  new (u) DeviceUse{};
  set_metatable(L, kDeviceUseType);
  u->previous = rt.device();
  u->device = d;
  rt.set_device(d);
  u->closed = false;
  return 1;
}

int device_use_close(lua_State* L) {
  auto* u = check_box<DeviceUse>(L, 1, kDeviceUseType);
  if (u->closed) return 0;
  u->closed = true;
  runtime(L).restore_device(u->previous);
  return 0;
}

int device_use_tostring(lua_State* L) {
  auto* u = check_box<DeviceUse>(L, 1, kDeviceUseType);
  lua_pushfstring(L, "cu.DeviceUse(device=%d, previous=%d%s)", u->device, u->previous,
                  u->closed ? ", closed" : "");
  return 1;
}

int device_use_index(lua_State* L) {
  auto* u = check_box<DeviceUse>(L, 1, kDeviceUseType);
  const std::string_view k = arg_string(L, 2);
  if (k == "device") {
    lua_pushinteger(L, u->device);
  } else if (k == "previous") {
    lua_pushinteger(L, u->previous);
  } else if (k == "close") {
    lua_pushcfunction(L, entry<device_use_close>);
  } else {
    fail(ErrorKind::Index, "{} has no field '{}' (it has device, previous, close)", kDeviceUseType,
         k);
  }
  return 1;
}

void register_device_use(lua_State* L) {
  new_metatable(L, kDeviceUseType);
  const luaL_Reg meta[] = {{"__close", entry<device_use_close>},
                           {"__tostring", entry<device_use_tostring>},
                           {"__index", entry<device_use_index>},
                           {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
}

int l_sync(lua_State* L) {
  runtime(L).synchronize();
  return 0;
}

int l_sleep(lua_State* L) {
  const double ms = arg_number(L, 1);
  check_options(L, 2, {"stream"});
  sleep(runtime(L), ms / 1000.0, opt_stream(L, 2));
  return 0;
}

// Fields computed on first access, so that loading the module never touches the GPU.
int module_index(lua_State* L) {
  const char* key = lua_tostring(L, 2);
  if (key && std::string_view(key) == "backend") {
    const auto n = backend_name(runtime(L).kind());
    lua_pushlstring(L, n.data(), n.size());
    return 1;
  }
  return 0;
}

int load_embedded(lua_State* L) {
  const auto* m = static_cast<const EmbeddedModule*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (luaL_loadbufferx(L, m->source, std::strlen(m->source), m->chunkname, "t") != LUA_OK) {
    raise_value(L);
  }
  lua_pushstring(L, m->name);
  call_lua(L, 1, 1);
  return 1;
}

int preload_cu(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  return 1;
}

// cu.help(x [, opts]): the embedded Lua module cu.help (lua/cu/help.lua) describes x from the
// annotation file's text; its results (none, or the text) are returned as they are.
int l_help(lua_State* L) {
  lua_settop(L, 2);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cu.help");
  lua_call(L, 1, 1);
  lua_getfield(L, 3, "help");
  lua_pushstring(L, kAnnotations);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 3, LUA_MULTRET);
  return lua_gettop(L) - 3;
}

// os.exit leaves at once: work still queued is not waited for (Runtime::abandon_queued_work),
// also when the state is closed first (os.exit(code, true)); then the standard os.exit, an
// upvalue, does the rest. With kernels still running on a GPU the process ends here (_Exit, the
// state not closed): closing it unloads cu.so in a stock Lua, and the CUDA runtime's teardown
// then waits for those kernels.
int l_os_exit(lua_State* L) {
  if (!lua_isnoneornil(L, 1) && !lua_isboolean(L, 1)) arg_integer(L, 1);  // os.exit's own check
  if (abandon_queued_work(runtime(L)) > 0) {
    const int status = lua_isboolean(L, 1)     ? (lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE)
                       : lua_isnoneornil(L, 1) ? EXIT_SUCCESS
                                               : static_cast<int>(lua_tointeger(L, 1));
    std::fflush(nullptr);
    dist::mpi::finish();  // _Exit runs no atexit handler: an MPI rank must still finalize
    std::_Exit(status);
  }
  if (lua_toboolean(L, 2)) mark_closing(L);  // os.exit(code, true) closes the state
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

void wrap_os_exit(lua_State* L) {
  const int top = lua_gettop(L);
  if (lua_getglobal(L, "os") == LUA_TTABLE && lua_getfield(L, -1, "exit") == LUA_TFUNCTION &&
      lua_tocfunction(L, -1) != entry<l_os_exit>) {
    lua_pushcclosure(L, entry<l_os_exit>, 1);
    lua_setfield(L, -2, "exit");
  }
  lua_settop(L, top);
}

int context_gc(lua_State* L) {
  auto* ctx = static_cast<Context*>(lua_touserdata(L, 1));
  if (!ctx || lua_type(L, 1) != LUA_TUSERDATA || ctx != find_context(L)) {
    type_error(L, 1, "the cu module's context");
  }
  if (ctx->rt) {
    ctx->rt->collect_garbage = nullptr;
    ctx->rt->collect_young = nullptr;
    ctx->rt->monitor().site = nullptr;
    ctx->rt->monitor().site_id = nullptr;
  }
  ctx->profiler.reset();
  ctx->trace.reset();
  ctx->~Context();
  drop_context(L);
  return 0;
}

}  // namespace

int abandon_queued_work(Runtime& rt) noexcept {
  const int busy = rt.abandon_queued_work();
  if (busy > 0 && rt.backend().kind() == BackendKind::Cuda) {
    std::fprintf(stderr,
                 "culua: leaving with work still queued on %d CUDA stream%s: not waiting for it "
                 "(it ends with the process)\n",
                 busy, busy == 1 ? "" : "s");
    std::fflush(stderr);
    return busy;
  }
  return 0;
}

void open_cu(lua_State* L, Runtime& rt, const RunOptions& options) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State* main = lua_tothread(L, -1);
  lua_pop(L, 1);

  auto* ctx = static_cast<Context*>(lua_newuserdatauv(L, sizeof(Context), 0));
  new (ctx) Context{};
  ctx->rt = &rt;
  ctx->run_options = options;
  lua_newtable(L);
  lua_pushcfunction(L, entry<context_gc>);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kContextKey);
#if defined(CULUA_LUA_CXX)
  *static_cast<Context**>(lua_getextraspace(main)) = ctx;
  if (L != main) *static_cast<Context**>(lua_getextraspace(L)) = ctx;
#endif
  // The collector cannot see device memory: the runtime asks for full collections when device
  // allocations pile up, and before retrying one that ran out of memory.
  rt.collect_garbage = [main] { lua_gc(main, LUA_GCCOLLECT); };

  lua_newtable(L);
  register_complex(L);
  register_array(L);
  register_stream(L);
  register_event(L);
  register_graph(L);
  register_fuse(L);
  register_math(L);
  register_reduce(L);
  register_sort(L);
  register_random(L);
  register_linalg(L);
  register_fft(L);
  register_dtypes(L);
  register_manip(L);
  register_kernel(L);
  register_kernel_templates(L);
  register_measure(L);
  register_profile(L);
  register_display(L);
  register_bench(L);
  register_sweep(L);
  register_tune(L);
  register_json(L);
  register_nccl(L);
  register_device_use(L);
  register_mpi(L);
  register_error(L);
  register_released_array(L);
  const luaL_Reg functions[] = {{"devices", entry<l_devices>},       {"device", entry<l_device>},
                                {"use_device", entry<l_use_device>}, {"sync", entry<l_sync>},
                                {"sleep", entry<l_sleep>},           {nullptr, nullptr}};
  luaL_setfuncs(L, functions, 0);
  lua_pushcfunction(L, entry<l_help>);
  lua_setfield(L, -2, "help");
  lua_pushliteral(L, CULUA_VERSION);
  lua_setfield(L, -2, "version");
  // The Array API standard's constants (Lua has math.pi and math.huge; these ease porting).
  const std::pair<const char*, lua_Number> constants[] = {
      {"e", std::numbers::e},
      {"pi", std::numbers::pi},
      {"inf", std::numeric_limits<lua_Number>::infinity()},
      {"nan", std::numeric_limits<lua_Number>::quiet_NaN()}};
  for (const auto& [key, value] : constants) {
    lua_pushnumber(L, value);
    lua_setfield(L, -2, key);
  }
  lua_newtable(L);
  lua_pushcfunction(L, entry<module_index>);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);

  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "cu");
  lua_pop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  // require "cu" after package.loaded.cu was cleared gives the same module.
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, entry<preload_cu>, 1);
  lua_setfield(L, -2, "cu");
  for (const EmbeddedModule* m = kEmbeddedModules; m->name; ++m) {
    lua_pushlightuserdata(L, const_cast<EmbeddedModule*>(m));
    lua_pushcclosure(L, entry<load_embedded>, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 1);
  wrap_os_exit(L);
}

}  // namespace culua::detail::lua
