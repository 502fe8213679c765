// The interactive loop: line editing and history through libedit, multi-line chunks, and
// expression lines that print their values.
#include <editline/readline.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli/interpreter.hpp"
#include "core/version.hpp"

namespace culua::detail::cli {

namespace {

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.culua_history" : std::string();
}

// A chunk that failed only because its end is missing: keep reading lines.
bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len = 0;
  const char* msg = lua_tolstring(L, -1, &len);
  constexpr std::string_view kEof = "<eof>";
  if (len >= kEof.size() && std::string_view(msg + len - kEof.size(), kEof.size()) == kEof) {
    lua_pop(L, 1);
    return true;
  }
  return false;
}

bool read_line(std::string& out, bool first) {
  char* line = readline(first ? "> " : ">> ");
  if (!line) return false;
  out = line;
  std::free(line);
  return true;
}

// Compiles the next chunk: first as "return <line>" (so expressions print), then as a statement,
// reading more lines while the chunk is incomplete. Leaves the function (or an error) on the
// stack; returns -1 at end of input.
int load_chunk(lua_State* L, std::string& text) {
  std::string line;
  if (!read_line(line, true)) return -1;
  if (!line.empty() && line[0] == '=') line = "return " + line.substr(1);
  const std::string ret = "return " + line + ";";
  if (luaL_loadbuffer(L, ret.data(), ret.size(), "=stdin") == LUA_OK) {
    text = line;
    return LUA_OK;
  }
  lua_pop(L, 1);
  text = line;
  for (;;) {
    const int status = luaL_loadbuffer(L, text.data(), text.size(), "=stdin");
    if (!incomplete(L, status)) return status;
    if (!read_line(line, false)) return status;
    text += "\n" + line;
  }
}

void print_results(lua_State* L) {
  const int n = lua_gettop(L);
  if (n == 0) return;
  luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  if (lua_pcall(L, n, 0, 0) != LUA_OK) report(L, LUA_ERRRUN);
}

void banner(lua_State* L) {
  std::printf("culua %s (%s)", CULUA_VERSION, LUA_RELEASE);
  // Reading cu.backend creates the backend (and the CUDA context): worth it in a REPL.
  lua_getglobal(L, "cu");
  if (lua_getfield(L, -1, "backend") == LUA_TSTRING) {
    std::printf(": backend %s", lua_tostring(L, -1));
    lua_getfield(L, -2, "devices");
    if (lua_pcall(L, 0, 1, 0) == LUA_OK && lua_rawgeti(L, -1, 1) == LUA_TTABLE) {
      lua_getfield(L, -1, "name");
      if (const char* name = lua_tostring(L, -1)) std::printf(", device 0: %s", name);
      lua_pop(L, 1);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 2);
  std::printf("\nType Lua; an expression prints its value. Ctrl-D exits.\n");
  std::fflush(stdout);
}

}  // namespace

void run_repl(lua_State* L) {
  const std::string history = history_path();
  using_history();
  if (!history.empty()) read_history(history.c_str());
  banner(L);
  lua_settop(L, 0);
  for (;;) {
    std::string text;
    int status = load_chunk(L, text);
    if (status == -1) break;
    if (!text.empty()) add_history(text.c_str());
    if (status == LUA_OK) status = docall(L, 0, LUA_MULTRET);
    if (status == LUA_OK) {
      print_results(L);
    } else {
      report(L, status);
    }
    lua_settop(L, 0);
  }
  if (!history.empty()) write_history(history.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace culua::detail::cli
