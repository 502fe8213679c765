// Running Lua chunks the way the `lua` program does: protected calls with a traceback, SIGINT
// turned into a Lua error, errors reported as "PROGNAME: message" (argv[0], as lua.c).
#pragma once

#include <lua.hpp>

#include <string>
#include <vector>

namespace culua::detail::cli {

// The name that starts every message of the program, as lua.c's progname: argv[0] as invoked
// (a path when run through one), "culua" when argv[0] is missing or empty (main sets it).
extern const char* progname;

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

// What the REPL does, for other front ends (the Jupyter kernel):
// Compiles a whole cell as the REPL compiles a chunk: first as "return <cell>" (an expression
// shows its values), then as statements. LUA_OK leaves the function on the stack; otherwise the
// error message, with *incomplete set when only the chunk's end is missing.
int load_cell(lua_State* L, const std::string& text, bool* incomplete);
// The completions of the word that ends at byte `cursor` of `text` (globals, keywords, fields,
// methods after ':'), sorted; *start is where that word begins. Reads the state without calling
// any function.
std::vector<std::string> completions(lua_State* L, const std::string& text, size_t cursor,
                                     size_t* start);
// ": backend NAME, device 0: NAME" (creates the backend), or ": no backend: WHY".
std::string backend_description(lua_State* L);

}  // namespace culua::detail::cli
