// Opening the `cu` module in a Lua state.
#pragma once

#include <lua.hpp>

#include "core/runtime.hpp"

namespace culua::lua {

// Pushes the `cu` module bound to `rt`, registers it as package.loaded.cu and the embedded Lua
// modules (cu.*) in package.preload. `rt` must outlive the state: close the state first.
void open_cu(lua_State* L, Runtime& rt);

}  // namespace culua::lua
