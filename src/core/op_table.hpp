// The one table of elementwise operations: every layer that lists them expands these X-macros
// (the enums below, their names in core/elementwise.cpp, the kernels' dispatch in
// kernels/elementwise_ops.cuh, the Lua functions in lua/math.cpp). A new operation is one line
// here plus its functor (kernels/elementwise_ops.cuh) and its type rule (core/elementwise.cpp).
//   X(Enum, "lua name", Functor)
#pragma once

#define CULUA_BINARY_OPS(X)                               \
  X(Add, "add", AddOp)                                    \
  X(Sub, "sub", SubOp)                                    \
  X(Mul, "mul", MulOp)                                    \
  X(Div, "div", DivOp)                                    \
  X(Pow, "pow", PowOp)                                    \
  X(Maximum, "maximum", MaximumOp)                        \
  X(Minimum, "minimum", MinimumOp)                        \
  X(FloorDiv, "floordiv", FloorDivOp)                     \
  X(Mod, "mod", ModOp)                                    \
  X(Eq, "eq", EqOp) /* comparisons last: is_comparison */ \
  X(Ne, "ne", NeOp)                                       \
  X(Lt, "lt", LtOp)                                       \
  X(Le, "le", LeOp)                                       \
  X(Gt, "gt", GtOp)                                       \
  X(Ge, "ge", GeOp)

#define CULUA_UNARY_OPS(X) \
  X(Neg, "neg", NegOp)     \
  X(Abs, "abs", AbsOp)     \
  X(Exp, "exp", ExpOp)     \
  X(Log, "log", LogOp)     \
  X(Sqrt, "sqrt", SqrtOp)  \
  X(Sin, "sin", SinOp)     \
  X(Cos, "cos", CosOp)     \
  X(Tanh, "tanh", TanhOp)  \
  X(Conj, "conj", ConjOp)  \
  X(Real, "real", RealOp)  \
  X(Imag, "imag", ImagOp)
