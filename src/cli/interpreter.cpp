// Running Lua chunks as the lua program does (interpreter.hpp): the protected call with lua.c's
// message handler, Ctrl-C turned into a Lua error at the next Lua step, and the error report.
#include <lua.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>

#include "cli/interpreter.hpp"
#include "core/base/interrupt.hpp"
#include "dist/mpi.hpp"
#include "lua/sandbox.hpp"

namespace culua::detail::cli {

const char* progname = "culua";

namespace {

// Ctrl-C as in lua.c: the handler only sets a hook, and the hook raises at the next Lua step. It
// also requests the interrupt flag that every run has in scope, so that a wait for the device
// (cu.sync(), an element read, a copy to the host) stops polling and raises as well.
lua_State* interrupted_state = nullptr;
InterruptFlag interrupt_flag;

int traceback_handler(lua_State* L);

void stop_hook(lua_State* L, lua_Debug* ar) {
  // An interrupted wait raises its own error: the call of its message handler and the return
  // from it must not replace that error with this one.
  // The handler may call the __tostring of a cu.Error: a hook event in a function it called.
  lua_getinfo(L, "f", ar);
  bool in_handler = lua_tocfunction(L, -1) == traceback_handler;
  lua_pop(L, 1);
  lua_Debug caller;
  if (!in_handler && lua_getstack(L, 1, &caller) && lua_getinfo(L, "f", &caller)) {
    in_handler = lua_tocfunction(L, -1) == traceback_handler;
    lua_pop(L, 1);
  }
  if (in_handler) return;
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

void on_sigint(int sig) {
  std::signal(sig, SIG_DFL);  // a second Ctrl-C kills the process
  interrupt_flag.request();
  lua_sethook(interrupted_state, stop_hook,
              LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

// lua.c's message handler; a culua error object (cu.Error) prints as its text with the traceback.
int traceback_handler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    const bool culua_error = luaL_getmetafield(L, 1, "__name") == LUA_TSTRING &&
                             std::strcmp(lua_tostring(L, -1), "cu.Error") == 0;
    lua_settop(L, 1);
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      if (!culua_error) return 1;
      msg = lua_tostring(L, -1);
    } else {
      msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

}  // namespace

int docall(lua_State* L, int nargs, int nresults, bool traceback) {
  const int base = lua_gettop(L) - nargs;
  if (traceback) {
    lua_pushcfunction(L, traceback_handler);
    lua_insert(L, base);
  }
  interrupted_state = L;
  interrupt_flag.clear();
  lua::sandbox_enter(L);  // a fresh budget in a sandbox; else no hook (a Ctrl-C left over)
  int status;
  {
    InterruptScope scope(&interrupt_flag);
    struct sigaction action = {};
    struct sigaction previous = {};
    action.sa_handler = on_sigint;
    action.sa_flags = SA_RESTART;  // as signal(): other system calls go on
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
    status = lua_pcall(L, nargs, nresults, traceback ? base : 0);
    sigaction(SIGINT, &previous, nullptr);
  }
  status = lua::sandbox_leave(L, status);  // also a Ctrl-C that came after the last Lua step
  if (traceback) lua_remove(L, base);
  return status;
}

bool interrupted() {
  return interrupt_flag.requested();
}

int report(lua_State* L, int status) {
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    if (!msg && luaL_callmeta(L, -1, "__tostring")) {  // a cu.Error raised without the handler
      if (lua_type(L, -1) == LUA_TSTRING)
        lua_replace(L, -2);
      else
        lua_pop(L, 1);
      msg = lua_tostring(L, -1);
    }
    std::fprintf(stderr, "%s: %s%s\n", progname, dist::mpi::rank_prefix().c_str(),
                 msg ? msg : "(error object is not a string)");
    std::fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

}  // namespace culua::detail::cli
