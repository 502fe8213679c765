// Elementwise math: cu.add ... cu.where, cu.clip, the unary functions (also as array methods), the
// Array API standard's names of the operations culua names otherwise (cu.multiply = cu.mul ...),
// and the arithmetic and bitwise operators of cu.Array (+ - * / // % ^ unary -, & | ~ << >>).
#include <cstring>
#include <optional>

#include "core/base/error.hpp"
#include "core/ops/elementwise.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// An operand: an array, or a number, boolean or cu.complex. Anything else is an error naming the
// operand.
Operand check_operand(lua_State* L, int idx, int position) {
  if (ArrayBox* box = test_array(L, idx)) {
    box->array.check_alive(position == 1 ? "the first operand" : "an operand");
    return Operand(box->array);
  }
  if (is_scalar(L, idx)) return Operand(check_scalar(L, idx));
  type_error(L, idx, "cu.Array or number");
}

struct Options {
  const Array* out = nullptr;
  Stream* stream = nullptr;
};

Options check_math_options(lua_State* L, int idx) {
  Options o;
  if (lua_isnoneornil(L, idx)) return o;
  // The common case, {out = array} (a loop's every operation): one pass over the table. Anything
  // else (another key, a value of the wrong type, a freed array) takes the general path, which
  // raises its errors.
  if (lua_type(L, idx) == LUA_TTABLE) {
    const int top = lua_gettop(L);
    lua_pushnil(L);
    if (lua_next(L, idx)) {
      size_t n = 0;
      const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &n) : nullptr;
      ArrayBox* box =
          key && n == 3 && std::memcmp(key, "out", 3) == 0 ? test_array(L, -1) : nullptr;
      lua_pop(L, 1);  // the value; the key stays for lua_next
      if (box && box->array.alive() && lua_next(L, idx) == 0) {
        o.out = &box->array;
        return o;  // lua_next popped the key
      }
    }
    lua_settop(L, top);
  }
  check_options(L, idx, {"out", "stream"});
  o.out = opt_array(L, idx, "out");
  o.stream = opt_stream(L, idx);
  return o;
}

// The result of an operation: with out=, the out argument itself (the same userdata, nothing new
// for the collector) when the result is that array, as it is unless the operation copied.
void push_result(lua_State* L, Array result, const Options& o, int opts) {
  if (o.out && result.buffer() == o.out->buffer() && result.data() == o.out->data() &&
      result.dtype() == o.out->dtype() && result.shape() == o.out->shape()) {
    lua_getfield(L, opts, "out");
    return;
  }
  push_array(L, std::move(result));
}

template <BinaryOp op>
int l_binary(lua_State* L) {
  const Operand a = check_operand(L, 1, 1);
  const Operand b = check_operand(L, 2, 2);
  const Options o = check_math_options(L, 3);
  check_one_device({{1, a.array}, {2, b.array}}, 3, o.out, o.stream);
  push_result(L, binary(runtime(L), op, a, b, o.out, o.stream), o, 3);
  return 1;
}

// Metamethods: Lua calls them with the operands in source order (2 * a passes 2, a), one of them
// an array; an explicit call without one is an error.
template <BinaryOp op>
int m_binary(lua_State* L) {
  const bool arrays = test_array(L, 1) || test_array(L, 2);
  if (!arrays) type_error(L, 1, kArrayType);
  const Operand a = check_operand(L, 1, 1);
  const Operand b = check_operand(L, 2, 2);
  check_one_device({{1, a.array}, {2, b.array}});
  push_array(L, binary(runtime(L), op, a, b));
  return 1;
}

// The arithmetic metamethods of cu.complex: Lua calls the left operand's metamethod first, so
// `z + a` (z a cu.complex, a a cu.Array) arrives here; arrays go to the array operation, anything
// else to the complex metamethod (upvalue 1).
template <BinaryOp op>
int m_complex_binary(lua_State* L) {
  if (!has_metatable(L, 1, context(L).complex_mt) && !has_metatable(L, 2, context(L).complex_mt)) {
    type_error(L, 1, kComplexType);
  }
  if (test_array(L, 1) || test_array(L, 2)) return m_binary<op>(L);
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  call_lua(L, 2, 1);
  return 1;
}

template <BinaryOp op>
void wrap_complex_metamethod(lua_State* L, const char* event) {
  lua_getfield(L, -1, event);  // the complex metamethod
  lua_pushcclosure(L, entry<m_complex_binary<op>>, 1);
  lua_setfield(L, -2, event);
}

template <UnaryOp op>
int l_unary(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  const Options o = check_math_options(L, 2);
  check_one_device({{1, &box->array}}, 2, o.out, o.stream);
  push_result(L, unary(runtime(L), op, box->array, o.out, o.stream), o, 2);
  return 1;
}

int m_unm(lua_State* L) {
  push_array(L, unary(runtime(L), UnaryOp::Neg, check_array(L, 1)));
  return 1;
}

int m_bnot(lua_State* L) {  // ~a (Lua passes the operand twice)
  push_array(L, unary(runtime(L), UnaryOp::BitInvert, check_array(L, 1)));
  return 1;
}

// cu.clip(x, min, max[, opts]): either bound may be nil.
int l_clip(lua_State* L) {
  ArrayBox* box = test_array(L, 1);
  if (!box) type_error(L, 1, kArrayType);
  box->array.check_alive();
  std::optional<Operand> lo, hi;
  if (!lua_isnoneornil(L, 2)) lo = check_operand(L, 2, 2);
  if (!lua_isnoneornil(L, 3)) hi = check_operand(L, 3, 3);
  const Options o = check_math_options(L, 4);
  check_one_device({{1, &box->array}, {2, lo ? lo->array : nullptr}, {3, hi ? hi->array : nullptr}},
                   4, o.out, o.stream);
  push_result(
      L, clip(runtime(L), box->array, lo ? &*lo : nullptr, hi ? &*hi : nullptr, o.out, o.stream), o,
      4);
  return 1;
}

int l_where(lua_State* L) {
  const Operand c = check_operand(L, 1, 1);
  const Operand x = check_operand(L, 2, 2);
  const Operand y = check_operand(L, 3, 3);
  const Options o = check_math_options(L, 4);
  check_one_device(L, {1, 2, 3}, 4, o.out, o.stream);
  push_result(L, where(runtime(L), c, x, y, o.out, o.stream), o, 4);
  return 1;
}

// cu.add, cu.exp, ...: one function per operation of core/backend/op_table.hpp.
#define CULUA_BINARY(e, name, ...) {name, entry<l_binary<BinaryOp::e>>},
#define CULUA_UNARY(e, name, ...) {name, entry<l_unary<UnaryOp::e>>},
const luaL_Reg kBinary[] = {CULUA_BINARY_OPS(CULUA_BINARY){nullptr, nullptr}};
const luaL_Reg kUnary[] = {CULUA_UNARY_OPS(CULUA_UNARY){nullptr, nullptr}};
#undef CULUA_BINARY
#undef CULUA_UNARY

// The Array API standard's names of operations culua has under shorter names.
const luaL_Reg kAliases[] = {
    {"multiply", entry<l_binary<BinaryOp::Mul>>},
    {"subtract", entry<l_binary<BinaryOp::Sub>>},
    {"divide", entry<l_binary<BinaryOp::Div>>},
    {"floor_divide", entry<l_binary<BinaryOp::FloorDiv>>},
    {"remainder", entry<l_binary<BinaryOp::Mod>>},
    {"equal", entry<l_binary<BinaryOp::Eq>>},
    {"not_equal", entry<l_binary<BinaryOp::Ne>>},
    {"less", entry<l_binary<BinaryOp::Lt>>},
    {"less_equal", entry<l_binary<BinaryOp::Le>>},
    {"greater", entry<l_binary<BinaryOp::Gt>>},
    {"greater_equal", entry<l_binary<BinaryOp::Ge>>},
    {"negative", entry<l_unary<UnaryOp::Neg>>},
    {"clip", entry<l_clip>},
    {nullptr, nullptr},
};

const luaL_Reg kOperators[] = {
    {"__add", entry<m_binary<BinaryOp::Add>>},
    {"__sub", entry<m_binary<BinaryOp::Sub>>},
    {"__mul", entry<m_binary<BinaryOp::Mul>>},
    {"__div", entry<m_binary<BinaryOp::Div>>},
    {"__pow", entry<m_binary<BinaryOp::Pow>>},
    {"__idiv", entry<m_binary<BinaryOp::FloorDiv>>},
    {"__mod", entry<m_binary<BinaryOp::Mod>>},
    {"__unm", entry<m_unm>},
    {"__band", entry<m_binary<BinaryOp::BitAnd>>},
    {"__bor", entry<m_binary<BinaryOp::BitOr>>},
    {"__bxor", entry<m_binary<BinaryOp::BitXor>>},
    {"__shl", entry<m_binary<BinaryOp::Shl>>},
    {"__shr", entry<m_binary<BinaryOp::Shr>>},
    {"__bnot", entry<m_bnot>},
    {nullptr, nullptr},
};

}  // namespace

void register_math(lua_State* L) {
  luaL_setfuncs(L, kBinary, 0);
  luaL_setfuncs(L, kUnary, 0);
  luaL_setfuncs(L, kAliases, 0);
  lua_pushcfunction(L, entry<l_where>);
  lua_setfield(L, -2, "where");
  // Methods: a:exp(), a:add(b), ...
  add_array_methods(L, kUnary);
  add_array_methods(L, kBinary);
  add_array_methods(L, kAliases);
  lua_rawgetp(L, LUA_REGISTRYINDEX, kArrayType);
  luaL_setfuncs(L, kOperators, 0);
  lua_pop(L, 1);
  // cu.complex on the left of an array (register_complex ran before).
  lua_rawgetp(L, LUA_REGISTRYINDEX, kComplexType);
  if (lua_istable(L, -1)) {
    wrap_complex_metamethod<BinaryOp::Add>(L, "__add");
    wrap_complex_metamethod<BinaryOp::Sub>(L, "__sub");
    wrap_complex_metamethod<BinaryOp::Mul>(L, "__mul");
    wrap_complex_metamethod<BinaryOp::Div>(L, "__div");
    wrap_complex_metamethod<BinaryOp::Pow>(L, "__pow");
  }
  lua_pop(L, 1);
}

}  // namespace culua::detail::lua
