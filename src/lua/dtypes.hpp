// The dtype arguments of the bindings: the trailing "[dtype] [options]" of the functions that make
// arrays (cu.empty, cu.zeros, cu.full, cu.array, cu.arange, cu.rand, their cu.host variants, ...),
// read in one place for array.cpp and random.cpp. The data-type functions (cu.can_cast, ...) are
// registered by register_dtypes (binding.hpp).
#pragma once

#include <lua.hpp>

#include <initializer_list>

#include "core/model/dtype.hpp"

namespace culua::detail::lua {

struct DTypeAndOptions {
  DType dtype = DType::F32;
  bool has_dtype = false;  // given as an argument or as the option dtype=
  int opts = 0;            // stack index of the options table, 0 when absent
};

// Reads the arguments from idx to the top: a dtype string (or nil: the default), then an options
// table (or nil) whose keys must be in `allowed`; its dtype= may stand for the dtype argument but
// not repeat it. Raises for any other value and for any argument after them.
DTypeAndOptions check_dtype_and_options(lua_State* L, int idx,
                                        std::initializer_list<const char*> allowed);

}  // namespace culua::detail::lua
