// The Array API standard's manipulation, creation, indexing and small linear algebra functions
// (core/ops/manip.hpp, core/ops/gather.hpp): cu.concat, cu.stack, cu.flip, cu.take, cu.eye,
// cu.tensordot,
// ..., their methods (a:flip()), a.mT, and indexing with slices ({lo, hi, step}), boolean masks and
// integer arrays. Axes and index values are 1-based, negative ones count from the end.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "core/base/error.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/gather.hpp"
#include "core/ops/manip.hpp"
#include "core/ops/ops.hpp"
#include "lua/indexing.hpp"

namespace culua::detail::lua {

namespace {

// A Lua axis (1..ndim, or -ndim..-1) as a 0-based one; `ndim` is the count of valid positions.
int to_axis(lua_State* L, int idx, int ndim) {
  return check_axis(L, idx, ndim, true);
}

// An integer or a table of them (the value at idx) as 0-based axes.
std::vector<int> to_axes(lua_State* L, int idx, int ndim) {
  idx = lua_absindex(L, idx);
  std::vector<int> axes;
  if (lua_type(L, idx) == LUA_TTABLE) {
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, idx, i);
      axes.push_back(to_axis(L, -1, ndim));
      lua_pop(L, 1);
    }
  } else {
    axes.push_back(to_axis(L, idx, ndim));
  }
  return axes;
}

// An integer or a table of integers (the value at idx).
std::vector<int64_t> to_integers(lua_State* L, int idx, const char* what) {
  idx = lua_absindex(L, idx);
  std::vector<int64_t> v;
  if (lua_type(L, idx) == LUA_TTABLE) {
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, idx, i);
      v.push_back(check_integer(L, -1, what));
      lua_pop(L, 1);
    }
  } else {
    v.push_back(check_integer(L, idx, what));
  }
  return v;
}

void no_more(lua_State* L, int idx) {
  if (lua_gettop(L) >= idx)
    arg_error(idx, fmt::format("no value expected, got {}", luaL_typename(L, idx)));
}

// The options table at idx (absent or nil allowed), checked against `allowed`; no arguments after.
void options_at(lua_State* L, int idx, std::initializer_list<const char*> allowed) {
  if (!lua_isnoneornil(L, idx) && lua_type(L, idx) != LUA_TTABLE)
    type_error(L, idx, "options table");
  no_more(L, idx + 1);
  check_options(L, idx, allowed);
}

// opts.axis as a 0-based axis (nullopt when absent or false).
std::optional<int> opt_axis(lua_State* L, int opts, int ndim) {
  if (!get_option(L, opts, "axis")) return std::nullopt;
  if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    return std::nullopt;
  }
  const int a = as_option(opts, "axis", [&] { return to_axis(L, -1, ndim); });
  lua_pop(L, 1);
  return a;
}

std::optional<std::vector<int>> opt_axes(lua_State* L, int opts, int ndim) {
  if (!get_option(L, opts, "axis")) return std::nullopt;
  std::vector<int> a = as_option(opts, "axis", [&] { return to_axes(L, -1, ndim); });
  lua_pop(L, 1);
  return a;
}

int64_t opt_int(lua_State* L, int opts, const char* key, int64_t fallback) {
  if (!get_option(L, opts, key)) return fallback;
  const int64_t v = as_option(opts, key, [&] { return check_integer(L, -1, key); });
  lua_pop(L, 1);
  return v;
}

// The arrays of a table argument (cu.concat({a, b})).
std::vector<Array> array_list(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) type_error(L, idx, "table of arrays");
  std::vector<Array> arrays;
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, i);
    ArrayBox* box = test_array(L, -1);
    if (!box) {
      arg_error(idx,
                fmt::format("element {} of the table: cu.Array expected, got {}", i,
                            luaL_typename(L, -1)),
                ErrorKind::Type);
    }
    box->array.check_alive();
    arrays.push_back(box->array);
    lua_pop(L, 1);
  }
  if (arrays.empty()) arg_error(idx, "table of arrays expected, got an empty table");
  return arrays;
}

// The arrays from idx on (cu.broadcast_arrays(a, b, c)); returns the index after them.
int array_args(lua_State* L, int idx, std::vector<Array>& arrays) {
  while (ArrayBox* box = test_array(L, idx)) {
    box->array.check_alive();
    arrays.push_back(box->array);
    ++idx;
  }
  if (arrays.empty()) type_error(L, idx, kArrayType);
  return idx;
}

int push_arrays(lua_State* L, std::vector<Array> arrays) {
  check_stack(L, static_cast<int>(std::min<size_t>(arrays.size(), 1 << 20)) + 1,
              "too many results");
  for (Array& a : arrays) push_array(L, std::move(a));
  return static_cast<int>(arrays.size());
}

// --- manipulation ----------------------------------------------------------------------------

int l_broadcast_to(lua_State* L) {
  Array& a = check_array(L, 1);
  const Shape s = check_shape(L, 2);
  no_more(L, 3);
  push_array(L, as_argument(2, [&] { return broadcast_to(a, s); }));
  return 1;
}

int l_broadcast_arrays(lua_State* L) {
  std::vector<Array> arrays;
  no_more(L, array_args(L, 1, arrays));
  return push_arrays(L, broadcast_arrays(arrays));
}

int l_concat(lua_State* L) {
  const std::vector<Array> arrays = array_list(L, 1);
  options_at(L, 2, {"axis", "stream"});
  std::optional<int> axis = 0;
  if (get_option(L, 2, "axis")) {
    lua_pop(L, 1);
    axis = opt_axis(L, 2, arrays[0].ndim());
  }
  Stream* s = opt_stream(L, 2);
  push_array(L, concat(runtime(L), arrays, axis, s));
  return 1;
}

int l_stack(lua_State* L) {
  const std::vector<Array> arrays = array_list(L, 1);
  options_at(L, 2, {"axis", "stream"});
  const int axis = opt_axis(L, 2, arrays[0].ndim() + 1).value_or(0);
  push_array(L, stack(runtime(L), arrays, axis, opt_stream(L, 2)));
  return 1;
}

int l_unstack(lua_State* L) {
  Array& a = check_array(L, 1);
  options_at(L, 2, {"axis"});
  const int axis = opt_axis(L, 2, a.ndim()).value_or(0);
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot unstack a 0-d array");
  return push_arrays(L, unstack(a, axis));
}

// f(a, axis) or f(a, {axis=}) for expand_dims; `slots` is the count of valid positions.
int axis_argument(lua_State* L, const Array& a, int slots, int fallback) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    no_more(L, 3);
    return as_argument(2, [&] { return to_axis(L, 2, slots); });
  }
  options_at(L, 2, {"axis"});
  (void)a;
  return opt_axis(L, 2, slots).value_or(fallback);
}

int l_expand_dims(lua_State* L) {
  Array& a = check_array(L, 1);
  const int axis = axis_argument(L, a, a.ndim() + 1, 0);
  push_array(L, expand_dims(a, axis));
  return 1;
}

// f(a), f(a, axes) or f(a, {axis = axes}): axes as an integer or a table.
std::optional<std::vector<int>> axes_argument(lua_State* L, const Array& a) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    no_more(L, 3);
    return as_argument(2, [&] { return to_axes(L, 2, a.ndim()); });
  }
  options_at(L, 2, {"axis"});
  return opt_axes(L, 2, a.ndim());
}

int l_squeeze(lua_State* L) {
  Array& a = check_array(L, 1);
  const auto axes = axes_argument(L, a);
  push_array(L, squeeze(a, axes.value_or(std::vector<int>{}), !axes));
  return 1;
}

int l_flip(lua_State* L) {
  Array& a = check_array(L, 1);
  const auto axes = axes_argument(L, a);
  if (axes && axes->empty()) {
    push_array(L, a);
    return 1;
  }
  push_array(L, flip(a, axes.value_or(std::vector<int>{})));
  return 1;
}

int l_permute_dims(lua_State* L) {
  Array& a = check_array(L, 1);
  if (lua_type(L, 2) != LUA_TTABLE) type_error(L, 2, "table of axes");
  no_more(L, 3);
  const std::vector<int> axes = as_argument(2, [&] { return to_axes(L, 2, a.ndim()); });
  push_array(L, as_argument(2, [&] { return permute_dims(a, axes); }));
  return 1;
}

int l_moveaxis(lua_State* L) {
  Array& a = check_array(L, 1);
  no_more(L, 4);
  const std::vector<int> src = as_argument(2, [&] { return to_axes(L, 2, a.ndim()); });
  const std::vector<int> dst = as_argument(3, [&] { return to_axes(L, 3, a.ndim()); });
  push_array(L, moveaxis(a, src, dst));
  return 1;
}

int l_matrix_transpose(lua_State* L) {
  Array& a = check_array(L, 1);
  no_more(L, 2);
  push_array(L, matrix_transpose(a));
  return 1;
}

// cu.reshape(a, shape [, opts]), also the method a:reshape(shape [, opts]) and a:reshape(2, 3).
int l_reshape(lua_State* L) {
  Array& a = check_array(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    const Shape s = check_shape_args(L, 2);
    push_array(L, reshape(runtime(L), a, s));
    return 1;
  }
  if (lua_type(L, 2) != LUA_TTABLE) type_error(L, 2, "shape table");
  const Shape requested = check_shape_args(L, 2);
  options_at(L, 3, {"copy", "stream"});
  Stream* s = opt_stream(L, 3);
  const Shape shape =
      as_argument(2, [&] { return resolve_reshape(requested, a.size(), a.shape()); });
  std::optional<bool> copy_opt;
  if (get_option(L, 3, "copy")) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      option_error(3, "copy", ErrorKind::Type,
                   fmt::format("boolean expected, got {}", luaL_typename(L, -1)));
    copy_opt = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
  }
  if (copy_opt && *copy_opt) {
    Array c = clone(runtime(L), a, s);
    push_array(L, c.with_layout(c.layout().reshaped(shape)));
    return 1;
  }
  if (copy_opt && !*copy_opt && !a.is_contiguous()) {
    option_error(3, "copy", ErrorKind::Value,
                 "false, but this strided array cannot be reshaped without a copy");
  }
  push_array(L, reshape(runtime(L), a, shape, s));
  return 1;
}

int l_roll(lua_State* L) {
  Array& a = check_array(L, 1);
  const std::vector<int64_t> shifts = as_argument(2, [&] { return to_integers(L, 2, "shift"); });
  options_at(L, 3, {"axis", "stream"});
  const std::vector<int> axes = opt_axes(L, 3, a.ndim()).value_or(std::vector<int>{});
  push_array(L,
             as_argument(2, [&] { return roll(runtime(L), a, shifts, axes, opt_stream(L, 3)); }));
  return 1;
}

int l_repeat(lua_State* L) {
  Array& a = check_array(L, 1);
  std::vector<int64_t> repeats;
  if (ArrayBox* r = test_array(L, 2)) {
    r->array.check_alive();
    if (!is_integer(r->array.dtype()) || r->array.ndim() > 1)
      arg_error(2,
                fmt::format("repeats: a 1-D integer array expected, got a {}-d {} array",
                            r->array.ndim(), name(r->array.dtype())),
                ErrorKind::Type);
    // u64 counts are read as they are: from 2^63 up, converted to i64 they would wrap to negative
    // counts and be reported so.
    const bool u64 = r->array.dtype() == DType::U64;
    const Array c = astype(runtime(L), r->array, u64 ? DType::U64 : DType::I64);
    const std::vector<unsigned char> bytes = read_contiguous(runtime(L), c);
    repeats.resize(static_cast<size_t>(c.size()));
    if (!repeats.empty()) std::memcpy(repeats.data(), bytes.data(), bytes.size());
    for (const int64_t v : repeats) {
      if (u64 && v < 0) {
        arg_error(2, fmt::format("repeats: {} is too large (at most {})", static_cast<uint64_t>(v),
                                 std::numeric_limits<int64_t>::max()));
      }
    }
  } else {
    repeats = as_argument(2, [&] { return to_integers(L, 2, "repeats"); });
    if (repeats.empty()) arg_error(2, "repeats expected, got an empty table");
  }
  options_at(L, 3, {"axis", "stream"});
  const std::optional<int> axis = opt_axis(L, 3, a.ndim());
  push_array(
      L, as_argument(2, [&] { return repeat(runtime(L), a, repeats, axis, opt_stream(L, 3)); }));
  return 1;
}

int l_tile(lua_State* L) {
  Array& a = check_array(L, 1);
  const std::vector<int64_t> reps = as_argument(2, [&] { return to_integers(L, 2, "reps"); });
  options_at(L, 3, {"stream"});
  push_array(L, as_argument(2, [&] { return tile(runtime(L), a, reps, opt_stream(L, 3)); }));
  return 1;
}

// --- creation --------------------------------------------------------------------------------

// f(a [, value] [, dtype] [, {dtype=, stream=}]) -> an array of a's shape, location and device.
template <int Kind>  // 0 empty, 1 zeros, 2 ones, 3 full
int l_like(lua_State* L) {
  Array& a = check_array(L, 1);
  int idx = 2;
  Scalar value = Scalar::integer(Kind == 2 ? 1 : 0);
  if constexpr (Kind == 3) {
    value = check_scalar(L, 2);
    idx = 3;
  }
  DType dtype = a.dtype();
  bool has_dtype = false;
  if (lua_type(L, idx) == LUA_TSTRING) {
    dtype = check_dtype(L, idx);
    has_dtype = true;
    ++idx;
  }
  options_at(L, idx, {"dtype", "stream"});
  if (get_option(L, idx, "dtype")) {
    if (has_dtype)
      option_error(idx, "dtype", ErrorKind::Value, "the dtype is also given as an argument");
    dtype = as_option(idx, "dtype", [&] { return check_dtype(L, -1); });
    lua_pop(L, 1);
  }
  Stream* s = opt_stream(L, idx);
  Runtime& rt = runtime(L);
  const bool host = is_host(a.location());
  if (host && s) option_error(idx, "stream", ErrorKind::Value, "a host array takes no stream");
  std::optional<DeviceSelection> selected;
  if (!host && !s) selected.emplace(rt, a.device());
  ArrayBox* box = new_array(L);
  if (Kind == 0 && dtype != DType::Bool) {
    box->array = empty(rt, a.shape(), dtype, a.location(), s);
  } else {
    box->array = full(rt, a.shape(), dtype, value, a.location(), s);
  }
  return 1;
}

int l_eye(lua_State* L) {
  const int64_t n = as_argument(1, [&] { return check_integer(L, 1, "n_rows"); });
  int idx = 2;
  int64_t m = n;
  if (lua_type(L, 2) == LUA_TNUMBER) {
    m = as_argument(2, [&] { return check_integer(L, 2, "n_cols"); });
    idx = 3;
  }
  DType dtype = DType::F32;
  bool has_dtype = false;
  if (lua_type(L, idx) == LUA_TSTRING) {
    dtype = check_dtype(L, idx);
    has_dtype = true;
    ++idx;
  }
  options_at(L, idx, {"k", "dtype", "stream"});
  if (get_option(L, idx, "dtype")) {
    if (has_dtype)
      option_error(idx, "dtype", ErrorKind::Value, "the dtype is also given as an argument");
    dtype = as_option(idx, "dtype", [&] { return check_dtype(L, -1); });
    lua_pop(L, 1);
  }
  const int64_t k = opt_int(L, idx, "k", 0);
  if (n < 0) arg_error(1, fmt::format("n_rows must not be negative, got {}", n));
  if (m < 0) arg_error(2, fmt::format("n_cols must not be negative, got {}", m));
  push_array(L, eye(runtime(L), n, m, k, dtype, Location::Device, opt_stream(L, idx)));
  return 1;
}

template <bool Lower>
int l_tri(lua_State* L) {
  Array& a = check_array(L, 1);
  options_at(L, 2, {"k", "stream"});
  const int64_t k = opt_int(L, 2, "k", 0);
  push_array(L, triangle(runtime(L), a, k, Lower, opt_stream(L, 2)));
  return 1;
}

int l_meshgrid(lua_State* L) {
  std::vector<Array> arrays;
  const int idx = array_args(L, 1, arrays);
  options_at(L, idx, {"indexing", "stream"});
  bool ij = false;
  if (get_option(L, idx, "indexing")) {
    const char* v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (std::strcmp(v, "ij") == 0) {
      ij = true;
    } else if (std::strcmp(v, "xy") != 0) {
      option_error(
          idx, "indexing", ErrorKind::Value,
          fmt::format("\"xy\" or \"ij\" expected, got {}", luaL_tolstring(L, -1, nullptr)));
    }
    lua_pop(L, 1);
  }
  return push_arrays(L, meshgrid(runtime(L), arrays, ij, opt_stream(L, idx)));
}

int l_asarray(lua_State* L) {
  arg_any(L, 1);
  int idx = 2;
  DType dtype = DType::F32;
  bool has_dtype = false;
  if (lua_type(L, 2) == LUA_TSTRING) {
    dtype = check_dtype(L, 2);
    has_dtype = true;
    idx = 3;
  }
  options_at(L, idx, {"dtype", "copy", "stream"});
  if (get_option(L, idx, "dtype")) {
    if (has_dtype)
      option_error(idx, "dtype", ErrorKind::Value, "the dtype is also given as an argument");
    dtype = as_option(idx, "dtype", [&] { return check_dtype(L, -1); });
    has_dtype = true;
    lua_pop(L, 1);
  }
  std::optional<bool> copy_opt;
  if (get_option(L, idx, "copy")) {
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      option_error(idx, "copy", ErrorKind::Type,
                   fmt::format("boolean expected, got {}", luaL_typename(L, -1)));
    copy_opt = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
  }
  Stream* s = opt_stream(L, idx);
  if (ArrayBox* src = test_array(L, 1)) {
    Array& a = src->array;
    a.check_alive();
    const bool same = !has_dtype || dtype == a.dtype();
    if (same && !(copy_opt && *copy_opt)) {
      lua_settop(L, 1);
      return 1;
    }
    if (copy_opt && !*copy_opt) {
      option_error(
          idx, "copy", ErrorKind::Value,
          fmt::format("false, but converting {} to {} needs a copy", name(a.dtype()), name(dtype)));
    }
    push_array(L, astype(runtime(L), a, same ? a.dtype() : dtype, s));
    return 1;
  }
  if (copy_opt && !*copy_opt)
    option_error(idx, "copy", ErrorKind::Value,
                 "false, but a Lua value needs a copy to the device");
  // Lua values: as cu.array does.
  lua_getfield(L, lua_upvalueindex(1), "array");
  lua_pushvalue(L, 1);
  int nargs = 1;
  if (has_dtype) {
    const auto n = name(dtype);
    lua_pushlstring(L, n.data(), n.size());
    ++nargs;
  }
  if (s) {
    lua_newtable(L);
    get_option(L, idx, "stream");
    lua_setfield(L, -2, "stream");
    ++nargs;
  }
  call_lua(L, nargs, 1);
  return 1;
}

// --- indexing and linear algebra -------------------------------------------------------------

int l_take(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& idx = check_array(L, 2);
  options_at(L, 3, {"axis", "stream"});
  const std::optional<int> axis = opt_axis(L, 3, a.ndim());
  Stream* s = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, nullptr, s);
  push_array(L, as_argument(2, [&] { return take(runtime(L), a, idx, axis, s); }));
  return 1;
}

int l_take_along_axis(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& idx = check_array(L, 2);
  options_at(L, 3, {"axis", "stream"});
  const int axis = opt_axis(L, 3, a.ndim()).value_or(a.ndim() - 1);
  Stream* s = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, nullptr, s);
  push_array(L, as_argument(2, [&] { return take_along_axis(runtime(L), a, idx, axis, s); }));
  return 1;
}

int l_vecdot(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& b = check_array(L, 2);
  options_at(L, 3, {"axis", "stream"});
  const Shape s = as_argument(2, [&] { return broadcast_shapes(a.shape(), b.shape()); });
  const int axis = opt_axis(L, 3, s.ndim).value_or(s.ndim - 1);
  Stream* st = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, nullptr, st);
  push_array(L, vecdot(runtime(L), a, b, axis, st));
  return 1;
}

int l_outer(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& b = check_array(L, 2);
  options_at(L, 3, {"stream"});
  Stream* s = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, nullptr, s);
  push_array(L, outer(runtime(L), a, b, s));
  return 1;
}

int l_tensordot(lua_State* L) {
  Array& a = check_array(L, 1);
  Array& b = check_array(L, 2);
  options_at(L, 3, {"axes", "stream"});
  std::vector<int> aa, ab;
  if (get_option(L, 3, "axes")) {
    as_option(3, "axes", [&] {
      if (lua_type(L, -1) == LUA_TNUMBER) {
        const int64_t n = check_integer(L, -1, "axes");
        if (n < 0 || n > a.ndim() || n > b.ndim())
          fail(ErrorKind::Value, "{} axes to contract, but the arrays have {} and {} dimensions", n,
               a.ndim(), b.ndim());
        for (int64_t i = 0; i < n; ++i) {
          aa.push_back(a.ndim() - static_cast<int>(n) + static_cast<int>(i));
          ab.push_back(static_cast<int>(i));
        }
      } else if (lua_type(L, -1) == LUA_TTABLE && lua_rawlen(L, -1) == 2) {
        lua_rawgeti(L, -1, 1);
        aa = to_axes(L, -1, a.ndim());
        lua_rawgeti(L, -2, 2);
        ab = to_axes(L, -1, b.ndim());
        lua_pop(L, 2);
      } else {
        fail(ErrorKind::Type,
             "an integer or a pair of axis lists {{{{1, 2}}, {{3, 1}}}} expected, got {}",
             luaL_typename(L, -1));
      }
      return 0;
    });
    lua_pop(L, 1);
  } else {
    if (a.ndim() < 2 || b.ndim() < 2)
      fail(ErrorKind::Value,
           "tensordot contracts 2 axes by default, but the arrays have {} and {} dimensions: give "
           "axes=",
           a.ndim(), b.ndim());
    aa = {a.ndim() - 2, a.ndim() - 1};
    ab = {0, 1};
  }
  Stream* s = opt_stream(L, 3);
  check_one_device(L, {1, 2}, 3, nullptr, s);
  push_array(L, tensordot(runtime(L), a, b, aa, ab, s));
  return 1;
}

const luaL_Reg kFunctions[] = {
    {"broadcast_to", entry<l_broadcast_to>},
    {"expand_dims", entry<l_expand_dims>},
    {"squeeze", entry<l_squeeze>},
    {"flip", entry<l_flip>},
    {"permute_dims", entry<l_permute_dims>},
    {"moveaxis", entry<l_moveaxis>},
    {"matrix_transpose", entry<l_matrix_transpose>},
    {"roll", entry<l_roll>},
    {"repeat_each", entry<l_repeat>},
    {"tile", entry<l_tile>},
    {"unstack", entry<l_unstack>},
    {"empty_like", entry<l_like<0>>},
    {"zeros_like", entry<l_like<1>>},
    {"ones_like", entry<l_like<2>>},
    {"full_like", entry<l_like<3>>},
    {"tril", entry<l_tri<true>>},
    {"triu", entry<l_tri<false>>},
    {"take", entry<l_take>},
    {"take_along_axis", entry<l_take_along_axis>},
    {"vecdot", entry<l_vecdot>},
    {"outer", entry<l_outer>},
    {"tensordot", entry<l_tensordot>},
    {"reshape", entry<l_reshape>},
    {nullptr, nullptr},
};

// Module functions only (their first argument is not one array).
const luaL_Reg kModuleOnly[] = {
    {"broadcast_arrays", entry<l_broadcast_arrays>},
    {"concat", entry<l_concat>},
    {"stack", entry<l_stack>},
    {"eye", entry<l_eye>},
    {"meshgrid", entry<l_meshgrid>},
    {nullptr, nullptr},
};

// --- indexing ----------------------------------------------------------------------------------

// One slice spec {lo, hi, step} (1-based, hi included, negatives from the end, out-of-range
// bounds clamped as string.sub does) of a dimension of length n: 0-based start and count.
struct SliceSpec {
  int64_t start = 0;
  int64_t count = 0;
  int64_t step = 1;
};

SliceSpec read_slice(lua_State* L, int t, int64_t n) {
  t = lua_absindex(L, t);
  if (lua_rawlen(L, t) > 3)
    fail(ErrorKind::Value, "a slice is {{lo, hi, step}}, got a table of {} values",
         lua_rawlen(L, t));
  SliceSpec s;
  lua_rawgeti(L, t, 3);
  if (!lua_isnil(L, -1)) s.step = check_integer(L, -1, "slice step");
  lua_pop(L, 1);
  if (s.step == 0) fail(ErrorKind::Value, "slice step must not be 0");
  auto bound = [&](int k, int64_t fallback) {
    lua_rawgeti(L, t, k);
    int64_t v = fallback;
    if (!lua_isnil(L, -1)) {
      v = check_integer(L, -1, k == 1 ? "slice start" : "slice end");
      v = v < 0 ? (v < -n ? -1 : n + v) : v - 1;  // 0-based; before the first: -1
    }
    lua_pop(L, 1);
    return v;
  };
  int64_t lo = bound(1, s.step > 0 ? 0 : n - 1);
  int64_t hi = bound(2, s.step > 0 ? n - 1 : 0);
  if (s.step > 0) {
    lo = std::max<int64_t>(lo, 0);
    hi = std::min<int64_t>(hi, n - 1);
    s.count = hi >= lo ? (hi - lo) / s.step + 1 : 0;
  } else {
    lo = std::min<int64_t>(lo, n - 1);
    hi = std::max<int64_t>(hi, 0);
    s.count = lo >= hi ? (lo - hi) / (s.step == INT64_MIN ? INT64_MAX : -s.step) + 1 : 0;
  }
  s.start = s.count > 0 ? lo : 0;
  return s;
}

bool has_table_entry(lua_State* L, int t) {
  const auto n = static_cast<lua_Integer>(lua_rawlen(L, t));
  for (lua_Integer i = 1; i <= n; ++i) {
    const bool table = lua_rawgeti(L, t, i) == LUA_TTABLE;
    lua_pop(L, 1);
    if (table) return true;
  }
  return false;
}

// The view a table key selects: {lo, hi, step} slices dimension 1; a table with tables among its
// entries indexes dimension after dimension (an integer selects, a table slices, {} keeps all).
Array sliced(lua_State* L, const Array& a, int key) {
  key = lua_absindex(L, key);
  if (a.ndim() == 0) fail(ErrorKind::Value, "cannot slice a 0-d array");
  if (!has_table_entry(L, key)) {
    const SliceSpec s = read_slice(L, key, a.layout().shape[0]);
    return slice(a, 0, s.start, s.count, s.step);
  }
  const auto n = static_cast<int>(std::min<size_t>(lua_rawlen(L, key), kMaxDims + 1));
  if (n > a.ndim()) fail(ErrorKind::Index, "{} indices for a {}-d array", n, a.ndim());
  Array r = a;
  int dim = 0;
  for (int i = 1; i <= n; ++i) {
    const int t = lua_rawgeti(L, key, i);
    const int64_t len = r.layout().shape[static_cast<size_t>(dim)];
    if (t == LUA_TTABLE) {
      const SliceSpec s = read_slice(L, -1, len);
      r = slice(r, dim, s.start, s.count, s.step);
      ++dim;
    } else if (t == LUA_TNUMBER) {
      const int64_t j = check_index(L, -1, len);
      r = slice(r, dim, j, 1, 1);
      r = squeeze(r, {dim}, false);
    } else {
      fail(ErrorKind::Type, "index entry {}: an integer or a slice table expected, got {}", i,
           luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  return r;
}

// The value side of an assignment as an array of a's dtype in a's location (scalars: 0-d).
Array value_array(lua_State* L, const Array& a, int value) {
  if (ArrayBox* v = test_array(L, value)) {
    v->array.check_alive("the value");
    return v->array;
  }
  if (!is_scalar(L, value))
    fail(ErrorKind::Type, "cannot assign a {} to array elements", luaL_typename(L, value));
  Runtime& rt = runtime(L);
  Stream* s = is_host(a.location()) ? nullptr : &stream_for(rt, a, nullptr);
  return full(rt, Shape{}, a.dtype(), check_scalar(L, value), a.location(), s);
}

}  // namespace

bool index_by(lua_State* L, const Array& a, int key) {
  if (lua_type(L, key) == LUA_TTABLE) {
    push_array(L, sliced(L, a, key));
    return true;
  }
  ArrayBox* box = test_array(L, key);
  if (!box) return false;
  const Array& k = box->array;
  k.check_alive("the index array");
  if (k.dtype() == DType::Bool) {
    push_array(L, mask_read(runtime(L), a, k));
  } else {
    push_array(L, take(runtime(L), a, k, 0));
  }
  return true;
}

bool assign_by(lua_State* L, const Array& a, int key, int value) {
  if (lua_type(L, key) == LUA_TTABLE) {
    const Array view = sliced(L, a, key);
    if (is_scalar(L, value)) {
      fill(runtime(L), view, check_scalar(L, value));
    } else {
      const Array v = value_array(L, a, value);
      copy(runtime(L), view, broadcast_to(v, view.shape()));
    }
    return true;
  }
  ArrayBox* box = test_array(L, key);
  if (!box) return false;
  const Array k = box->array;
  k.check_alive("the index array");
  const Array v = value_array(L, a, value);
  if (k.dtype() == DType::Bool) {
    mask_write(runtime(L), a, k, v);
  } else {
    put(runtime(L), a, k, v, 0);
  }
  return true;
}

void register_manip(lua_State* L) {
  luaL_setfuncs(L, kFunctions, 0);
  luaL_setfuncs(L, kModuleOnly, 0);
  // cu.asarray calls cu.array for Lua values: the module table is its upvalue.
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, entry<l_asarray>, 1);
  lua_setfield(L, -2, "asarray");
  add_array_methods(L, kFunctions);
}

}  // namespace culua::detail::lua
