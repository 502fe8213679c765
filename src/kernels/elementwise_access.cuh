// The elementwise kernels' element access, for both backends: elements of a run-time dtype loaded
// and stored as a compute type (load_dynamic, store_dynamic), the storage type of a result, 16-byte
// vectors, scalars from their bytes, and CULUA_UNROLL. kernels/elementwise.cuh builds on it.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/elementwise_ops.cuh"
#include "kernels/functors.cuh"

// Unrolls a loop of fixed trip count in device code.
#if defined(__CUDA_ARCH__)
#define CULUA_UNROLL _Pragma("unroll")
#else
#define CULUA_UNROLL
#endif

namespace culua::detail::kernels {

// Reads element `off` of an array of run-time dtype `t`, converted to C.
template <class C>
CULUA_HD inline C load_dynamic(const void* base, DType t, int64_t off) {
  switch (t) {
    case DType::F32:
      return convert<C>(static_cast<const float*>(base)[off]);
    case DType::F64:
      return convert<C>(static_cast<const double*>(base)[off]);
    case DType::F16:
      return convert<C>(static_cast<const half*>(base)[off]);
    case DType::BF16:
      return convert<C>(static_cast<const bfloat16*>(base)[off]);
    case DType::I8:
      return convert<C>(static_cast<const int8_t*>(base)[off]);
    case DType::I16:
      return convert<C>(static_cast<const int16_t*>(base)[off]);
    case DType::I32:
      return convert<C>(static_cast<const int32_t*>(base)[off]);
    case DType::I64:
      return convert<C>(static_cast<const int64_t*>(base)[off]);
    case DType::U8:
      return convert<C>(static_cast<const uint8_t*>(base)[off]);
    case DType::U16:
      return convert<C>(static_cast<const uint16_t*>(base)[off]);
    case DType::U32:
      return convert<C>(static_cast<const uint32_t*>(base)[off]);
    case DType::U64:
      return convert<C>(static_cast<const uint64_t*>(base)[off]);
    case DType::Bool:
      // Through the byte: memory never written (an array read before a graph filled it) may hold
      // any byte, and loading one other than 0 or 1 as a bool is undefined.
      return convert<C>(static_cast<const uint8_t*>(base)[off] != 0);
    case DType::C64:
      return convert<C>(static_cast<const complex64*>(base)[off]);
    case DType::C128:
      return convert<C>(static_cast<const complex128*>(base)[off]);
  }
  return C{};
}

template <class R>
CULUA_HD inline void store_dynamic(void* base, DType t, int64_t off, R v) {
  switch (t) {
    case DType::F32:
      static_cast<float*>(base)[off] = convert<float>(v);
      return;
    case DType::F64:
      static_cast<double*>(base)[off] = convert<double>(v);
      return;
    case DType::F16:
      static_cast<half*>(base)[off] = convert<half>(v);
      return;
    case DType::BF16:
      static_cast<bfloat16*>(base)[off] = convert<bfloat16>(v);
      return;
    case DType::I8:
      static_cast<int8_t*>(base)[off] = convert<int8_t>(v);
      return;
    case DType::I16:
      static_cast<int16_t*>(base)[off] = convert<int16_t>(v);
      return;
    case DType::I32:
      static_cast<int32_t*>(base)[off] = convert<int32_t>(v);
      return;
    case DType::I64:
      static_cast<int64_t*>(base)[off] = convert<int64_t>(v);
      return;
    case DType::U8:
      static_cast<uint8_t*>(base)[off] = convert<uint8_t>(v);
      return;
    case DType::U16:
      static_cast<uint16_t*>(base)[off] = convert<uint16_t>(v);
      return;
    case DType::U32:
      static_cast<uint32_t*>(base)[off] = convert<uint32_t>(v);
      return;
    case DType::U64:
      static_cast<uint64_t*>(base)[off] = convert<uint64_t>(v);
      return;
    case DType::Bool:
      static_cast<bool*>(base)[off] = convert<bool>(v);
      return;
    case DType::C64:
      static_cast<complex64*>(base)[off] = convert<complex64>(v);
      return;
    case DType::C128:
      static_cast<complex128*>(base)[off] = convert<complex128>(v);
      return;
  }
}

// The storage type of a result R computed from inputs stored as S.
template <class S, class R>
using out_storage_t = std::conditional_t<std::is_same_v<R, bool>, bool,
                                         std::conditional_t<std::is_same_v<R, compute_t<S>>, S, R>>;

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Elements per 16-byte vector of S.
template <class S>
inline constexpr int kVecWidth = sizeof(S) >= 16 ? 1 : static_cast<int>(16 / sizeof(S));

template <class S>
CULUA_HD inline compute_t<S> scalar_value(const unsigned char* bytes) {
  S s;
  memcpy(&s, bytes, sizeof(S));
  return to_compute(s);
}

}  // namespace culua::detail::kernels
