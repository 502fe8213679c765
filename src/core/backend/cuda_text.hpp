// How generated CUDA source spells each dtype's element type, for the two generators of run-time
// kernels: cu.elementwise/cu.reduction (rtc/) include only CUDA's own headers and use CUDA's
// names; cu.fuse (fuse/) includes culua's element types through its prelude and uses theirs (the
// names of core/model/dtype.hpp's dispatch). One table, so that a new dtype is spelled for both.
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"

namespace culua::detail {

enum class TypeSpelling : uint8_t {
  Cuda,   // "__half", "signed char", "cuda::std::complex<float>"
  Culua,  // "half", "int8_t", "complex64"
};

constexpr const char* cuda_type_name(DType t, TypeSpelling spelling) {
  const bool cuda = spelling == TypeSpelling::Cuda;
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F16:
      return cuda ? "__half" : "half";
    case DType::BF16:
      return cuda ? "__nv_bfloat16" : "bfloat16";
    case DType::I8:
      return cuda ? "signed char" : "int8_t";
    case DType::I16:
      return cuda ? "short" : "int16_t";
    case DType::I32:
      return cuda ? "int" : "int32_t";
    case DType::I64:
      return cuda ? "long long" : "int64_t";
    case DType::U8:
      return cuda ? "unsigned char" : "uint8_t";
    case DType::U16:
      return cuda ? "unsigned short" : "uint16_t";
    case DType::U32:
      return cuda ? "unsigned int" : "uint32_t";
    case DType::U64:
      return cuda ? "unsigned long long" : "uint64_t";
    case DType::Bool:
      return "bool";
    case DType::C64:
      return cuda ? "cuda::std::complex<float>" : "complex64";
    case DType::C128:
      return cuda ? "cuda::std::complex<double>" : "complex128";
  }
  return "void";  // not a dtype: generated code that uses it fails to compile
}

}  // namespace culua::detail
