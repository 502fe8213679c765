// Lua values as bytes and back, for cu.mpi and distributed sweeps: nil, booleans, integers and
// floats (kept apart), strings, tables (any keys of these types, no cycles, at most 200 levels)
// and cu.Array values (dtype, shape, place and contents). Independent of MPI.
#pragma once

#include <lua.hpp>

#include <string>
#include <string_view>

namespace culua::detail::lua {

// The bytes of the value at idx. Strict (lenient = false): raises for functions, userdata other
// than arrays, threads and cycles, naming the place ("v.a[2] is a function"; `what` names the
// value). Lenient: such members are left out (sweep rows keep what can travel).
std::string pack_value(lua_State* L, int idx, const char* what, bool lenient = false);
// Pushes the value of bytes made by pack_value (arrays are made again, in the same place: device
// arrays on the current device). Raises for bytes it did not make.
void unpack_value(lua_State* L, std::string_view bytes);

}  // namespace culua::detail::lua
