// Sorting, searching and sets (core/ops/sort.hpp): cu.sort, cu.argsort, cu.nonzero,
// cu.count_nonzero, cu.searchsorted, cu.unique_values, cu.unique_counts, cu.unique_inverse,
// cu.unique_all, and the one-argument cu.where(cond) (= cu.nonzero). Each is also an array method
// (a:sort{...}). Indices are 1-based int64 arrays; axes are 1-based, negative ones count from the
// end.
#include <vector>

#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/ops.hpp"
#include "core/ops/sort.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// Argument 1: an array (the receiver of a method).
Array& first_array(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  return box->array;
}

// The options table at `idx` (absent or nil: none) with the keys `allowed`; no argument after it.
void check_opts(lua_State* L, int idx, std::initializer_list<const char*> allowed,
                const char* example) {
  if (!lua_isnoneornil(L, idx) && lua_type(L, idx) != LUA_TTABLE) type_error(L, idx, example);
  if (lua_gettop(L) > idx) {
    arg_error(idx + 1, fmt::format("no value expected, got {}", luaL_typename(L, idx + 1)));
  }
  check_options(L, idx, allowed);
}

// sort/argsort: {axis = -1, descending = false, stable = true, stream = s}.
template <bool Positions>
int l_sort(lua_State* L) {
  const Array& a = first_array(L);
  check_opts(L, 2, {"axis", "descending", "stable", "stream"}, "options table such as {axis=1}");
  int axis = a.ndim() - 1;
  if (get_option(L, 2, "axis")) {
    axis = as_option(2, "axis", [&] { return check_axis(L, -1, a.ndim()); });
    lua_pop(L, 1);
  } else if (a.ndim() == 0) {
    arg_error(1,
              "an array of at least 1 dimension expected, got a 0-d array (nothing to sort along)",
              ErrorKind::Index);
  }
  const bool descending = opt_boolean(L, 2, "descending", false);
  opt_boolean(L, 2, "stable", true);  // every sort is stable
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  Runtime& rt = runtime(L);
  push_array(L, Positions ? argsort(rt, a, axis, descending, stream)
                          : sort(rt, a, axis, descending, stream));
  return 1;
}

// A table {a1, a2, ...} of arrays.
void push_array_list(lua_State* L, std::vector<Array> arrays) {
  lua_createtable(L, static_cast<int>(arrays.size()), 0);
  for (size_t i = 0; i < arrays.size(); ++i) {
    push_array(L, std::move(arrays[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

int l_nonzero(lua_State* L) {
  const Array& a = first_array(L);
  check_opts(L, 2, {"stream"}, "options table such as {stream=s}");
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  if (a.ndim() == 0) {
    arg_error(1, "an array of at least 1 dimension expected, got a 0-d array");
  }
  push_array_list(L, nonzero(runtime(L), a, stream));
  return 1;
}

int l_count_nonzero(lua_State* L) {
  const Array& a = first_array(L);
  check_opts(L, 2, {"axis", "keepdims", "stream"}, "options table such as {axis=1}");
  std::vector<int> axes;
  bool all = true;
  if (get_option(L, 2, "axis")) {
    all = false;
    if (lua_istable(L, -1)) {
      const lua_Integer count = luaL_len(L, -1);
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_rawgeti(L, -1, i);
        const int ax = as_option(2, "axis", [&] { return check_axis(L, -1, a.ndim()); });
        lua_pop(L, 1);
        for (int seen : axes) {
          if (seen == ax) option_error(2, "axis", ErrorKind::Value, "axis repeated");
        }
        axes.push_back(ax);
      }
    } else {
      axes.push_back(as_option(2, "axis", [&] { return check_axis(L, -1, a.ndim()); }));
    }
    lua_pop(L, 1);
  }
  const bool keepdims = opt_boolean(L, 2, "keepdims", false);
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  push_array(L, count_nonzero(runtime(L), a, axes, all, keepdims, stream));
  return 1;
}

int l_searchsorted(lua_State* L) {
  const Array& x1 = first_array(L);
  Runtime& rt = runtime(L);
  Array scalar_x2;
  const Array* x2 = nullptr;
  if (ArrayBox* b = test_array(L, 2)) {
    b->array.check_alive("argument 'x2'");
    x2 = &b->array;
  } else if (is_scalar(L, 2)) {
    // A Lua number: a 0-d array of x1's kind (a weak scalar), where x1 is.
    const Scalar s = check_scalar(L, 2);
    const Location loc = is_host(x1.location()) ? Location::Pageable : Location::Device;
    scalar_x2 = full(rt, Shape{}, promote_with_scalar(x1.dtype(), s), s, loc,
                     loc == Location::Device ? &rt.stream_for_device(x1.device()) : nullptr);
    x2 = &scalar_x2;
  } else {
    type_error(L, 2, "cu.Array or number");
  }
  check_opts(L, 3, {"side", "sorter", "stream"}, "options table such as {side=\"right\"}");
  bool right = false;
  if (get_option(L, 3, "side")) {
    const char* side = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    if (!side || (std::string_view(side) != "left" && std::string_view(side) != "right")) {
      option_error(3, "side", ErrorKind::Value,
                   fmt::format("\"left\" or \"right\" expected, got {}",
                               side ? fmt::format("\"{}\"", side) : luaL_typename(L, -1)));
    }
    right = std::string_view(side) == "right";
    lua_pop(L, 1);
  }
  const Array* sorter = opt_array(L, 3, "sorter");
  Stream* stream = opt_stream(L, 3);
  check_one_device({{1, &x1}, {2, x2}}, 3, nullptr, stream);  // the sorter: checked in core
  Array result;
  try {
    result = searchsorted(rt, x1, *x2, right, sorter, stream);
  } catch (const Error& e) {
    const std::string_view m = e.what();
    if (m.rfind("x1 ", 0) == 0) throw ArgumentError(1, e.what(), e.kind());
    if (m.rfind("x2 ", 0) == 0) throw ArgumentError(2, e.what(), e.kind());
    if (m.rfind("the sorter", 0) == 0) option_error(3, "sorter", e.kind(), e.what());
    throw;
  }
  push_array(L, std::move(result));
  return 1;
}

enum class UniqueKind { Values, Counts, Inverse, All };

template <UniqueKind K>
int l_unique(lua_State* L) {
  const Array& a = first_array(L);
  check_opts(L, 2, {"stream"}, "options table such as {stream=s}");
  Stream* stream = opt_stream(L, 2);
  check_one_device(L, {1}, 2, nullptr, stream);
  const bool counts = K == UniqueKind::Counts || K == UniqueKind::All;
  const bool inverse = K == UniqueKind::Inverse || K == UniqueKind::All;
  const bool indices = K == UniqueKind::All;
  UniqueResult r = unique(runtime(L), a, counts, indices, inverse, stream);
  if constexpr (K == UniqueKind::Values) {
    push_array(L, std::move(r.values));
    return 1;
  }
  lua_createtable(L, 0, 4);
  push_array(L, std::move(r.values));
  lua_setfield(L, -2, "values");
  if (r.indices) {
    push_array(L, std::move(*r.indices));
    lua_setfield(L, -2, "indices");
  }
  if (r.inverse) {
    push_array(L, std::move(*r.inverse));
    lua_setfield(L, -2, "inverse_indices");
  }
  if (r.counts) {
    push_array(L, std::move(*r.counts));
    lua_setfield(L, -2, "counts");
  }
  return 1;
}

// cu.where(cond) is cu.nonzero(cond); with more arguments, the element-wise where (upvalue 1),
// called in this frame so that its argument errors still name 'where'.
int l_where(lua_State* L) {
  if (lua_gettop(L) == 1) return l_nonzero(L);
  if (lua_CFunction f = lua_tocfunction(L, lua_upvalueindex(1))) return f(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  call_lua(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

const luaL_Reg kSort[] = {
    {"sort", entry<l_sort<false>>},
    {"argsort", entry<l_sort<true>>},
    {"nonzero", entry<l_nonzero>},
    {"count_nonzero", entry<l_count_nonzero>},
    {"searchsorted", entry<l_searchsorted>},
    {"unique_values", entry<l_unique<UniqueKind::Values>>},
    {"unique_counts", entry<l_unique<UniqueKind::Counts>>},
    {"unique_inverse", entry<l_unique<UniqueKind::Inverse>>},
    {"unique_all", entry<l_unique<UniqueKind::All>>},
    {nullptr, nullptr},
};

}  // namespace

void register_sort(lua_State* L) {
  luaL_setfuncs(L, kSort, 0);
  add_array_methods(L, kSort);
  lua_getfield(L, -1, "where");  // the element-wise where (register_math ran before)
  lua_pushcclosure(L, entry<l_where>, 1);
  lua_setfield(L, -2, "where");
}

}  // namespace culua::detail::lua
