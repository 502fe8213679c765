// Elementwise math: the operations' names, their types (promotion, the op table's rules),
// broadcasting, and their launch (operands, out=, inputs that overlap the output).
#include "core/ops/elementwise.hpp"
#include <algorithm>
#include <cstring>
#include <vector>
#include "core/backend/elementwise_call.hpp"
#include "core/base/error.hpp"
#include "core/model/promote.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"

namespace culua::detail {

#define CULUA_OP_NAME(e, name, ...) name,
const char* op_name(BinaryOp op) {
  static constexpr const char* kNames[kNumBinaryOps] = {CULUA_BINARY_OPS(CULUA_OP_NAME)};
  return kNames[static_cast<int>(op)];
}

const char* op_name(UnaryOp op) {
  static constexpr const char* kNames[kNumUnaryOps] = {CULUA_UNARY_OPS(CULUA_OP_NAME)};
  return kNames[static_cast<int>(op)];
}
#undef CULUA_OP_NAME

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

}  // namespace culua::detail

namespace culua::detail {

namespace {

DType operand_type(const Operand& o) {
  return o.array ? o.array->dtype() : scalar_dtype(o.scalar);
}

DType common_type(const Operand& a, const Operand& b) {
  if (a.array && b.array) return promote_types(a.array->dtype(), b.array->dtype());
  if (a.array) return promote_with_scalar(a.array->dtype(), b.scalar);
  if (b.array) return promote_with_scalar(b.array->dtype(), a.scalar);
  return promote_types(scalar_dtype(a.scalar), scalar_dtype(b.scalar));
}

// A view of `a` with the shape `out` (stride 0 along broadcast dimensions).
StridedView broadcast_view(const Array& a, const Shape& out) {
  StridedView v;
  v.data = a.data();
  v.dtype = a.dtype();
  v.ndim = out.ndim;
  v.size = out.numel();
  const Layout& l = a.layout();
  const int shift = out.ndim - l.ndim;
  for (int i = 0; i < out.ndim; ++i) {
    v.shape[i] = out[i];
    const int j = i - shift;
    if (j < 0 || (l.shape[static_cast<size_t>(j)] == 1 && out[i] != 1)) {
      v.strides[i] = 0;
    } else {
      v.strides[i] = l.strides[static_cast<size_t>(j)];
    }
  }
  return v;
}

// Does writing element i of out only ever read element i of `in` (safe in place)?
bool same_elements(const Array& out, const StridedView& in) {
  if (out.dtype() != in.dtype || out.data() != in.data) return false;
  const StridedView o = out.view();
  if (o.ndim != in.ndim) return false;
  for (int i = 0; i < o.ndim; ++i) {
    if (o.shape[i] > 1 && o.strides[i] != in.strides[i]) return false;
  }
  return true;
}

// The launcher of elementwise operations: its operands (at most three: where) checked alive and on
// one side and device, its out= array checked or a new one made, and inputs that overlap the
// output in another layout copied first.
class ElementwiseLauncher : public Launcher {
 public:
  ElementwiseLauncher(Runtime& rt, ArrayList<3> inputs, Stream* stream)
      : Launcher(rt, placed(inputs), stream, "host array math"), inputs_(inputs) {}

  // The output: `out` (checked) or a new array.
  Array output(const Shape& shape, DType result, const Array* out) {
    if (!out) return empty(shape, result);
    out->check_alive("the out array");
    if (is_host(out->location()) != host() || (!host() && out->device() != first().device())) {
      fail(ErrorKind::Value, "the out array must be where the operands are ({})",
           host() ? "host" : fmt::format("device {}", first().device()));
    }
    if (!(out->shape() == shape)) {
      fail(ErrorKind::Value, "out has shape {} but the result has shape {}", out->shape().str(),
           shape.str());
    }
    check_out_dtype(result, out->dtype());
    return *out;
  }

  // Inputs that overlap the output in another layout are copied first (numpy's semantics).
  StridedView input_view(const Array& a, const Shape& shape, const Array& out) {
    StridedView v = broadcast_view(a, shape);
    if (overlaps(a, out) && !same_elements(out, v)) {
      temporaries_.push_back(clone(runtime(), a, stream()));
      v = broadcast_view(temporaries_.back(), shape);
    }
    return v;
  }

  void run(const ElementwiseCall& c, const Array& out) {
    if (out.size() == 0) return;
    wait(inputs_, out);
    Launcher::run(c, inputs_, temporaries_, out);
  }

 private:
  // The first operand and its side, once every operand is alive and all are on one side and
  // device.
  static Side placed(const ArrayList<3>& inputs) {
    const Array* first = nullptr;
    bool host = false;
    for (const Array* a : inputs) {
      a->check_alive("an operand");
      const bool on_host = is_host(a->location());
      if (!first) {
        first = a;
        host = on_host;
        continue;
      }
      if (on_host != host) {
        fail(ErrorKind::Value,
             "operands are on the device and on the host; move them to one side first "
             "(call to_device() on the host array, or to_host() on the device one)");
      }
      if (!on_host && a->device() != first->device()) {
        fail(ErrorKind::Value, "operands are on devices {} and {}; copy one with cu.copy first",
             first->device(), a->device());
      }
    }
    if (!first) fail(ErrorKind::Type, "at least one operand must be an array");
    return {first, host};
  }

  ArrayList<3> inputs_;
  std::vector<Array> temporaries_;
};

void set_operand(ElementOperand& o, const Operand& x, DType compute, const Shape& shape,
                 ElementwiseLauncher& l, const Array& out) {
  if (x.array) {
    o.view = l.input_view(*x.array, shape, out);
  } else {
    o.view = StridedView{};
    o.view.data = nullptr;
    encode_scalar(compute, x.scalar, o.scalar);
  }
}

ArrayList<3> arrays_of(std::initializer_list<const Operand*> ops) {
  ArrayList<3> v{};
  for (const Operand* o : ops) {
    if (o->array) v.push(o->array);
  }
  return v;
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  Shape r;
  const int n = std::max(a.ndim, b.ndim);
  for (int i = 0; i < n; ++i) {
    const int ia = i - (n - a.ndim), ib = i - (n - b.ndim);
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      fail(ErrorKind::Value, "shapes {} and {} cannot be broadcast together", a.str(), b.str());
    }
    r.push(da == 1 ? db : da);
  }
  return r;
}

ElementwiseTypes binary_types(BinaryOp op, const Operand& a, const Operand& b) {
  const OpRule& r = rule(op);
  DType t = common_type(a, b);
  switch (r.promote) {
    case OpPromote::None:
    case OpPromote::Float:
      break;
    case OpPromote::TrueDiv:
      if (kind_rank(t) < 2) t = DType::F64;
      break;
    case OpPromote::BoolI8:  // numpy has no bool power or shift: bool ^ bool is i8
      if (t == DType::Bool) t = DType::I8;
      break;
    case OpPromote::FloatPair:
      // Integers and bools go to the float type numpy picks, the smallest that both operands
      // cast to safely (i8 -> f16, i16 -> f32, i32 and i64 -> f64; i8 with u8 is f16, not the f32
      // of their common i16).
      if (a.array && b.array && kind_rank(a.array->dtype()) < 2 &&
          kind_rank(b.array->dtype()) < 2) {
        t = promote_types(float_for(a.array->dtype()), float_for(b.array->dtype()));
      } else if (kind_rank(t) < 2) {
        t = float_for(t);
      }
      break;
  }
  if (!accepts(r, t)) {
    fail(ErrorKind::Type, "{} is not defined for {} operands ({} and {})", op_name(op), name(t),
         name(operand_type(a)), name(operand_type(b)));
  }
  return {t, result_dtype(r, t)};
}

// What an operation's operands must be, for its error message.
static const char* expected(uint8_t accepts) {
  using namespace opclass;
  if (accepts == kIFC) return "use astype first";
  if (accepts == kIF || accepts == kBIF) return "a real number is expected";
  if (accepts == kBI) return "integers or bools are expected";
  return "another dtype is expected";
}

ElementwiseTypes unary_types(UnaryOp op, DType a) {
  const OpRule& r = rule(op);
  DType t = a;
  if (r.promote == OpPromote::Float) t = float_for(a);
  if (r.promote == OpPromote::BoolI8 && a == DType::Bool)
    t = DType::I8;  // numpy squares bools in i8
  if (!accepts(r, t)) {
    fail(ErrorKind::Type, "{} is not defined for {} ({})", op_name(op), name(a),
         op == UnaryOp::Round ? "a real or complex number is expected" : expected(r.accepts));
  }
  return {t, result_dtype(r, t)};
}

Array binary(Runtime& rt, BinaryOp op, const Operand& a, const Operand& b, const Array* out,
             Stream* stream) {
  ElementwiseLauncher l(rt, arrays_of({&a, &b}), stream);
  const ElementwiseTypes types = binary_types(op, a, b);
  const Shape shape =
      broadcast_shapes(a.array ? a.array->shape() : Shape{}, b.array ? b.array->shape() : Shape{});
  ElementwiseCall c;
  c.kind = ElementwiseCall::Kind::Binary;
  c.op = static_cast<uint8_t>(op);
  c.compute = types.compute;
  // Scalars are checked (encoded) before anything is allocated.
  unsigned char check[kMaxItemSize];
  for (const Operand* o : {&a, &b}) {
    if (!o->array) encode_scalar(types.compute, o->scalar, check);
  }
  Array result = l.output(shape, types.result, out);
  set_operand(c.in[0], a, types.compute, shape, l, result);
  set_operand(c.in[1], b, types.compute, shape, l, result);
  c.out = result.view();
  l.run(c, result);
  return result;
}

Array unary(Runtime& rt, UnaryOp op, const Array& a, const Array* out, Stream* stream) {
  ElementwiseLauncher l(rt, {&a}, stream);
  const ElementwiseTypes types = unary_types(op, a.dtype());
  ElementwiseCall c;
  c.kind = ElementwiseCall::Kind::Unary;
  c.op = static_cast<uint8_t>(op);
  c.compute = types.compute;
  Array result = l.output(a.shape(), types.result, out);
  set_operand(c.in[0], Operand(a), types.compute, a.shape(), l, result);
  c.out = result.view();
  l.run(c, result);
  return result;
}

Array clip(Runtime& rt, const Array& x, const Operand* lo, const Operand* hi, const Array* out,
           Stream* stream) {
  auto shape_of = [](const Operand* o) { return o && o->array ? o->array->shape() : Shape{}; };
  const Shape first = broadcast_shapes(x.shape(), shape_of(lo));
  const Shape shape = broadcast_shapes(first, shape_of(hi));
  if (!lo && !hi) return binary(rt, BinaryOp::Maximum, x, x, out, stream);  // a copy of x
  if (!hi) return binary(rt, BinaryOp::Maximum, x, *lo, out, stream);
  if (!lo) return binary(rt, BinaryOp::Minimum, x, *hi, out, stream);
  if (out && !(out->shape() == shape)) {  // checked before the first step writes anything
    fail(ErrorKind::Value, "out has shape {} but the result has shape {}", out->shape().str(),
         shape.str());
  }
  // maximum into out when it has the shape of that step and hi is not in it; else into a new
  // array (then the minimum works in place in it when it has the final shape).
  const bool into_out = out && out->shape() == first && !(hi->array && overlaps(*hi->array, *out));
  Array r = binary(rt, BinaryOp::Maximum, x, *lo, into_out ? out : nullptr, stream);
  const Array* second = out ? out : (r.shape() == shape ? &r : nullptr);
  return binary(rt, BinaryOp::Minimum, r, *hi, second, stream);
}

Array where(Runtime& rt, const Operand& cond, const Operand& x, const Operand& y, const Array* out,
            Stream* stream) {
  ElementwiseLauncher l(rt, arrays_of({&cond, &x, &y}), stream);
  const DType t = common_type(x, y);
  const Shape s1 = broadcast_shapes(cond.array ? cond.array->shape() : Shape{},
                                    x.array ? x.array->shape() : Shape{});
  const Shape shape = broadcast_shapes(s1, y.array ? y.array->shape() : Shape{});
  unsigned char check[kMaxItemSize];
  for (const Operand* o : {&x, &y}) {
    if (!o->array) encode_scalar(t, o->scalar, check);
  }
  ElementwiseCall c;
  c.kind = ElementwiseCall::Kind::Where;
  c.compute = t;
  Array result = l.output(shape, t, out);
  if (cond.array) {
    c.in[0].view = l.input_view(*cond.array, shape, result);
  } else {
    c.in[0].view.data = nullptr;
    const bool v = cond.scalar.as_double() != 0 || cond.scalar.im != 0;
    std::memcpy(c.in[0].scalar, &v, 1);
  }
  set_operand(c.in[1], x, t, shape, l, result);
  set_operand(c.in[2], y, t, shape, l, result);
  c.out = result.view();
  l.run(c, result);
  return result;
}

}  // namespace culua::detail
