// The one table of elementwise operations: every layer that lists them expands these X-macros
// (the enums below, their names in core/elementwise.cpp, the kernels' dispatch in
// kernels/elementwise_ops.cuh, the Lua functions in lua/math.cpp). A new operation is one line
// here plus its functor (kernels/elementwise_ops.cuh) and its type rule (core/elementwise.cpp).
//   X(Enum, "lua name", Functor)
#pragma once

#define CULUA_BINARY_OPS(X)                                \
  X(Add, "add", AddOp)                                     \
  X(Sub, "sub", SubOp)                                     \
  X(Mul, "mul", MulOp)                                     \
  X(Div, "div", DivOp)                                     \
  X(Pow, "pow", PowOp)                                     \
  X(Maximum, "maximum", MaximumOp)                         \
  X(Minimum, "minimum", MinimumOp)                         \
  X(FloorDiv, "floordiv", FloorDivOp)                      \
  X(Mod, "mod", ModOp)                                     \
  X(Atan2, "atan2", Atan2Op)                               \
  X(Copysign, "copysign", CopysignOp)                      \
  X(Hypot, "hypot", HypotOp)                               \
  X(Logaddexp, "logaddexp", LogaddexpOp)                   \
  X(BitAnd, "bitwise_and", BitAndOp)                       \
  X(BitOr, "bitwise_or", BitOrOp)                          \
  X(BitXor, "bitwise_xor", BitXorOp)                       \
  X(Shl, "bitwise_left_shift", ShlOp)                      \
  X(Shr, "bitwise_right_shift", ShrOp)                     \
  X(Eq, "eq", EqOp) /* bool results last: is_comparison */ \
  X(Ne, "ne", NeOp)                                        \
  X(Lt, "lt", LtOp)                                        \
  X(Le, "le", LeOp)                                        \
  X(Gt, "gt", GtOp)                                        \
  X(Ge, "ge", GeOp)                                        \
  X(LogicalAnd, "logical_and", LogicalAndOp)               \
  X(LogicalOr, "logical_or", LogicalOrOp)                  \
  X(LogicalXor, "logical_xor", LogicalXorOp)

#define CULUA_UNARY_OPS(X)                    \
  X(Neg, "neg", NegOp)                        \
  X(Abs, "abs", AbsOp)                        \
  X(Exp, "exp", ExpOp)                        \
  X(Log, "log", LogOp)                        \
  X(Sqrt, "sqrt", SqrtOp)                     \
  X(Sin, "sin", SinOp)                        \
  X(Cos, "cos", CosOp)                        \
  X(Tanh, "tanh", TanhOp)                     \
  X(Conj, "conj", ConjOp)                     \
  X(Real, "real", RealOp)                     \
  X(Imag, "imag", ImagOp)                     \
  X(Acos, "acos", AcosOp)                     \
  X(Acosh, "acosh", AcoshOp)                  \
  X(Asin, "asin", AsinOp)                     \
  X(Asinh, "asinh", AsinhOp)                  \
  X(Atan, "atan", AtanOp)                     \
  X(Atanh, "atanh", AtanhOp)                  \
  X(Cosh, "cosh", CoshOp)                     \
  X(Sinh, "sinh", SinhOp)                     \
  X(Tan, "tan", TanOp)                        \
  X(Expm1, "expm1", Expm1Op)                  \
  X(Log1p, "log1p", Log1pOp)                  \
  X(Log2, "log2", Log2Op)                     \
  X(Log10, "log10", Log10Op)                  \
  X(Square, "square", SquareOp)               \
  X(Positive, "positive", PositiveOp)         \
  X(Sign, "sign", SignOp)                     \
  X(Floor, "floor", FloorOp)                  \
  X(Ceil, "ceil", CeilOp)                     \
  X(Trunc, "trunc", TruncOp)                  \
  X(Round, "round", RoundOp)                  \
  X(Signbit, "signbit", SignbitOp)            \
  X(Isnan, "isnan", IsnanOp)                  \
  X(Isinf, "isinf", IsinfOp)                  \
  X(Isfinite, "isfinite", IsfiniteOp)         \
  X(BitInvert, "bitwise_invert", BitInvertOp) \
  X(LogicalNot, "logical_not", LogicalNotOp)
