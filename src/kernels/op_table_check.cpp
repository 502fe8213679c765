// Every functor against its row of the op table (core/op_table.hpp), for every dtype: where the row
// says the operation is defined, the functor's result must be stored as the dtype the row's result
// rule gives (core/elementwise.cpp types the output by the row; the kernels store what the functor
// returns). A mismatch fails to compile here instead of writing nothing at run time.
#include "core/dtype.hpp"
#include "core/op_table.hpp"
#include "kernels/elementwise.cuh"

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

}  // namespace
}  // namespace culua::detail::kernels
