#include "core/elementwise_call.hpp"

namespace culua {

const char* op_name(BinaryOp op) {
  static constexpr const char* kNames[kNumBinaryOps] = {
      "add", "sub", "mul", "div", "pow", "maximum", "minimum", "floordiv",
      "mod", "eq",  "ne",  "lt",  "le",  "gt",      "ge"};
  return kNames[static_cast<int>(op)];
}

const char* op_name(UnaryOp op) {
  static constexpr const char* kNames[kNumUnaryOps] = {"neg", "abs",  "exp",  "log",  "sqrt", "sin",
                                                       "cos", "tanh", "conj", "real", "imag"};
  return kNames[static_cast<int>(op)];
}

const char* ElementwiseCall::name() const {
  switch (kind) {
    case Kind::Unary:
      return op_name(static_cast<UnaryOp>(op));
    case Kind::Binary:
      return op_name(static_cast<BinaryOp>(op));
    case Kind::Where:
      return "where";
  }
  return "elementwise";
}

}  // namespace culua
