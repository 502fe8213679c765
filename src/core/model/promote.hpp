// Type promotion of the math operations, numpy's rules: bool < integers < floats < complex; an
// integer meeting a float gives the smallest float of at least that width that holds the integer
// type exactly (i8/u8 with f16 -> f16, i16 with f16 -> f32, i32 with f32 -> f64); f16 with bf16 ->
// f32; an unsigned integer with a signed one gives the smallest signed type holding both (u16 with
// i8 -> i32), but u64 with any signed integer gives f64 as in numpy. Scalars from Lua are "weak"
// (NEP 50): they take the array's type within their kind.
#pragma once

#include "core/model/dtype.hpp"
#include "core/model/scalar.hpp"

namespace culua::detail {

// The common type of two array dtypes.
DType promote_types(DType a, DType b);
// The result type of an array of type `a` meeting a scalar `s` (the scalar's kind counts, not its
// value: an integer scalar with a u8 array gives u8; a float scalar with an i32 array gives f64;
// a complex scalar with an f32 array gives c64).
DType promote_with_scalar(DType a, const Scalar& s);
// The dtype a lone scalar gets: bool, i64, f64 or c128.
DType scalar_dtype(const Scalar& s);

// The float type that holds every value of `t` exactly (f16 for bool/i8/u8, f32 for i16, f64 for
// wider integers); floats and complex types map to themselves.
DType float_for(DType t);
// The real type of a complex type (c64 -> f32, c128 -> f64); others map to themselves.
DType real_of(DType t);
// The complex type whose parts hold `t` (f16/bf16/f32 -> c64, f64 and integers -> c128).
DType complex_of(DType t);

// numpy's can_cast(from, to, "same_kind"): a cast within a kind (narrowing included) or to a later
// kind in the order bool < unsigned < signed < float < complex (u8 -> i8 is allowed, i32 -> u8,
// f32 -> i64 and c64 -> f64 are not).
bool can_cast_same_kind(DType from, DType to);
// Throws Error(Type) when an out= array of dtype `out` cannot take a `result` under that rule.
void check_out_dtype(DType result, DType out);

}  // namespace culua::detail
