// The one table of elementwise operations. Each operation is stated once, here: its name, its
// functor and its type rule. Every layer that lists or types them reads this file: the enums and
// the type rules below, their names and the type checks in core/ops/elementwise.cpp, the kernels'
// dispatch and the functors in kernels/elementwise_ops.cuh (kernels/op_table_check.cpp checks
// every functor against its row for every dtype), the Lua functions in lua/math.cpp. A new
// operation is one line here plus its functor.
//   X(Enum, "lua name", Functor, accepts, promote, result)
// accepts: the classes of compute type the operation is defined for (B bool, I integers, F floats,
//          C complex; f16 and bf16 compute in f32, so their class is F);
// promote: how the operands' common type becomes the compute type (None: itself; TrueDiv:
//          integers and bools in f64; FloatPair: integers and bools in the float numpy picks for
//          them; BoolI8: bools in i8; Float: integers and bools in float_for, as numpy's ufuncs);
// result:  the result type from the compute type (Same, Bool, Real: the real part's type).
// Reductions, X(Enum, "lua name", accepts, result), with their own result rules (numpy's):
//   Accumulate: bool and signed integers -> i64, unsigned -> u64 (wrapping), others keep their
//               type; Mean: bool and integers -> f64; RealFloat: bool and integers -> f64, complex
//               -> its real type, floats keep theirs; Index: i64 (1-based positions); Same; Bool.
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"

#define CULUA_BINARY_OPS(X)                                    \
  X(Add, "add", AddOp, kAll, None, Same)                       \
  X(Sub, "sub", SubOp, kIFC, None, Same)                       \
  X(Mul, "mul", MulOp, kAll, None, Same)                       \
  X(Div, "div", DivOp, kFC, TrueDiv, Same)                     \
  X(Pow, "pow", PowOp, kIFC, BoolI8, Same)                     \
  X(Maximum, "maximum", MaximumOp, kAll, None, Same)           \
  X(Minimum, "minimum", MinimumOp, kAll, None, Same)           \
  X(FloorDiv, "floordiv", FloorDivOp, kIF, None, Same)         \
  X(Mod, "mod", ModOp, kIF, None, Same)                        \
  X(Atan2, "atan2", Atan2Op, kF, FloatPair, Same)              \
  X(Copysign, "copysign", CopysignOp, kF, FloatPair, Same)     \
  X(Hypot, "hypot", HypotOp, kF, FloatPair, Same)              \
  X(Logaddexp, "logaddexp", LogaddexpOp, kF, FloatPair, Same)  \
  X(BitAnd, "bitwise_and", BitAndOp, kBI, None, Same)          \
  X(BitOr, "bitwise_or", BitOrOp, kBI, None, Same)             \
  X(BitXor, "bitwise_xor", BitXorOp, kBI, None, Same)          \
  X(Shl, "bitwise_left_shift", ShlOp, kI, BoolI8, Same)        \
  X(Shr, "bitwise_right_shift", ShrOp, kI, BoolI8, Same)       \
  X(Eq, "eq", EqOp, kAll, None, Bool) /* bool results last */  \
  X(Ne, "ne", NeOp, kAll, None, Bool)                          \
  X(Lt, "lt", LtOp, kBIF, None, Bool)                          \
  X(Le, "le", LeOp, kBIF, None, Bool)                          \
  X(Gt, "gt", GtOp, kBIF, None, Bool)                          \
  X(Ge, "ge", GeOp, kBIF, None, Bool)                          \
  X(LogicalAnd, "logical_and", LogicalAndOp, kAll, None, Bool) \
  X(LogicalOr, "logical_or", LogicalOrOp, kAll, None, Bool)    \
  X(LogicalXor, "logical_xor", LogicalXorOp, kAll, None, Bool)

#define CULUA_UNARY_OPS(X)                                     \
  X(Neg, "neg", NegOp, kIFC, None, Same)                       \
  X(Abs, "abs", AbsOp, kAll, None, Real)                       \
  X(Exp, "exp", ExpOp, kFC, Float, Same)                       \
  X(Log, "log", LogOp, kFC, Float, Same)                       \
  X(Sqrt, "sqrt", SqrtOp, kFC, Float, Same)                    \
  X(Sin, "sin", SinOp, kFC, Float, Same)                       \
  X(Cos, "cos", CosOp, kFC, Float, Same)                       \
  X(Tanh, "tanh", TanhOp, kFC, Float, Same)                    \
  X(Conj, "conj", ConjOp, kAll, None, Same)                    \
  X(Real, "real", RealOp, kAll, None, Real)                    \
  X(Imag, "imag", ImagOp, kAll, None, Real)                    \
  X(Acos, "acos", AcosOp, kFC, Float, Same)                    \
  X(Acosh, "acosh", AcoshOp, kFC, Float, Same)                 \
  X(Asin, "asin", AsinOp, kFC, Float, Same)                    \
  X(Asinh, "asinh", AsinhOp, kFC, Float, Same)                 \
  X(Atan, "atan", AtanOp, kFC, Float, Same)                    \
  X(Atanh, "atanh", AtanhOp, kFC, Float, Same)                 \
  X(Cosh, "cosh", CoshOp, kFC, Float, Same)                    \
  X(Sinh, "sinh", SinhOp, kFC, Float, Same)                    \
  X(Tan, "tan", TanOp, kFC, Float, Same)                       \
  X(Expm1, "expm1", Expm1Op, kFC, Float, Same)                 \
  X(Log1p, "log1p", Log1pOp, kFC, Float, Same)                 \
  X(Log2, "log2", Log2Op, kFC, Float, Same)                    \
  X(Log10, "log10", Log10Op, kFC, Float, Same)                 \
  X(Square, "square", SquareOp, kIFC, BoolI8, Same)            \
  X(Positive, "positive", PositiveOp, kIFC, None, Same)        \
  X(Sign, "sign", SignOp, kIFC, None, Same)                    \
  X(Floor, "floor", FloorOp, kIF, None, Same)                  \
  X(Ceil, "ceil", CeilOp, kIF, None, Same)                     \
  X(Trunc, "trunc", TruncOp, kIF, None, Same)                  \
  X(Round, "round", RoundOp, kIFC, None, Same)                 \
  X(Signbit, "signbit", SignbitOp, kBIF, None, Bool)           \
  X(Isnan, "isnan", IsnanOp, kAll, None, Bool)                 \
  X(Isinf, "isinf", IsinfOp, kAll, None, Bool)                 \
  X(Isfinite, "isfinite", IsfiniteOp, kAll, None, Bool)        \
  X(BitInvert, "bitwise_invert", BitInvertOp, kBI, None, Same) \
  X(LogicalNot, "logical_not", LogicalNotOp, kAll, None, Bool)

#define CULUA_REDUCE_OPS(X)                                \
  X(Sum, "sum", kAll, Accumulate)                          \
  X(Mean, "mean", kAll, Mean)                              \
  X(Max, "max", kBIF, Same)                                \
  X(Min, "min", kBIF, Same)                                \
  X(Prod, "prod", kAll, Accumulate)                        \
  X(Norm, "norm", kAll, RealFloat)                         \
  X(Argmax, "argmax", kBIF, Index)                         \
  X(Argmin, "argmin", kBIF, Index)                         \
  X(Var, "var", kAll, RealFloat) /* statistics */          \
  X(Std, "std", kAll, RealFloat)                           \
  X(Any, "any", kAll, Bool)                                \
  X(All, "all", kAll, Bool)                                \
  X(NanSum, "nansum", kAll, Accumulate) /* NaN-skipping */ \
  X(NanMean, "nanmean", kAll, Mean)                        \
  X(NanMax, "nanmax", kBIF, Same)                          \
  X(NanMin, "nanmin", kBIF, Same)                          \
  X(NanProd, "nanprod", kAll, Accumulate)                  \
  X(NanVar, "nanvar", kAll, RealFloat)                     \
  X(NanStd, "nanstd", kAll, RealFloat)

namespace culua::detail {

#define CULUA_OP_ENUM(e, ...) e,
#define CULUA_OP_COUNT(e, ...) +1
enum class BinaryOp : uint8_t { CULUA_BINARY_OPS(CULUA_OP_ENUM) };
inline constexpr int kNumBinaryOps = 0 CULUA_BINARY_OPS(CULUA_OP_COUNT);
enum class UnaryOp : uint8_t { CULUA_UNARY_OPS(CULUA_OP_ENUM) };
inline constexpr int kNumUnaryOps = 0 CULUA_UNARY_OPS(CULUA_OP_COUNT);
enum class ReduceOp : uint8_t { CULUA_REDUCE_OPS(CULUA_OP_ENUM) };
inline constexpr int kNumReduceOps = 0 CULUA_REDUCE_OPS(CULUA_OP_COUNT);
#undef CULUA_OP_ENUM
#undef CULUA_OP_COUNT

// What kind of operation a row of a table is (the fusion engine groups by it).
enum class OpKind : uint8_t { Unary, Binary, Where, Reduction };

// Classes of compute type, as a mask.
namespace opclass {
inline constexpr uint8_t kB = 1, kI = 2, kF = 4, kC = 8;
inline constexpr uint8_t kAll = kB | kI | kF | kC, kIFC = kI | kF | kC, kFC = kF | kC,
                         kIF = kI | kF, kBI = kB | kI, kBIF = kB | kI | kF;
}  // namespace opclass

enum class OpPromote : uint8_t { None, TrueDiv, FloatPair, BoolI8, Float };
enum class OpResult : uint8_t { Same, Bool, Real, Accumulate, Mean, RealFloat, Index };

struct OpRule {
  uint8_t accepts;  // opclass mask of compute types
  OpPromote promote;
  OpResult result;
};

#define CULUA_OP_RULE(e, name, functor, accepts, promote, result) \
  OpRule{opclass::accepts, OpPromote::promote, OpResult::result},
inline constexpr OpRule kBinaryRules[kNumBinaryOps] = {CULUA_BINARY_OPS(CULUA_OP_RULE)};
inline constexpr OpRule kUnaryRules[kNumUnaryOps] = {CULUA_UNARY_OPS(CULUA_OP_RULE)};
#undef CULUA_OP_RULE
#define CULUA_REDUCE_RULE(e, name, accepts, result) \
  OpRule{opclass::accepts, OpPromote::None, OpResult::result},
inline constexpr OpRule kReduceRules[kNumReduceOps] = {CULUA_REDUCE_OPS(CULUA_REDUCE_RULE)};
#undef CULUA_REDUCE_RULE

constexpr const OpRule& rule(BinaryOp op) {
  return kBinaryRules[static_cast<int>(op)];
}
constexpr const OpRule& rule(UnaryOp op) {
  return kUnaryRules[static_cast<int>(op)];
}
constexpr const OpRule& rule(ReduceOp op) {
  return kReduceRules[static_cast<int>(op)];
}
constexpr OpKind kind_of(BinaryOp) {
  return OpKind::Binary;
}
constexpr OpKind kind_of(UnaryOp) {
  return OpKind::Unary;
}
constexpr OpKind kind_of(ReduceOp) {
  return OpKind::Reduction;
}
constexpr bool accepts(const OpRule& r, uint8_t cls) {
  return (r.accepts & cls) != 0;
}
// The class of a dtype, as the table's masks spell it.
constexpr uint8_t op_class(DType t) {
  switch (t) {
    case DType::Bool:
      return opclass::kB;
    case DType::F32:
    case DType::F64:
    case DType::F16:
    case DType::BF16:
      return opclass::kF;
    case DType::C64:
    case DType::C128:
      return opclass::kC;
    default:
      return opclass::kI;
  }
}
constexpr bool accepts(const OpRule& r, DType t) {
  return accepts(r, op_class(t));
}
constexpr bool is_unsigned_dtype(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
// The result dtype of an operation computed in (for reductions: over elements of) `compute`.
constexpr DType result_dtype(const OpRule& r, DType compute) {
  const uint8_t cls = op_class(compute);
  const bool integral = cls == opclass::kB || cls == opclass::kI;
  const DType real = compute == DType::C64    ? DType::F32
                     : compute == DType::C128 ? DType::F64
                                              : compute;
  switch (r.result) {
    case OpResult::Bool:
      return DType::Bool;
    case OpResult::Real:
      return real;
    case OpResult::Accumulate:
      if (is_unsigned_dtype(compute)) return DType::U64;
      return integral ? DType::I64 : compute;
    case OpResult::Mean:
      return integral ? DType::F64 : compute;
    case OpResult::RealFloat:
      return integral ? DType::F64 : real;
    case OpResult::Index:
      return DType::I64;
    case OpResult::Same:
      break;
  }
  return compute;
}
// Comparisons and logical operations: bool results (they come last in the table).
constexpr bool is_comparison(BinaryOp op) {
  return rule(op).result == OpResult::Bool;
}

}  // namespace culua::detail
