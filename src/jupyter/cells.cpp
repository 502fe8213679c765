// Cells and questions about code, answered by the Lua state: a cell compiled as the REPL does
// and run under an error handler that returns {ename, evalue, traceback}, its values as text and
// as a culua value's richer forms; completion, inspection (cu.help) and completeness.
#include "jupyter/cells.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "cli/interpreter.hpp"
#include "jupyter/wire.hpp"

namespace culua::detail::jupyter {

namespace {

// The error handler of a cell: {ename, evalue, traceback} from the error value.
int cell_error_handler(lua_State* L) {
  std::string kind = "LuaError";
  if (lua_getglobal(L, "cu") == LUA_TTABLE && lua_getfield(L, -1, "error_kind") == LUA_TFUNCTION) {
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      kind = lua_tostring(L, -1);
  }
  lua_settop(L, 1);
  const char* msg = luaL_tolstring(L, 1, nullptr);
  const std::string text = msg ? msg : "(error object is not a string)";
  luaL_traceback(L, L, nullptr, 1);
  lua_createtable(L, 0, 3);
  lua_pushstring(L, kind.c_str());
  lua_setfield(L, -2, "ename");
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "evalue");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "traceback");
  return 1;
}

// Runs the function below it with cell_error_handler; rethrows the handler's table.
int cell_runner(lua_State* L) {
  lua_pushcfunction(L, cell_error_handler);
  lua_insert(L, 1);
  if (lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 1) != LUA_OK) return lua_error(L);
  lua_remove(L, 1);
  return lua_gettop(L);
}

// The values 1..top as print shows them, tab-separated.
int values_text(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, nullptr);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

// Compiles a cell: as the REPL does (the whole cell as an expression, else as statements), and
// besides, as a notebook shows it, a cell of statements whose last line is an expression shows
// that expression's values.
int load_code(lua_State* L, const std::string& code, bool* incomplete) {
  if (!code.empty() && code[0] != '=') {
    const std::string whole = "return " + code + ";";
    if (luaL_loadbuffer(L, whole.data(), whole.size(), "=cell") == LUA_OK) return LUA_OK;
    lua_pop(L, 1);
    // The last expression may span several lines: try "return" before each of the last lines.
    size_t end = code.find_last_not_of(" \t\r\n");
    size_t at = end == std::string::npos ? std::string::npos : code.rfind('\n', end);
    for (int tries = 0; at != std::string::npos && tries < 20; ++tries) {
      const std::string split =
          code.substr(0, at) + "\nreturn " + code.substr(at + 1, end - at) + ";";
      if (luaL_loadbuffer(L, split.data(), split.size(), "=cell") == LUA_OK) return LUA_OK;
      lua_pop(L, 1);
      at = at == 0 ? std::string::npos : code.rfind('\n', at - 1);
    }
  }
  return cli::load_cell(L, code, incomplete);
}

}  // namespace

json run_cell(lua_State* L, const std::string& code, bool silent, bool* ok) {
  const int top = lua_gettop(L);
  bool incomplete = false;
  json result = json::object();
  *ok = false;
  if (load_code(L, code, &incomplete) != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    result = {{"ename", "SyntaxError"},
              {"evalue", msg ? msg : "syntax error"},
              {"traceback", json::array({msg ? msg : "syntax error"})}};
    lua_settop(L, top);
    return result;
  }
  lua_pushcfunction(L, cell_runner);
  lua_insert(L, -2);
  const int status = cli::docall(L, 1, LUA_MULTRET, false);
  if (status != LUA_OK) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      lua_getfield(L, -1, "ename");
      lua_getfield(L, -2, "evalue");
      lua_getfield(L, -3, "traceback");
      const std::string ename = lua_tostring(L, -3) ? lua_tostring(L, -3) : "LuaError";
      const std::string evalue = lua_tostring(L, -2) ? lua_tostring(L, -2) : "";
      const std::string tb = lua_tostring(L, -1) ? lua_tostring(L, -1) : "";
      json lines = json::array({ename + ": " + evalue});
      std::istringstream in(tb);
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      result = {{"ename", ename}, {"evalue", evalue}, {"traceback", lines}};
    } else {
      const char* msg = lua_tostring(L, -1);
      result = {{"ename", cli::interrupted() ? "interrupted" : "LuaError"},
                {"evalue", msg ? msg : "error"},
                {"traceback", json::array({msg ? msg : "error"})}};
    }
    lua_settop(L, top);
    return result;
  }
  *ok = true;
  const int n = lua_gettop(L) - top;
  if (n > 0 && !silent) {
    json data = json::object();
    // text/plain: the values as print shows them.
    lua_pushcfunction(L, values_text);
    for (int i = 0; i < n; ++i) lua_pushvalue(L, top + 1 + i);
    if (lua_pcall(L, n, 1, 0) == LUA_OK) data["text/plain"] = lua_tostring(L, -1);
    lua_pop(L, 1);
    // Richer forms of a culua value (cu.jupyter.mimebundle).
    if (n == 1 && luaL_getmetafield(L, top + 1, "__name") == LUA_TSTRING) {
      const std::string kind = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getglobal(L, "require");
      lua_pushliteral(L, "cu.jupyter");
      if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_getfield(L, -1, "mimebundle") == LUA_TFUNCTION) {
        lua_pushstring(L, kind.c_str());
        lua_pushvalue(L, top + 1);
        if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TTABLE) {
          lua_pushnil(L);
          while (lua_next(L, -2)) {
            if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING)
              data[lua_tostring(L, -2)] = lua_tostring(L, -1);
            lua_pop(L, 1);
          }
        }
      }
    }
    result = {{"data", data}};
  }
  lua_settop(L, top);
  return result;
}

json user_expression(lua_State* L, const std::string& expr) {
  bool ok = false;
  json r = run_cell(L, "return " + expr, false, &ok);
  if (!ok) {
    r["status"] = "error";
    return r;
  }
  return {{"status", "ok"},
          {"data", r.contains("data") ? r["data"] : json::object({{"text/plain", "nil"}})},
          {"metadata", json::object()}};
}

json complete(lua_State* L, const json& c) {
  const std::string code = text_of(c, "code");
  const size_t cursor = c.value("cursor_pos", code.size());
  size_t start = cursor;
  const std::vector<std::string> matches = cli::completions(L, code, cursor, &start);
  return {{"status", "ok"},
          {"matches", matches},
          {"cursor_start", start},
          {"cursor_end", std::min(cursor, code.size())},
          {"metadata", json::object()}};
}

json inspect(lua_State* L, const json& c) {
  const std::string code = text_of(c, "code");
  size_t cursor = std::min<size_t>(c.value("cursor_pos", code.size()), code.size());
  // The dotted name around the cursor: "cu.zeros", "a:sum" (as a.sum).
  auto is_name = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == ':';
  };
  size_t b = cursor, e = cursor;
  while (b > 0 && is_name(code[b - 1])) --b;
  while (e < code.size() && is_name(code[e])) ++e;
  std::string name = code.substr(b, e - b);
  for (char& ch : name) {
    if (ch == ':') ch = '.';
  }
  while (!name.empty() && name.back() == '.') name.pop_back();
  json reply = {
      {"status", "ok"}, {"found", false}, {"data", json::object()}, {"metadata", json::object()}};
  if (name.empty()) return reply;
  const int top = lua_gettop(L);
  const std::string chunk =
      "local v = " + name + "; if v == nil then return nil end; return cu.help(v, {text = true})";
  if (luaL_loadbuffer(L, chunk.data(), chunk.size(), "=inspect") == LUA_OK &&
      lua_pcall(L, 0, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
    reply["found"] = true;
    reply["data"] = {{"text/plain", lua_tostring(L, -1)}};
  }
  lua_settop(L, top);
  return reply;
}

json is_complete(lua_State* L, const json& c) {
  const std::string code = text_of(c, "code");
  const int top = lua_gettop(L);
  bool incomplete = false;
  const int status = cli::load_cell(L, code, &incomplete);
  lua_settop(L, top);
  if (status == LUA_OK) return {{"status", "complete"}};
  if (incomplete) return {{"status", "incomplete"}, {"indent", ""}};
  return {{"status", "invalid"}};
}

}  // namespace culua::detail::jupyter
