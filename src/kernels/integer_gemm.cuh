// The element logic of integer and bool matrix products, shared by the CUDA kernel
// (integer_gemm.cu) and the host loops (integer_gemm_host.cpp), so that both backends give the
// same bits. Integers multiply and add in modular arithmetic (2^32 or 2^64) and wrap to the result
// dtype at the end: the low bits of a sum of products do not depend on the order or the width of
// the accumulator, so this is exactly numpy's accumulation in the result dtype with wraparound.
// bool is numpy's: the or of ands.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/backend/blas_call.hpp"
#include "core/model/numeric.hpp"

namespace culua::detail::kernels::integer_gemm {

// The accumulator: residues modulo 2^32 suffice for results of at most 32 bits (cheaper on the
// GPU than 64-bit products), modulo 2^64 for i64.
template <class T>
using Acc = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

// An element as a residue: signed types sign-extend, unsigned types and bool zero-extend.
template <class T>
CULUA_HD inline Acc<T> widen(T v) {
  return static_cast<Acc<T>>(static_cast<int64_t>(v));
}

// Element (row, col) of op(X), X column-major with leading dimension ld.
template <class T>
CULUA_HD inline Acc<T> operand_at(const T* x, bool trans, int64_t ld, int64_t row, int64_t col) {
  return widen(trans ? x[col + row * ld] : x[row + col * ld]);
}

// acc + a b for integers; acc or (a and b) for bool.
template <class T>
CULUA_HD inline Acc<T> multiply_add(Acc<T> acc, Acc<T> a, Acc<T> b) {
  if constexpr (std::is_same_v<T, bool>) {
    return acc | (a & b);
  } else {
    return acc + a * b;
  }
}

// C = alpha sum + beta C (C read only when read_c), wrapped to T; bool: the sum itself.
template <class T>
CULUA_HD inline T finish(Acc<T> sum, uint64_t alpha, uint64_t beta, bool read_c, const T* c) {
  if constexpr (std::is_same_v<T, bool>) {
    return sum != 0;
  } else {
    Acc<T> r = static_cast<Acc<T>>(alpha) * sum;
    if (read_c) r += static_cast<Acc<T>>(beta) * widen(*c);
    return static_cast<T>(r);  // modular (two's complement) narrowing
  }
}

}  // namespace culua::detail::kernels::integer_gemm
