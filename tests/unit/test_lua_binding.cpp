// The Lua trampoline entry<F>: C++ exceptions become Lua errors, and Lua errors (thrown
// lua_longjmp* in the C++ build of Lua) unwind C++ frames, running their destructors.
#include "helpers.hpp"

#include <new>
#include <stdexcept>

#include "lua/binding.hpp"
#include "lua/cu_module.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

int g_destroyed = 0;

struct Probe {
  Probe() = default;
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
  ~Probe() { ++g_destroyed; }
};

int throws_culua_error(lua_State*) {
  Probe p;
  fail(ErrorKind::Value, "probe culua error {}", 1);
}

int raises_lua_error(lua_State* L) {
  Probe p;
  return luaL_error(L, "probe lua error %d", 2);
}

int throws_bad_alloc(lua_State*) {
  Probe p;
  throw std::bad_alloc();
}

int throws_runtime_error(lua_State*) {
  Probe p;
  throw std::runtime_error("probe runtime error");
}

// A Lua error raised by a Lua function this C function calls unwinds through it too.
int calls_failing_lua(lua_State* L) {
  Probe p;
  lua_getglobal(L, "failing");
  lua_call(L, 0, 0);
  return 0;
}

int returns_normally(lua_State* L) {
  Probe p;
  lua_pushinteger(L, 7);
  return 1;
}

// Calls the function given as argument 1 through call_lua.
int calls_back(lua_State* L) {
  Probe p;
  lua_settop(L, 1);
  lua::call_lua(L, 0, 1);
  return 1;
}

// Raises its argument as the error value.
int raises_its_argument(lua_State* L) {
  Probe p;
  lua_settop(L, 1);
  lua::raise_value(L);
}

// The same checks through luaL_check*/luaL_opt* (Lua) or through the helpers that throw.
template <bool Lua>
int checks_arguments(lua_State* L) {
  if constexpr (Lua) {
    luaL_checknumber(L, 1);
    luaL_checkinteger(L, 2);
    luaL_checkstring(L, 3);
    luaL_optnumber(L, 4, 0);
    luaL_checktype(L, 5, LUA_TTABLE);
    luaL_checkany(L, 6);
    luaL_checkudata(L, 7, lua::kArrayType);
    luaL_optinteger(L, 8, 0);
    luaL_optstring(L, 9, "");
  } else {
    lua::arg_number(L, 1);
    lua::arg_integer(L, 2);
    lua::arg_string(L, 3);
    lua::opt_arg_number(L, 4, 0);
    lua::arg_type(L, 5, LUA_TTABLE);
    lua::arg_any(L, 6);
    lua::arg_udata(L, 7, lua::kArrayType);
    lua::opt_arg_integer(L, 8, 0);
    lua::opt_arg_string(L, 9, "");
  }
  return 0;
}

struct LuaCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

// Runs a chunk that returns one string; fails the test when the chunk raises.
std::string run_string(lua_State* L, const char* code) {
  if (luaL_dostring(L, code) != LUA_OK) {
    const char* m = lua_tostring(L, -1);
    FAIL("Lua chunk failed: " << (m ? m : "?"));
  }
  // A culua error (a cu.Error table) as its text, as tostring gives it.
  size_t len = 0;
  const char* s = lua_isnil(L, -1) ? nullptr : luaL_tolstring(L, -1, &len);
  std::string out = s ? std::string(s, len) : std::string("<not a string>");
  lua_settop(L, 0);
  return out;
}

}  // namespace

TEST_CASE("lua: entry<F> turns exceptions into Lua errors and unwinds C++ frames", "[lua]") {
  Runtime rt(host_options());
  {
    std::unique_ptr<lua_State, LuaCloser> state(luaL_newstate());
    lua_State* L = state.get();
    REQUIRE(L != nullptr);
    luaL_openlibs(L);
    lua::open_cu(L, rt);
    lua_setglobal(L, "cu");
    CHECK(static_cast<bool>(rt.collect_garbage));
    lua_register(L, "throws_culua_error", lua::entry<throws_culua_error>);
    lua_register(L, "raises_lua_error", lua::entry<raises_lua_error>);
    lua_register(L, "throws_bad_alloc", lua::entry<throws_bad_alloc>);
    lua_register(L, "throws_runtime_error", lua::entry<throws_runtime_error>);
    lua_register(L, "calls_failing_lua", lua::entry<calls_failing_lua>);
    lua_register(L, "returns_normally", lua::entry<returns_normally>);
    run_string(L, "function failing() error('probe nested lua error') end return ''");

    SECTION("culua::detail::Error") {
      g_destroyed = 0;
      const std::string r =
          run_string(L, "local ok, m = pcall(throws_culua_error) return tostring(ok) .. '|' .. m");
      CHECK_THAT(r, Catch::StartsWith("false|"));
      CHECK_THAT(r, Catch::Contains("probe culua error 1"));
      CHECK(g_destroyed == 1);
    }
    SECTION("luaL_error") {
      g_destroyed = 0;
      const std::string r =
          run_string(L, "local ok, m = pcall(raises_lua_error) return tostring(ok) .. '|' .. m");
      CHECK_THAT(r, Catch::StartsWith("false|"));
      CHECK_THAT(r, Catch::Contains("probe lua error 2"));
      CHECK(g_destroyed == 1);
    }
    SECTION("std::bad_alloc") {
      g_destroyed = 0;
      const std::string r =
          run_string(L, "local ok, m = pcall(throws_bad_alloc) return tostring(ok) .. '|' .. m");
      CHECK_THAT(r, Catch::StartsWith("false|"));
      CHECK_THAT(r, Catch::Contains("out of host memory"));
      CHECK(g_destroyed == 1);
    }
    SECTION("other std::exception") {
      g_destroyed = 0;
      const std::string r = run_string(
          L, "local ok, m = pcall(throws_runtime_error) return tostring(ok) .. '|' .. m");
      CHECK_THAT(r, Catch::Contains("probe runtime error"));
      CHECK(g_destroyed == 1);
    }
    SECTION("a nested Lua error") {
      g_destroyed = 0;
      const std::string r =
          run_string(L, "local ok, m = pcall(calls_failing_lua) return tostring(ok) .. '|' .. m");
      CHECK_THAT(r, Catch::StartsWith("false|"));
      CHECK_THAT(r, Catch::Contains("probe nested lua error"));
      CHECK(g_destroyed == 1);
    }
    SECTION("the function name prefixes the message when Lua knows it") {
      const std::string r =
          run_string(L, "local ok, m = pcall(function() throws_culua_error() end) return m");
      CHECK_THAT(r, Catch::Contains("throws_culua_error: probe culua error 1"));
    }
    SECTION("errors inside coroutines") {
      g_destroyed = 0;
      const std::string r = run_string(L,
                                       "local co = coroutine.create(function() "
                                       "  coroutine.yield(1) throws_culua_error() end) "
                                       "local ok1 = coroutine.resume(co) "
                                       "local ok2, m = coroutine.resume(co) "
                                       "return tostring(ok1) .. '|' .. tostring(ok2) .. '|' .. m");
      CHECK_THAT(r, Catch::StartsWith("true|false|"));
      CHECK_THAT(r, Catch::Contains("probe culua error 1"));
      CHECK(g_destroyed == 1);
    }
    SECTION("many errors in a row") {
      g_destroyed = 0;
      const std::string r = run_string(L,
                                       "local n = 0 "
                                       "for i = 1, 1000 do "
                                       "  if not pcall(throws_culua_error) then n = n + 1 end "
                                       "  if not pcall(raises_lua_error) then n = n + 1 end "
                                       "  if not pcall(throws_bad_alloc) then n = n + 1 end "
                                       "end "
                                       "return tostring(n)");
      CHECK(r == "3000");
      CHECK(g_destroyed == 3000);
    }
    // Whatever happened above, the state and the module still work.
    g_destroyed = 0;
    CHECK(run_string(L, "return tostring(returns_normally())") == "7");
    CHECK(g_destroyed == 1);
    CHECK(run_string(L,
                     "local t = cu.ones(4):totable() "
                     "return #t .. ',' .. tostring(t[1] == 1 and t[4] == 1)") == "4,true");
    CHECK_THAT(run_string(L, "local ok, m = pcall(cu.empty, -1) return m"),
               Catch::Contains("negative"));
    CHECK(run_string(L, "return tostring(cu.zeros(3) ~= nil)") == "true");
  }
  // Closing the state detached it from the runtime.
  CHECK_FALSE(static_cast<bool>(rt.collect_garbage));
  rt.synchronize();
  CHECK(host_backend(rt).live_device_bytes() == 0);
}

TEST_CASE("lua: an unprotected error through entry<F> reaches lua_pcall", "[lua]") {
  Runtime rt(host_options());
  std::unique_ptr<lua_State, LuaCloser> state(luaL_newstate());
  lua_State* L = state.get();
  luaL_openlibs(L);
  lua::open_cu(L, rt);
  lua_pop(L, 1);
  g_destroyed = 0;
  lua_pushcfunction(L, lua::entry<throws_culua_error>);
  CHECK(lua_pcall(L, 0, 0, 0) == LUA_ERRRUN);
  CHECK(lua::error_kind(L, -1) != nullptr);
  CHECK_THAT(luaL_tolstring(L, -1, nullptr), Catch::Contains("probe culua error 1"));
  CHECK(g_destroyed == 1);
  lua_pop(L, 2);
  g_destroyed = 0;
  lua_pushcfunction(L, lua::entry<raises_lua_error>);
  CHECK(lua_pcall(L, 0, 0, 0) == LUA_ERRRUN);
  CHECK_THAT(lua_tostring(L, -1), Catch::Contains("probe lua error 2"));
  CHECK(g_destroyed == 1);
  lua_pop(L, 1);
}

TEST_CASE("lua: the argument helpers raise Lua's own messages", "[lua]") {
  Runtime rt(host_options());
  std::unique_ptr<lua_State, LuaCloser> state(luaL_newstate());
  lua_State* L = state.get();
  luaL_openlibs(L);
  lua::open_cu(L, rt);
  lua_setglobal(L, "cu");
  const char* calls =
      "local f = checks_arguments "
      "local o = { f = f } "
      "local calls = { "
      "  function() f('x') end, function() f() end, function() f(1, 2.5) end, "
      "  function() f(1, 'y') end, function() f(1, '2', {}) end, "
      "  function() f(1, 2, 's', 'z') end, function() f(1, 2, 's', nil, 5) end, "
      "  function() f(1, 2, 's', nil, {}) end, function() f(1, 2, 3, nil, {}, 0, 5) end, "
      "  function() f(1, 2, 's', nil, {}, false, cu.stream()) end, "
      "  function() f(1, 2, 's', nil, {}, 0, cu.zeros(1), 1.5) end, "
      "  function() f(1, 2, 's', nil, {}, 0, cu.zeros(1), 1, {}) end, "
      "  function() o:f('x') end, function() o:f(1, 'x') end, "
      "  function() return pcall(f, 'x') end, "
      "} "
      "local out = {} "
      "for i, call in ipairs(calls) do "
      "  local ok, m = pcall(call) "
      "  out[i] = ok and 'ok' or tostring(m) "
      "end "
      "return table.concat(out, '\\n')";
  lua_register(L, "checks_arguments", lua::entry<checks_arguments<true>>);
  const std::string by_lua = run_string(L, calls);
  lua_register(L, "checks_arguments", lua::entry<checks_arguments<false>>);
  const std::string by_helpers = run_string(L, calls);
  CHECK(by_helpers == by_lua);
  CHECK_THAT(by_helpers, Catch::Contains("bad argument #2 to 'f' (number has no integer"));
  CHECK_THAT(by_helpers,
             Catch::Contains("bad argument #7 to 'f' (cu.Array expected, got cu.Stream)"));
  CHECK_THAT(by_helpers, Catch::Contains("calling 'f' on bad self"));
  CHECK_THAT(by_helpers, Catch::Contains("bad argument #6 to 'f' (value expected)"));
}

TEST_CASE("lua: errors of Lua code a binding called come back unchanged", "[lua]") {
  Runtime rt(host_options());
  std::unique_ptr<lua_State, LuaCloser> state(luaL_newstate());
  lua_State* L = state.get();
  luaL_openlibs(L);
  lua::open_cu(L, rt);
  lua_pop(L, 1);
  lua_register(L, "calls_back", lua::entry<calls_back>);
  lua_register(L, "raises_its_argument", lua::entry<raises_its_argument>);
  g_destroyed = 0;
  CHECK(run_string(L,
                   "local marker = {} "
                   "local ok1, e1 = pcall(calls_back, function() error(marker) end) "
                   "local ok2, e2 = pcall(raises_its_argument, marker) "
                   "local ok3, e3 = pcall(raises_its_argument, 'text') "
                   "local ok4, v = pcall(calls_back, function() return 'fine' end) "
                   "return tostring(not ok1 and rawequal(e1, marker)) .. "
                   "tostring(not ok2 and rawequal(e2, marker)) .. tostring(not ok3 and e3) .. "
                   "tostring(ok4 and v)") == "truetruetextfine");
  CHECK(g_destroyed == 4);
}
