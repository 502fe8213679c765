// Indexing a cu.Array with slices, boolean masks and integer arrays (manip.cpp), for array.cpp's
// __index and __newindex.
#pragma once

#include "lua/binding.hpp"

namespace culua::detail::lua {

// a[key] for a table (slices) or cu.Array key (mask, integer gather): pushes the result and
// returns true; false for other keys.
bool index_by(lua_State* L, const Array& a, int key);
// a[key] = value likewise; false for other keys.
bool assign_by(lua_State* L, const Array& a, int key, int value);

}  // namespace culua::detail::lua
