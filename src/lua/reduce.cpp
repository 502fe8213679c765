// Reductions: cu.sum(a [, opts]) and a:sum([opts]); likewise mean, max, min, prod, norm, argmax,
// argmin, and the Array API's statistics: var, std, any, all, nansum, nanmean, nanmax, nanmin,
// nanprod, nanvar, nanstd. opts: {axis=k (1-based; negative counts from the end) or a table of
// axes {1, 3} (not for norm/argmax/argmin), keepdims=bool, out=array, stream=s}, plus dtype= (sum,
// prod, nansum, nanprod) and correction= (ddof= as numpy's name; var, std, nanvar, nanstd). The
// result is an array in the input's location (0-d for full reductions); nothing synchronizes.
// argmax/argmin give 1-based indices.
#include <cmath>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/scan.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// The axis option at the top of the stack: an integer, or (when `several`) a sequence of them.
std::vector<int> check_axes(lua_State* L, int ndim, bool several) {
  if (lua_type(L, -1) != LUA_TTABLE) return {check_axis(L, -1, ndim)};
  if (!several) fail(ErrorKind::Type, "axis must be an integer (one axis), got table");
  const auto n = static_cast<lua_Integer>(luaL_len(L, -1));
  std::vector<int> axes;
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, -1, i);
    if (!lua_isinteger(L, -1)) {
      fail(ErrorKind::Type, "axis[{}] must be an integer, got {}", i, luaL_typename(L, -1));
    }
    const int ax = check_axis(L, -1, ndim);
    lua_pop(L, 1);
    if (seen[static_cast<size_t>(ax)]) {
      fail(ErrorKind::Value, "axis {} is repeated (axis[{}])", ax + 1, i);
    }
    seen[static_cast<size_t>(ax)] = true;
    axes.push_back(ax);
  }
  // No other keys: {axis = {1, x = 2}} is a mistake.
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > n) {
      lua_pop(L, 1);
      fail(ErrorKind::Value, "axis must be a sequence of integers {{1, 3}}");
    }
  }
  return axes;
}

constexpr bool has_dtype_option(ReduceOp op) {
  return op == ReduceOp::Sum || op == ReduceOp::Prod || op == ReduceOp::NanSum ||
         op == ReduceOp::NanProd;
}
constexpr bool has_correction_option(ReduceOp op) {
  return op == ReduceOp::Var || op == ReduceOp::Std || op == ReduceOp::NanVar ||
         op == ReduceOp::NanStd;
}
constexpr bool one_axis_only(ReduceOp op) {
  return op == ReduceOp::Norm || op == ReduceOp::Argmax || op == ReduceOp::Argmin;
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
  if constexpr (has_dtype_option(Op)) {
    check_options(L, 2, {"axis", "keepdims", "out", "stream", "dtype"});
  } else if constexpr (has_correction_option(Op)) {
    check_options(L, 2, {"axis", "keepdims", "out", "stream", "correction", "ddof"});
  } else {
    check_options(L, 2, {"axis", "keepdims", "out", "stream"});
  }
  ReduceOptions opt;
  if (get_option(L, 2, "axis")) {
    opt.axes =
        as_option(2, "axis", [&] { return check_axes(L, box->array.ndim(), !one_axis_only(Op)); });
    lua_pop(L, 1);
  }
  opt.keepdims = opt_boolean(L, 2, "keepdims", false);
  if constexpr (has_dtype_option(Op)) {
    if (get_option(L, 2, "dtype")) {
      opt.dtype = as_option(2, "dtype", [&] {
        const DType d = check_dtype(L, -1);
        if (d == DType::Bool) {
          fail(ErrorKind::Type, "dtype must be a numeric dtype ({} cannot accumulate in bool)",
               op_name(Op));
        }
        return d;
      });
      lua_pop(L, 1);
    }
  }
  if constexpr (has_correction_option(Op)) {
    const bool c = get_option(L, 2, "correction");
    if (c) lua_pop(L, 1);
    const bool d = get_option(L, 2, "ddof");
    if (d) lua_pop(L, 1);
    if (c && d) option_error(2, "ddof", ErrorKind::Value, "give correction or ddof, not both");
    if (c || d) {
      const char* key = c ? "correction" : "ddof";
      get_option(L, 2, key);
      if (lua_type(L, -1) != LUA_TNUMBER) {
        option_error(2, key, ErrorKind::Type,
                     fmt::format("number expected, got {}", luaL_typename(L, -1)));
      }
      const double v = lua_tonumber(L, -1);
      lua_pop(L, 1);
      if (!std::isfinite(v) || v < 0) {
        option_error(2, key, ErrorKind::Value,
                     fmt::format("must be a finite number >= 0, got {}", v));
      }
      opt.correction = v;
    }
  }
  const Array* out = opt_array(L, 2, "out");
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, out, stream);
  Array result = reduce(runtime(L), Op, box->array, opt, out, stream);
  if (out) {
    get_option(L, 2, "out");  // the caller's own out array
    return 1;
  }
  push_array(L, std::move(result));
  return 1;
}

// Scans: cu.cumulative_sum(a [, opts]) (the standard's: axis= required for arrays of more than
// one dimension), cu.cumulative_prod, and numpy's names cu.cumsum and cu.cumprod (without axis=,
// the array flattened). opts: {axis=k, dtype=, include_initial=bool, out=, stream=}.
template <ScanOp Op, bool Standard>
int l_scan(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TTABLE) {
    type_error(L, 2, "options table such as {axis=1}");
  }
  if (lua_gettop(L) > 2)
    arg_error(3, fmt::format("no value expected, got {}", luaL_typename(L, 3)));
  check_options(L, 2, {"axis", "dtype", "include_initial", "out", "stream"});
  ScanOptions opt;
  const int ndim = box->array.ndim();
  if (get_option(L, 2, "axis")) {
    opt.axis = as_option(2, "axis", [&] { return check_axis(L, -1, ndim); });
    lua_pop(L, 1);
  } else if (Standard && ndim > 1) {
    option_error(2, "axis", ErrorKind::Value,
                 fmt::format("required for a {}-d array (cu.cumsum flattens it, as numpy)", ndim));
  }
  if (get_option(L, 2, "dtype")) {
    opt.dtype = as_option(2, "dtype", [&] {
      const DType d = check_dtype(L, -1);
      if (d == DType::Bool) fail(ErrorKind::Type, "dtype must be a numeric dtype, got bool");
      return d;
    });
    lua_pop(L, 1);
  }
  opt.include_initial = opt_boolean(L, 2, "include_initial", false);
  const Array* out = opt_array(L, 2, "out");
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, out, stream);
  Array result = scan(runtime(L), Op, box->array, opt, out, stream);
  if (out) {
    get_option(L, 2, "out");
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
    {"var", entry<l_reduce<ReduceOp::Var>>},
    {"std", entry<l_reduce<ReduceOp::Std>>},
    {"any", entry<l_reduce<ReduceOp::Any>>},
    {"all", entry<l_reduce<ReduceOp::All>>},
    {"nansum", entry<l_reduce<ReduceOp::NanSum>>},
    {"nanmean", entry<l_reduce<ReduceOp::NanMean>>},
    {"nanmax", entry<l_reduce<ReduceOp::NanMax>>},
    {"nanmin", entry<l_reduce<ReduceOp::NanMin>>},
    {"nanprod", entry<l_reduce<ReduceOp::NanProd>>},
    {"nanvar", entry<l_reduce<ReduceOp::NanVar>>},
    {"nanstd", entry<l_reduce<ReduceOp::NanStd>>},
    {"cumulative_sum", entry<l_scan<ScanOp::Sum, true>>},
    {"cumulative_prod", entry<l_scan<ScanOp::Prod, true>>},
    {"cumsum", entry<l_scan<ScanOp::Sum, false>>},
    {"cumprod", entry<l_scan<ScanOp::Prod, false>>},
    {nullptr, nullptr},
};

}  // namespace

void register_reduce(lua_State* L) {
  luaL_setfuncs(L, kReductions, 0);
  add_array_methods(L, kReductions);
}

}  // namespace culua::detail::lua
