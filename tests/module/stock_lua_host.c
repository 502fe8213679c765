/* A minimal stand-in for the lua5.4 interpreter, to test cu.so where no lua5.4 is installed (the
 * GPU machine): Lua built as C (errors longjmp), linked in statically and exported (-rdynamic), so
 * the module finds the Lua API in this program as it does in lua5.4.
 *
 *   stock_lua_host MODULE_DIR SCRIPT [ARGS...]
 *
 * package.cpath is MODULE_DIR/?.so; the script gets `arg` as lua5.4 gives it. Errors print a
 * traceback; the exit status is 0 on success, 1 on an error, or what the script passes to os.exit.
 */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

static int traceback(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Everything that can raise runs here, under lua_pcall (as lua.c's pmain). */
static int run(lua_State* L) {
  const int argc = (int)lua_tointeger(L, 1);
  char** argv = (char**)lua_touserdata(L, 2);
  int i;
  luaL_openlibs(L);

  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.so", argv[1]);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);

  lua_createtable(L, argc - 2, 3);
  for (i = 0; i < argc; ++i) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 2);
  }
  lua_setglobal(L, "arg");

  if (luaL_loadfile(L, argv[2]) != LUA_OK) return lua_error(L);
  luaL_checkstack(L, argc - 3, "too many arguments");
  for (i = 3; i < argc; ++i) lua_pushstring(L, argv[i]);
  lua_call(L, argc - 3, 0);
  return 0;
}

int main(int argc, char** argv) {
  lua_State* L;
  int status;
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODULE_DIR SCRIPT [ARGS...]\n", argv[0]);
    return 2;
  }
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "%s: cannot create the Lua state\n", argv[0]);
    return 1;
  }
  lua_pushcfunction(L, traceback);
  lua_pushcfunction(L, run);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  status = lua_pcall(L, 2, 0, 1);
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    fprintf(stderr, "%s: %s\n", argv[0], msg ? msg : "(error object is not a string)");
  }
  lua_close(L);
  return status == LUA_OK ? 0 : 1;
}
