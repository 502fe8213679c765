// culua as a Jupyter kernel (culua --jupyter CONNECTION_FILE): the messaging protocol 5.3 over
// ZeroMQ, messages signed with HMAC-SHA256, one Lua state whose globals persist between cells
// (docs/guide/jupyter.md).
#pragma once

#include <lua.hpp>

#include <string>

namespace culua::detail::jupyter {

// Serves the kernel whose sockets and key `connection_file` describes until a shutdown request;
// the state `L` holds the cu module. Returns the process's exit status (0 after a shutdown; 1
// when the connection file is unusable, with the reason on stderr).
int run_kernel(lua_State* L, const std::string& connection_file);

// Writes the kernelspec (kernel.json naming `culua_path`) where Jupyter finds it: `where` is
// "user" (~/.local/share/jupyter or $JUPYTER_DATA_DIR), a prefix ("<P>/share/jupyter"), or ""
// (/usr/local/share/jupyter). Returns the folder written; throws Error(Value) when it cannot.
std::string install_kernelspec(const std::string& culua_path, bool user, const std::string& prefix);

}  // namespace culua::detail::jupyter
