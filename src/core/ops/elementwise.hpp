// Elementwise math on arrays: unary and binary operations and where(), with numpy broadcasting
// and type promotion (core/model/promote.hpp). Device arrays are computed on a stream
// (asynchronous); host arrays on the calling thread once the work queued on them is done.
#pragma once

#include <optional>

#include "core/backend/elementwise_call.hpp"
#include "core/model/array.hpp"
#include "core/model/scalar.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// An operand: an array or a scalar.
struct Operand {
  const Array* array = nullptr;
  Scalar scalar;
  Operand(const Array& a) : array(&a) {}  // NOLINT: implicit on purpose
  Operand(const Scalar& s) : scalar(s) {}
};

struct ElementwiseTypes {
  DType compute;  // what the inputs are converted to
  DType result;   // the dtype of a new result array
};

// The types of an operation; throws Error(Type) when the operation is not defined for them
// (comparisons of complex values, subtraction of bools, ...).
ElementwiseTypes binary_types(BinaryOp op, const Operand& a, const Operand& b);
ElementwiseTypes unary_types(UnaryOp op, DType a);

// numpy broadcasting of two shapes; throws Error(Value) showing both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// At least one operand must be an array. `out` (optional) must have the broadcast shape and a
// dtype of the result's kind or a wider kind (numpy's same_kind casting); it is returned.
Array binary(Runtime& rt, BinaryOp op, const Operand& a, const Operand& b,
             const Array* out = nullptr, Stream* stream = nullptr);
Array unary(Runtime& rt, UnaryOp op, const Array& a, const Array* out = nullptr,
            Stream* stream = nullptr);
// clip(x, lo, hi) = minimum(maximum(x, lo), hi) (numpy's clip: NaN propagates, lo > hi gives
// hi); a null bound is absent, and without either the result is a copy of x. The result has the
// broadcast shape of the three and the promoted dtype.
Array clip(Runtime& rt, const Array& x, const Operand* lo, const Operand* hi,
           const Array* out = nullptr, Stream* stream = nullptr);
// Elements of x where cond is nonzero, else of y.
Array where(Runtime& rt, const Operand& cond, const Operand& x, const Operand& y,
            const Array* out = nullptr, Stream* stream = nullptr);

}  // namespace culua::detail
