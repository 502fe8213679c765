// What the kernel's requests ask of the Lua state: running a cell and showing its values, user
// expressions, and the answers about code (completion, inspection, completeness). Knows nothing of
// sockets or messages beyond their JSON content.
#pragma once

#include <lua.hpp>

#include <nlohmann/json.hpp>
#include <string>

namespace culua::detail::jupyter {

using json = nlohmann::json;

// Runs a cell as the REPL would, its values shown as a notebook shows a cell's last expression.
// Sets *ok and returns, on success, {} or {data: mimebundle} (the values; none when `silent`),
// else {ename, evalue, traceback}. Leaves the stack as it found it.
json run_cell(lua_State* L, const std::string& code, bool silent, bool* ok);

// One entry of an execute_reply's user_expressions.
json user_expression(lua_State* L, const std::string& expr);

// The contents of complete_reply, inspect_reply and is_complete_reply for a request's content.
json complete(lua_State* L, const json& request);
json inspect(lua_State* L, const json& request);
json is_complete(lua_State* L, const json& request);

}  // namespace culua::detail::jupyter
