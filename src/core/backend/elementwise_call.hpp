// The description of one elementwise kernel launch: unary, binary or where, over operands
// already broadcast to the output's shape.
#pragma once

#include <cstdint>

#include "core/backend/op_table.hpp"
#include "core/model/layout.hpp"

namespace culua::detail {

const char* op_name(BinaryOp op);
const char* op_name(UnaryOp op);
// An input: a view with the output's shape (stride 0 along broadcast dimensions), or a scalar
// (view.data == nullptr) already encoded as an element of the compute type.
struct ElementOperand {
  StridedView view;
  alignas(16) unsigned char scalar[16] = {};
  bool is_scalar() const { return view.data == nullptr; }
};

struct ElementwiseCall {
  enum class Kind : uint8_t { Unary, Binary, Where };
  Kind kind = Kind::Binary;
  uint8_t op = 0;              // a UnaryOp or BinaryOp
  DType compute = DType::F32;  // inputs are converted to this type (where: x and y)
  StridedView out;             // any dtype; results are converted to it
  ElementOperand in[3];        // unary: in[0]; binary: in[0], in[1]; where: cond, x, y

  const char* name() const;
};

}  // namespace culua::detail
