// The Array API standard's data-type functions: cu.can_cast(from, to [, {casting=}]),
// cu.result_type(...), cu.finfo(t), cu.iinfo(t), cu.isdtype(t, kind). A dtype is its name ("f32",
// "float32") or an array (its dtype); results name dtypes by their canonical names. The rules are
// the ones every operation uses (core/model/promote.hpp). Also the trailing "[dtype] [options]"
// arguments of the functions that make arrays (dtypes.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "lua/binding.hpp"
#include "lua/dtypes.hpp"

namespace culua::detail::lua {

namespace {

DType check_dtype_arg(lua_State* L, int idx) {
  if (ArrayBox* box = test_array(L, idx)) {
    box->array.check_alive();
    return box->array.dtype();
  }
  if (lua_type(L, idx) != LUA_TSTRING) type_error(L, idx, "dtype name or cu.Array");
  return check_dtype(L, idx);
}

void push_dtype(lua_State* L, DType t) {
  const std::string_view n = name(t);
  lua_pushlstring(L, n.data(), n.size());
}

void check_arg_count(lua_State* L, int most) {
  if (lua_gettop(L) > most)
    arg_error(most + 1, fmt::format("no value expected, got {}", luaL_typename(L, most + 1)));
}

// numpy's casting rules by name: "no"/"equiv" (the same dtype), "safe" (every value is kept: the
// promotion of the two is `to`), "same_kind" (safe, or within a kind or to a later one), "unsafe".
int l_can_cast(lua_State* L) {
  const DType from = check_dtype_arg(L, 1);
  const DType to = [&] {
    if (test_array(L, 2)) type_error(L, 2, "dtype name");
    if (lua_type(L, 2) != LUA_TSTRING) type_error(L, 2, "dtype name");
    return check_dtype(L, 2);
  }();
  check_arg_count(L, 3);
  if (!lua_isnoneornil(L, 3) && lua_type(L, 3) != LUA_TTABLE) type_error(L, 3, "options table");
  check_options(L, 3, {"casting"});
  std::string_view casting = "safe";
  if (get_option(L, 3, "casting")) {
    if (lua_type(L, -1) != LUA_TSTRING) {
      option_error(3, "casting", ErrorKind::Type,
                   fmt::format("string expected, got {}", luaL_typename(L, -1)));
    }
    casting = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  bool ok = false;
  const bool safe = promote_types(from, to) == to;
  if (casting == "no" || casting == "equiv") {
    ok = from == to;
  } else if (casting == "safe") {
    ok = safe;
  } else if (casting == "same_kind") {
    ok = safe || can_cast_same_kind(from, to);
  } else if (casting == "unsafe") {
    ok = true;
  } else {
    option_error(3, "casting", ErrorKind::Value,
                 fmt::format("\"no\", \"equiv\", \"safe\", \"same_kind\" or \"unsafe\" expected, "
                             "got \"{}\"",
                             casting));
  }
  lua_pushboolean(L, ok);
  return 1;
}

// Arrays and dtype names promote as arrays; numbers, booleans and cu.complex values are weak
// scalars that take the others' type within their kind (as in every operation). Several dtypes
// promote as numpy's result_type does, independent of their order: the dtypes of the highest kind
// first, then each of the others with that (u8, i8, f16 gives f16, where promoting u8 with i8
// first would give i16 and then f32).
int l_result_type(lua_State* L) {
  const int n = lua_gettop(L);
  std::vector<DType> strong;
  for (int i = 1; i <= n; ++i) {
    if (test_array(L, i) || lua_type(L, i) == LUA_TSTRING) {
      strong.push_back(check_dtype_arg(L, i));
    } else if (!is_scalar(L, i)) {
      type_error(L, i, "cu.Array, dtype name or scalar");
    }
  }
  if (strong.empty()) arg_error(1, "at least one array or dtype name expected");
  int top = 0;
  for (DType t : strong) top = std::max(top, kind_rank(t));
  std::optional<DType> leading;
  for (DType t : strong) {
    if (kind_rank(t) == top) leading = leading ? promote_types(*leading, t) : t;
  }
  DType t = *leading;
  for (DType u : strong) t = promote_types(t, u);
  for (int i = 1; i <= n; ++i) {
    if (!test_array(L, i) && lua_type(L, i) != LUA_TSTRING)
      t = promote_with_scalar(t, check_scalar(L, i));
  }
  push_dtype(L, t);
  return 1;
}

// {bits, eps, max, min, smallest_normal, dtype}; a complex dtype gives its real type's.
int l_finfo(lua_State* L) {
  const DType t = check_dtype_arg(L, 1);
  check_arg_count(L, 1);
  const DType r = real_of(t);
  struct Limits {
    int bits;
    double eps, max, smallest_normal;
  };
  Limits l{};
  switch (r) {
    case DType::F16:
      l = {16, 0x1p-10, 65504.0, 0x1p-14};
      break;
    case DType::BF16:
      l = {16, 0x1p-7, 0x1.fep127, 0x1p-126};
      break;
    case DType::F32:
      l = {32, std::numeric_limits<float>::epsilon(), std::numeric_limits<float>::max(),
           std::numeric_limits<float>::min()};
      break;
    case DType::F64:
      l = {64, std::numeric_limits<double>::epsilon(), std::numeric_limits<double>::max(),
           std::numeric_limits<double>::min()};
      break;
    default:
      arg_error(
          1, fmt::format("a floating or complex dtype expected, got {} (use cu.iinfo)", name(t)));
  }
  lua_createtable(L, 0, 6);
  set_integer(L, "bits", l.bits);
  set_number(L, "eps", l.eps);
  set_number(L, "max", l.max);
  set_number(L, "min", -l.max);
  set_number(L, "smallest_normal", l.smallest_normal);
  push_dtype(L, r);
  lua_setfield(L, -2, "dtype");
  return 1;
}

// {bits, max, min, dtype}. A maximum beyond a Lua integer (2^64 - 1) is a float.
int l_iinfo(lua_State* L) {
  const DType t = check_dtype_arg(L, 1);
  check_arg_count(L, 1);
  const DTypeClass cls = info(t).cls;
  if (cls != DTypeClass::Signed && cls != DTypeClass::Unsigned) {
    arg_error(1, fmt::format("an integer dtype expected, got {}{}", name(t),
                             cls == DTypeClass::Bool ? "" : " (use cu.finfo)"));
  }
  const int bits = static_cast<int>(8 * itemsize(t));
  lua_createtable(L, 0, 4);
  set_integer(L, "bits", bits);
  if (cls == DTypeClass::Signed) {
    const lua_Integer max =
        bits == 64 ? std::numeric_limits<lua_Integer>::max() : (lua_Integer{1} << (bits - 1)) - 1;
    set_integer(L, "max", max);
    set_integer(L, "min", -max - 1);
  } else {
    if (bits == 64) {
      set_number(L, "max", 0x1p64 - 1);  // 18446744073709551615 rounds to 2^64 as a double
    } else {
      set_integer(L, "max", (lua_Integer{1} << bits) - 1);
    }
    set_integer(L, "min", 0);
  }
  push_dtype(L, t);
  lua_setfield(L, -2, "dtype");
  return 1;
}

// One kind: a dtype name (that dtype) or one of the standard's kind names.
bool is_kind(lua_State* L, int idx, DType t) {
  if (lua_type(L, idx) != LUA_TSTRING) {
    fail(ErrorKind::Type, "kind must be a kind name, a dtype name or a table of them, got {}",
         luaL_typename(L, idx));
  }
  const std::string_view k = lua_tostring(L, idx);
  const DTypeClass c = info(t).cls;
  if (k == "bool") return c == DTypeClass::Bool;
  if (k == "signed integer") return c == DTypeClass::Signed;
  if (k == "unsigned integer") return c == DTypeClass::Unsigned;
  if (k == "integral") return c == DTypeClass::Signed || c == DTypeClass::Unsigned;
  if (k == "real floating") return c == DTypeClass::Float;
  if (k == "complex floating") return c == DTypeClass::Complex;
  if (k == "numeric") return c != DTypeClass::Bool;
  if (auto d = parse_dtype(k)) return *d == t;
  fail(ErrorKind::Value,
       "unknown kind \"{}\" (expected \"bool\", \"signed integer\", \"unsigned integer\", "
       "\"integral\", \"real floating\", \"complex floating\", \"numeric\" or a dtype name)",
       k);
}

int l_isdtype(lua_State* L) {
  const DType t = check_dtype_arg(L, 1);
  check_arg_count(L, 2);
  bool result = false;
  as_argument(2, [&] {
    if (lua_type(L, 2) == LUA_TTABLE) {
      const lua_Integer count = luaL_len(L, 2);
      if (count == 0) fail(ErrorKind::Value, "kind must not be an empty table");
      for (lua_Integer i = 1; i <= count; ++i) {
        lua_geti(L, 2, i);
        const bool hit = is_kind(L, -1, t);
        lua_pop(L, 1);
        result = result || hit;
      }
    } else {
      result = is_kind(L, 2, t);
    }
  });
  lua_pushboolean(L, result);
  return 1;
}

const luaL_Reg kFunctions[] = {
    {"can_cast", entry<l_can_cast>}, {"result_type", entry<l_result_type>},
    {"finfo", entry<l_finfo>},       {"iinfo", entry<l_iinfo>},
    {"isdtype", entry<l_isdtype>},   {nullptr, nullptr},
};

}  // namespace

DTypeAndOptions check_dtype_and_options(lua_State* L, int idx,
                                        std::initializer_list<const char*> allowed) {
  DTypeAndOptions t;
  if (lua_type(L, idx) == LUA_TSTRING) {
    t.dtype = check_dtype(L, idx);
    t.has_dtype = true;
    ++idx;
  } else if (idx < lua_gettop(L) && lua_isnil(L, idx)) {
    ++idx;  // f(shape, nil, {opts}): no dtype argument
  }
  if (lua_type(L, idx) == LUA_TTABLE) {
    check_options(L, idx, allowed);
    t.opts = idx;
    if (get_option(L, idx, "dtype")) {
      if (t.has_dtype)
        option_error(idx, "dtype", ErrorKind::Value, "the dtype is also given as an argument");
      t.dtype = as_option(idx, "dtype", [&] { return check_dtype(L, -1); });
      t.has_dtype = true;
      lua_pop(L, 1);
    }
    ++idx;
  } else if (idx <= lua_gettop(L) && lua_isnil(L, idx)) {
    ++idx;
  } else if (!lua_isnone(L, idx)) {
    type_error(L, idx, "dtype string or options table");
  }
  if (idx <= lua_gettop(L))
    arg_error(idx, fmt::format("no value expected, got {}", luaL_typename(L, idx)));
  return t;
}

void register_dtypes(lua_State* L) {
  luaL_setfuncs(L, kFunctions, 0);
}

}  // namespace culua::detail::lua
