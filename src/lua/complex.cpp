// cu.complex(re, im): complex scalars with arithmetic, accepted wherever a scalar is.
#include <cmath>
#include <complex>

#include "core/base/error.hpp"
#include "kernels/kernels.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

bool is_complex(lua_State* L, int idx) {
  return has_metatable(L, idx, context(L).complex_mt);
}

// The self of a method or unary metamethod.
std::complex<double> check_complex(lua_State* L, int idx) {
  if (!is_complex(L, idx)) type_error(L, idx, kComplexType);
  const auto* z = static_cast<const double*>(lua_touserdata(L, idx));
  return {z[0], z[1]};
}

// Binary metamethods: Lua calls them with a cu.complex on one side; an explicit call without one
// is an error.
void check_binary(lua_State* L) {
  if (!is_complex(L, 1) && !is_complex(L, 2)) type_error(L, 1, kComplexType);
}

std::complex<double> to_complex(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) return {lua_tonumber(L, idx), 0.0};
  if (lua_type(L, idx) == LUA_TUSERDATA && has_metatable(L, idx, context(L).complex_mt)) {
    const auto* z = static_cast<const double*>(lua_touserdata(L, idx));
    return {z[0], z[1]};
  }
  fail(ErrorKind::Type, "complex arithmetic needs numbers or cu.complex values, got {}",
       luaL_typename(L, idx));
  return {};
}

void push(lua_State* L, std::complex<double> z) {
  push_scalar(L, Scalar::complex(z.real(), z.imag()));
}

// The arithmetic of the array kernels (numpy's rules: Smith's division, a^0 = 1, 0^b by the sign
// of b, whole exponents by repeated products), so that a scalar and a one-element array agree.
std::complex<double> binary(BinaryOp op, lua_State* L) {
  const std::complex<double> a = to_complex(L, 1), b = to_complex(L, 2);
  const complex128 r =
      kernels::host::complex_binary(op, {a.real(), a.imag()}, {b.real(), b.imag()});
  return {r.re, r.im};
}

int l_complex(lua_State* L) {
  const double re = arg_number(L, 1);
  const double im = opt_arg_number(L, 2, 0.0);
  push(L, {re, im});
  return 1;
}

int c_add(lua_State* L) {
  check_binary(L);
  push(L, binary(BinaryOp::Add, L));
  return 1;
}
int c_sub(lua_State* L) {
  check_binary(L);
  push(L, binary(BinaryOp::Sub, L));
  return 1;
}
int c_mul(lua_State* L) {
  check_binary(L);
  push(L, binary(BinaryOp::Mul, L));
  return 1;
}
int c_div(lua_State* L) {
  check_binary(L);
  push(L, binary(BinaryOp::Div, L));
  return 1;
}
int c_pow(lua_State* L) {
  check_binary(L);
  push(L, binary(BinaryOp::Pow, L));
  return 1;
}
int c_unm(lua_State* L) {
  push(L, -check_complex(L, 1));
  return 1;
}
bool is_complex_operand(lua_State* L, int idx) {
  return lua_type(L, idx) == LUA_TNUMBER ||
         (lua_type(L, idx) == LUA_TUSERDATA && has_metatable(L, idx, context(L).complex_mt));
}

// == never raises: a complex value differs from anything that is not a number. (Called explicitly
// without a complex value, it raises as the other metamethods do.)
int c_eq(lua_State* L) {
  check_binary(L);
  lua_pushboolean(L, is_complex_operand(L, 1) && is_complex_operand(L, 2) &&
                         to_complex(L, 1) == to_complex(L, 2));
  return 1;
}
int c_abs(lua_State* L) {
  lua_pushnumber(L, std::abs(check_complex(L, 1)));
  return 1;
}
int c_conj(lua_State* L) {
  push(L, std::conj(check_complex(L, 1)));
  return 1;
}

int c_tostring(lua_State* L) {
  const std::complex<double> z = check_complex(L, 1);
  lua_pushstring(L, Scalar::complex(z.real(), z.imag()).str().c_str());
  return 1;
}

int c_index(lua_State* L) {
  const std::complex<double> z = check_complex(L, 1);
  const char* key = arg_string(L, 2);
  const std::string_view k = key;
  if (k == "re") {
    lua_pushnumber(L, z.real());
  } else if (k == "im") {
    lua_pushnumber(L, z.imag());
  } else if (k == "abs") {
    lua_pushcfunction(L, entry<c_abs>);
  } else if (k == "conj") {
    lua_pushcfunction(L, entry<c_conj>);
  } else {
    fail(ErrorKind::Index, "cu.complex has no field '{}'", key);
  }
  return 1;
}

}  // namespace

void register_complex(lua_State* L) {
  new_metatable(L, kComplexType);
  context(L).complex_mt = lua_topointer(L, -1);
  const luaL_Reg meta[] = {{"__add", entry<c_add>},     {"__sub", entry<c_sub>},
                           {"__mul", entry<c_mul>},     {"__div", entry<c_div>},
                           {"__pow", entry<c_pow>},     {"__unm", entry<c_unm>},
                           {"__eq", entry<c_eq>},       {"__tostring", entry<c_tostring>},
                           {"__index", entry<c_index>}, {nullptr, nullptr}};
  luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, entry<l_complex>);
  lua_setfield(L, -2, "complex");
}

}  // namespace culua::detail::lua
