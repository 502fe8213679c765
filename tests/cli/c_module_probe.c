/* A Lua C module as third parties write them: plain C, built without linking any Lua library, so
   every lua_* / luaL_* call resolves to the API that the loading program (culua) exports.
   tests/cli/test_c_modules.lua drives it: errors raised in C, Lua errors unwinding through these
   C frames, protected calls and yields with continuations inside C, userdata finalizers. */
#include <lauxlib.h>
#include <lua.h>

static int finalized = 0;

static int swap(lua_State* L) {
  lua_settop(L, 2);
  lua_insert(L, 1);
  return 2;
}

/* Raises from C: luaL_error, or lua_error with a non-string error object. */
static int fail(lua_State* L) {
  if (lua_istable(L, 1)) {
    lua_settop(L, 1);
    return lua_error(L);
  }
  return luaL_error(L, "probe failed: %s", luaL_checkstring(L, 1));
}

/* Calls f(...) unprotected: an error in f unwinds through this C frame. */
static int call(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* Calls f() protected from C: returns the status code and the error or first result. */
static int protected_call(lua_State* L) {
  int status;
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  status = lua_pcall(L, 0, 1, 0);
  lua_pushinteger(L, status);
  lua_insert(L, -2);
  return 2;
}

/* Calls f(x) with a continuation, so that f may yield across this C function; returns "k:" and
   f's result. */
static int after_call(lua_State* L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  lua_pushfstring(L, "k:%s", luaL_tolstring(L, -1, NULL));
  return 1;
}

static int call_k(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_callk(L, 1, 1, 0, after_call);
  return after_call(L, LUA_OK, 0);
}

static int object_gc(lua_State* L) {
  (void)L;
  ++finalized;
  return 0;
}

static int new_object(lua_State* L) {
  lua_newuserdatauv(L, 16, 0);
  luaL_setmetatable(L, "culua_probe.Object");
  return 1;
}

static int finalized_count(lua_State* L) {
  lua_pushinteger(L, finalized);
  return 1;
}

static const luaL_Reg functions[] = {
    {"swap", swap},
    {"fail", fail},
    {"call", call},
    {"protected_call", protected_call},
    {"call_k", call_k},
    {"new_object", new_object},
    {"finalized", finalized_count},
    {NULL, NULL},
};

/* For package.loadlib(path, "culua_probe_answer"). */
LUAMOD_API int culua_probe_answer(lua_State* L) {
  lua_pushinteger(L, 42);
  return 1;
}

LUAMOD_API int luaopen_culua_probe(lua_State* L) {
  luaL_newmetatable(L, "culua_probe.Object");
  lua_pushcfunction(L, object_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_newlib(L, functions);
  lua_pushstring(L, lua_tostring(L, 1)); /* the name require passed */
  lua_setfield(L, -2, "name");
  return 1;
}

/* require "culua_probe.sub" finds this in culua_probe.so (the all-in-one loader). */
LUAMOD_API int luaopen_culua_probe_sub(lua_State* L) {
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "name");
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "file");
  return 1;
}
