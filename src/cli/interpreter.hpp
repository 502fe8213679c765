// Running Lua chunks the way the `lua` program does: protected calls with a traceback, SIGINT
// turned into a Lua error, errors reported as "PROGNAME: message" (argv[0], as lua.c).
#pragma once

#include <lua.hpp>

#include <string>

namespace culua::detail::cli {

// Calls the function below `nargs` arguments on the stack, with a traceback handler (unless
// `traceback` is false) and SIGINT interrupting it. Leaves `nresults` results (or the error
// message).
int docall(lua_State* L, int nargs, int nresults, bool traceback = true);
// Prints the error message on top of the stack (if status != LUA_OK) and pops it.
int report(lua_State* L, int status);
// True when Ctrl-C interrupted the last docall.
bool interrupted();
// The interactive loop (repl.cpp).
void run_repl(lua_State* L);

}  // namespace culua::detail::cli
