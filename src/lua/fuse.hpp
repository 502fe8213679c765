// cu.fuse's pieces that cu.graph(fn, {fuse = true}) shares (src/lua/fuse.cpp).
#pragma once

#include <vector>

#include "fuse/plan.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

// The `scratch` option of argument `arg`'s table at `opts` (cu.fuse, cu.graph): a list of arrays
// whose values after the call do not matter. Pushes a copy of the list (nil when absent), after
// checking each entry is a live array.
void push_scratch_option(lua_State* L, int opts, int arg);

// The bytes of the arrays of a list pushed by push_scratch_option, at `idx` (nil: none). Raises
// when one has been freed since.
std::vector<fuse::Span> scratch_spans(lua_State* L, int idx);

}  // namespace culua::detail::lua
