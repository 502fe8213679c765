// cu.bench: nvbench's methodology from one Lua call.
#include "lua/binding.hpp"

namespace culua::lua {

void register_bench(lua_State*) {}

}  // namespace culua::lua
