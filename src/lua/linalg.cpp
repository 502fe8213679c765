// Matrix products: cu.matmul and cu.dot (also as methods a:matmul(b), a:dot(b)).
#include "core/ops/linalg.hpp"
#include "core/base/error.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

std::optional<Scalar> opt_scalar(lua_State* L, int opts, const char* key) {
  if (!get_option(L, opts, key)) return std::nullopt;
  if (lua_type(L, -1) == LUA_TBOOLEAN || !is_scalar(L, -1)) {
    option_error(opts, key, ErrorKind::Type,
                 fmt::format("number or cu.complex expected, got {}", luaL_typename(L, -1)));
  }
  const Scalar v = check_scalar(L, -1);
  lua_pop(L, 1);
  return v;
}

// Returns out (the same userdata) when given, else the new array.
int push_result(lua_State* L, int opts, const Array* out, Array result) {
  if (out) {
    get_option(L, opts, "out");
    return 1;
  }
  push_array(L, std::move(result));
  return 1;
}

int l_matmul(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& b = check_array(L, 2);
  check_options(L, 3, {"out", "alpha", "beta", "ta", "tb", "tf32", "stream"});
  if (lua_gettop(L) > 3)
    arg_error(4, fmt::format("no value expected, got {}", luaL_typename(L, 4)));
  MatmulOptions o;
  o.out = opt_array(L, 3, "out");
  if (auto alpha = opt_scalar(L, 3, "alpha")) o.alpha = *alpha;
  o.beta = opt_scalar(L, 3, "beta");
  o.ta = opt_boolean(L, 3, "ta", false);
  o.tb = opt_boolean(L, 3, "tb", false);
  o.tf32 = opt_boolean(L, 3, "tf32", false);
  o.stream = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, o.out, o.stream);
  Array result = matmul(runtime(L), a, b, o);
  return push_result(L, 3, o.out, std::move(result));
}

int l_dot(lua_State* L) {
  Array& x = check_array(L, 1);
  Array& y = check_array(L, 2);
  check_options(L, 3, {"out", "stream"});
  if (lua_gettop(L) > 3)
    arg_error(4, fmt::format("no value expected, got {}", luaL_typename(L, 4)));
  const Array* out = opt_array(L, 3, "out");
  Stream* s = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, out, s);
  Array result = dot(runtime(L), x, y, out, s);
  return push_result(L, 3, out, std::move(result));
}

const luaL_Reg kFunctions[] = {
    {"matmul", entry<l_matmul>},
    {"dot", entry<l_dot>},
    {nullptr, nullptr},
};

}  // namespace

void register_linalg(lua_State* L) {
  luaL_setfuncs(L, kFunctions, 0);
  add_array_methods(L, kFunctions);
}

}  // namespace culua::detail::lua
