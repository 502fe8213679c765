// Placeholder: filled in by the issue-3 work.
#include "lua/binding.hpp"

namespace culua::lua {

void register_math(lua_State*) {}

}  // namespace culua::lua
