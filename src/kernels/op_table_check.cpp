// Every functor against its row of the op table (core/backend/op_table.hpp), for every dtype: where
// the row says the operation is defined, the functor's result must be stored as the dtype the row's
// result rule gives (core/ops/elementwise.cpp types the output by the row; the kernels store what
// the functor returns). A mismatch fails to compile here instead of writing nothing at run time.
// The same for the reductions: for every op and dtype, the functor that both backends run
// (dispatch_op_typed) exists exactly where the row accepts the dtype, and its result type is the
// row's result dtype (the dtype the core gives the output, reduce_result_dtype).
#include "core/backend/op_table.hpp"
#include "core/backend/reduce_acc.hpp"
#include "core/backend/reduce_call.hpp"
#include "core/model/dtype.hpp"
#include "kernels/elementwise.cuh"
#include "kernels/reduce.cuh"

namespace culua::detail::kernels {
namespace {

template <class Op, class S>
constexpr bool result_matches() {
  using C = compute_t<S>;
  if constexpr (!op_valid<Op, C>) {
    return true;
  } else {
    using R = decltype(Op::apply(C{}, C{}));
    return dtype_of<out_storage_t<S, R>>() == result_dtype(op_row<Op>::rule, dtype_of<S>());
  }
}
template <class Op, class S>
constexpr bool unary_result_matches() {
  using C = compute_t<S>;
  if constexpr (!op_valid<Op, C>) {
    return true;
  } else {
    using R = decltype(Op::apply(C{}));
    return dtype_of<out_storage_t<S, R>>() == result_dtype(op_row<Op>::rule, dtype_of<S>());
  }
}
template <class Op, template <class, class> class Check>
constexpr bool for_every_dtype() {
  return Check<Op, float>::value && Check<Op, double>::value && Check<Op, half>::value &&
         Check<Op, bfloat16>::value && Check<Op, int8_t>::value && Check<Op, int16_t>::value &&
         Check<Op, int32_t>::value && Check<Op, int64_t>::value && Check<Op, uint8_t>::value &&
         Check<Op, uint16_t>::value && Check<Op, uint32_t>::value && Check<Op, uint64_t>::value &&
         Check<Op, bool>::value && Check<Op, complex64>::value && Check<Op, complex128>::value;
}
template <class Op, class S>
struct BinaryCheck : std::bool_constant<result_matches<Op, S>()> {};
template <class Op, class S>
struct UnaryCheck : std::bool_constant<unary_result_matches<Op, S>()> {};

#define CULUA_CHECK_BINARY(e, name, functor, ...)                                             \
  static_assert(for_every_dtype<functor, BinaryCheck>(), "op table: the result type of " name \
                                                         " disagrees with its "               \
                                                         "functor for some dtype");
#define CULUA_CHECK_UNARY(e, name, functor, ...)                                             \
  static_assert(for_every_dtype<functor, UnaryCheck>(), "op table: the result type of " name \
                                                        " disagrees with its "               \
                                                        "functor for some dtype");
CULUA_BINARY_OPS(CULUA_CHECK_BINARY)
CULUA_UNARY_OPS(CULUA_CHECK_UNARY)
#undef CULUA_CHECK_BINARY
#undef CULUA_CHECK_UNARY

// The reductions: -1 where dispatch_op_typed has no functor, else its result's dtype.
template <class T>
constexpr bool reductions_match() {
  for (int i = 0; i < kNumReduceOps; ++i) {
    const auto op = static_cast<ReduceOp>(i);
    const int got = reduce::dispatch_op_typed<T>(op, 0.0, -1, [](auto f) {
      return static_cast<int>(dtype_of<typename decltype(f)::Out>());
    });
    // As reduce_result_dtype reads the table: nanmax and nanmin keep their rows (they order
    // NaNs), the other nan* ops are their plain op's.
    const ReduceOp row = op == ReduceOp::NanMax || op == ReduceOp::NanMin ? op : without_nan(op);
    const bool defined = accepts(rule(row), dtype_of<T>());
    if (defined != (got >= 0)) return false;
    if (defined && got != static_cast<int>(result_dtype(rule(row), dtype_of<T>()))) return false;
  }
  return true;
}
static_assert(reductions_match<float>() && reductions_match<double>() && reductions_match<half>() &&
                  reductions_match<bfloat16>() && reductions_match<int8_t>() &&
                  reductions_match<int16_t>() && reductions_match<int32_t>() &&
                  reductions_match<int64_t>() && reductions_match<uint8_t>() &&
                  reductions_match<uint16_t>() && reductions_match<uint32_t>() &&
                  reductions_match<uint64_t>() && reductions_match<bool>() &&
                  reductions_match<complex64>() && reductions_match<complex128>(),
              "op table: a reduction's functor disagrees with its row (defined dtypes or result "
              "dtype)");

// The accumulators' sizes that the generated kernels of cu.fuse allocate
// (core/backend/reduce_acc.hpp).
template <class T>
constexpr bool accumulators_match() {
  for (int i = 0; i < kNumReduceOps; ++i) {
    const auto op = static_cast<ReduceOp>(i);
    const bool same = reduce::dispatch_op_typed<T>(op, 0.0, true, [&](auto f) {
      const ReduceOp mapped = std::is_integral_v<T> ? without_nan(op) : op;
      return sizeof(typename decltype(f)::Acc) == reduce_acc_bytes(mapped, dtype_of<T>());
    });
    if (!same) return false;
  }
  return true;
}
static_assert(
    accumulators_match<float>() && accumulators_match<double>() && accumulators_match<half>() &&
        accumulators_match<bfloat16>() && accumulators_match<int8_t>() &&
        accumulators_match<int16_t>() && accumulators_match<int32_t>() &&
        accumulators_match<int64_t>() && accumulators_match<uint8_t>() &&
        accumulators_match<uint16_t>() && accumulators_match<uint32_t>() &&
        accumulators_match<uint64_t>() && accumulators_match<bool>() &&
        accumulators_match<complex64>() && accumulators_match<complex128>(),
    "core/backend/reduce_acc.hpp: an accumulator's size disagrees with its functor's Acc");

}  // namespace
}  // namespace culua::detail::kernels
