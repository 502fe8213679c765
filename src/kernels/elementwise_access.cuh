// The elementwise kernels' element access, for both backends: elements of a run-time dtype loaded
// and stored as a compute type (load_dynamic, store_dynamic), the storage type of a result, 16-byte
// vectors, scalars from their bytes, CULUA_UNROLL, and the geometry of CUDA's tiled kernel for a
// transposed operand (TileLayout: host code, so that unit tests check it). kernels/elementwise.cuh
// builds on it.
#pragma once

#include <cstddef>
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

// ---- the tiles of a 2-D binary operation with a column-major operand ---------------------------
// The geometry of CUDA's binary_tiles (kernels/elementwise_cuda.cuh), here so that host unit tests
// check it (tests/unit/test_tile_layout.cpp). For elements of E bytes: R x 64 output tiles with
// R elements = 256 bytes, so that each column of a column-major operand is read as 256 contiguous
// bytes; 16-byte vectors of V elements; 256 threads, each with 4 vectors (4 passes) of each
// operand; 16 KiB of shared memory per column-major operand.
template <size_t E>
struct TileLayout {
  static_assert(E == 2 || E == 4 || E == 8, "2-, 4- or 8-byte elements");
  static constexpr int V = static_cast<int>(16 / E);
  static constexpr int R = static_cast<int>(256 / E);
  static constexpr int C = 64;
  static constexpr int kThreads = 256;
  static constexpr size_t kBytes = static_cast<size_t>(R) * C * E;
  // The output pass: a warp covers RW rows of 32 / RW vectors (a 128-byte line per row and
  // quarter-warp), kAcross warps a tile row, the 8 warps kStep rows per pass.
  static constexpr int RW = V < 4 ? V : 4;
  static constexpr int kAcross = C * RW / (32 * V);
  static constexpr int kStep = 8 / kAcross * RW;
  static_assert(kStep * 4 == R, "4 passes cover the tile");

  // The staging pass (a column-major operand, read down its columns): thread t's vector of pass i
  // starts at row stage_row(t) of column stage_col(t, i); 16 threads per column.
  CULUA_HD static int stage_row(unsigned t) { return V * static_cast<int>(t % 16); }
  CULUA_HD static int stage_col(unsigned t, int i) { return static_cast<int>(t / 16) + 16 * i; }
  // The output pass (the output and row-major operands, along their rows): thread t's vector of
  // pass i is columns out_col(t) .. + V - 1 of row out_row(t, i).
  CULUA_HD static int out_col(unsigned t) {
    const unsigned w = t / 32, l = t % 32;
    return V * static_cast<int>((w % kAcross) * (32 / RW) + 8 * (l / (8 * RW)) + l % 8);
  }
  CULUA_HD static int out_row(unsigned t, int i) {
    const unsigned w = t / 32, l = t % 32;
    return static_cast<int>((w / kAcross) * RW + (l / 8) % RW) + kStep * i;
  }
  // Element (r, c) of the tile in shared memory, in elements (at), and its 16-byte vector (in
  // vectors: vector_at): column c holds rows 0..R-1, its 16-byte vectors permuted by (c / V) % 8.
  // A quarter-warp of the staging pass stores 8 vectors of one column (a permutation of 8 vectors
  // of one 128-byte line); a warp of the output pass reads row r of columns V q + j for RW
  // consecutive rows (within one vector) and 8 consecutive q: 32 different banks. No bank
  // conflicts either way, without padding.
  CULUA_HD static int vector_at(int r, int c) { return c * (R / V) + ((r / V) ^ ((c / V) & 7)); }
  CULUA_HD static int at(int r, int c) { return vector_at(r, c) * V + r % V; }
};

// The tile of block n among tiles_r x tiles_c: numbered down groups of kTileGroup tile rows, then
// across, so that the blocks in flight at a time cover about 8 tile rows by (blocks in flight / 8)
// tile columns: the runs they read of a column-major operand are 8 x 256 bytes long (about a DRAM
// page) rather than 256 bytes, and the row-major runs still several KiB.
inline constexpr uint32_t kTileGroup = 8;
CULUA_HD inline void tile_of_block(uint32_t n, uint32_t tiles_r, uint32_t tiles_c, uint32_t* tr,
                                   uint32_t* tc) {
  const uint32_t first = n / (kTileGroup * tiles_c) * kTileGroup;
  const uint32_t height = tiles_r - first < kTileGroup ? tiles_r - first : kTileGroup;
  const uint32_t within = n - first * tiles_c;
  *tr = first + within % height;
  *tc = within / height;
}

}  // namespace culua::detail::kernels
