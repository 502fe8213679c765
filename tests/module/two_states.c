/* Two and then three Lua states of one process load cu.so and use it in turns, one closing while
 * the others go on: each state has its own runtime, and the module finds the right one (its
 * context cache is keyed by the state and dropped when a state closes).
 *
 *   two_states MODULE_DIR        (exit 0 when every result is right)
 */
#include <stdio.h>
#include <string.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

static int failures = 0;

/* Runs `code`, which returns a string (or raises: the message is the result). */
static void run(lua_State* L, const char* code, const char* expected) {
  const char* got;
  luaL_dostring(L, code);
  got = lua_tostring(L, -1);
  if (got == NULL || strcmp(got, expected) != 0) {
    fprintf(stderr, "FAIL: %s\n  expected %s, got %s\n", code, expected, got ? got : "(nil)");
    ++failures;
  }
  lua_settop(L, 0);
}

/* A state with the module loaded, a global array `a` of ten `value`s and the ledger then. */
static lua_State* open_state(const char* dir, const char* value) {
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.so", dir);
  lua_setfield(L, -2, "cpath");
  lua_pop(L, 1);
  lua_pushstring(L, value);
  lua_setglobal(L, "value");
  run(L, "cu = require 'cu'; a = cu.full(10, tonumber(value)); base = cu.ledger(); return 'ok'",
      "ok");
  return L;
}

int main(int argc, char** argv) {
  lua_State *a, *b, *c;
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE_DIR\n", argv[0]);
    return 2;
  }
  a = open_state(argv[1], "1");
  b = open_state(argv[1], "2");
  run(a, "return tostring(a:sum():item())", "10.0");
  run(b, "return tostring(a:sum():item())", "20.0");
  run(a, "local co = coroutine.wrap(function() return a:sum():item() end) return tostring(co())",
      "10.0");
  /* What a did is not in b's ledger. */
  run(b, "return tostring(cu.ledger().allocs - base.allocs - 1)", "0");
  lua_close(a);
  run(b, "return tostring((a + 1):sum():item())", "30.0");
  c = open_state(argv[1], "3");
  run(c, "return tostring(a:sum():item())", "30.0");
  run(b, "return tostring(a:sum():item())", "20.0");
  lua_close(b);
  run(c, "return tostring(cu.ledger().allocs - base.allocs - 1)", "0");
  lua_close(c);
  if (failures == 0) printf("two_states: ok\n");
  return failures == 0 ? 0 : 1;
}
