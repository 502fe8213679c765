// Reductions: cu.sum(a [, opts]) and a:sum([opts]); likewise mean, max, min, prod, norm, argmax and
// argmin. opts: {axis=k (1-based; negative counts from the end), keepdims=bool, out=array,
// stream=s}. The result is an array in the input's location (0-d for full reductions); nothing
// synchronizes. argmax/argmin give 1-based indices.
#include "core/reduce.hpp"
#include "core/error.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// A Lua axis (1..ndim, or -ndim..-1 from the end) as the core's 0-based axis.
int check_axis(lua_State* L, int idx, int ndim) {
  const int64_t k = check_integer(L, idx, "axis");
  if (k >= 1 && k <= ndim) return static_cast<int>(k - 1);
  if (k < 0 && k >= -int64_t{ndim}) return static_cast<int>(ndim + k);  // no -k: mininteger
  if (ndim == 0) {
    fail(ErrorKind::Index, "axis {} is out of range for a 0-d array (it has no axes)",
         lua_Integer(k));
  }
  if (k == 0) {
    fail(ErrorKind::Index, "axis 0 is out of range: axes start at 1 (1..{} for a {}-d array)", ndim,
         ndim);
  }
  fail(ErrorKind::Index, "axis {} is out of range for a {}-d array (axes 1..{}, or -{}..-1)",
       lua_Integer(k), ndim, ndim, ndim);
}

template <ReduceOp Op>
int l_reduce(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TTABLE) {
    type_error(L, 2, "options table such as {axis=1}");
  }
  if (lua_gettop(L) > 2)
    arg_error(3, fmt::format("no value expected, got {}", luaL_typename(L, 3)));
  check_options(L, 2, {"axis", "keepdims", "out", "stream"});
  std::optional<int> axis;
  if (get_option(L, 2, "axis")) {
    axis = as_option(2, "axis", [&] { return check_axis(L, -1, box->array.ndim()); });
    lua_pop(L, 1);
  }
  const bool keepdims = opt_boolean(L, 2, "keepdims", false);
  const Array* out = opt_array(L, 2, "out");
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, out, stream);
  Array result = reduce(runtime(L), Op, box->array, axis, keepdims, out, stream);
  if (out) {
    get_option(L, 2, "out");  // the caller's own out array
    return 1;
  }
  push_array(L, std::move(result));
  return 1;
}

const luaL_Reg kReductions[] = {
    {"sum", entry<l_reduce<ReduceOp::Sum>>},
    {"mean", entry<l_reduce<ReduceOp::Mean>>},
    {"max", entry<l_reduce<ReduceOp::Max>>},
    {"min", entry<l_reduce<ReduceOp::Min>>},
    {"prod", entry<l_reduce<ReduceOp::Prod>>},
    {"norm", entry<l_reduce<ReduceOp::Norm>>},
    {"argmax", entry<l_reduce<ReduceOp::Argmax>>},
    {"argmin", entry<l_reduce<ReduceOp::Argmin>>},
    {nullptr, nullptr},
};

}  // namespace

void register_reduce(lua_State* L) {
  luaL_setfuncs(L, kReductions, 0);
  add_array_methods(L, kReductions);
}

}  // namespace culua::detail::lua
