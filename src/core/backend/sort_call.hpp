// The description of one sorting, searching or set kernel call (sort, argsort, nonzero, unique,
// searchsorted), shared by the core and both backends. Every operand is contiguous memory of the
// array's location (device memory on a stream, or host memory); indices are int64.
#pragma once

#include <cstdint>

#include "core/model/dtype.hpp"

namespace culua::detail {

enum class SortOp : uint8_t { Sort, Nonzero, Unique, Searchsorted };

const char* op_name(SortOp op);  // "sort", "nonzero", "unique", "searchsorted"

// The order every op uses (numpy's): integers and bool by value; floats by value with -0.0 equal
// to 0.0 and every NaN after +inf; complex numbers lexicographically (real part, then imaginary
// part) with numpy's NaN rules ([R + Rj, R + nanj, nan + Rj, nan + nanj]). Sorting is stable.
// Descending order is the exact reverse of that order (NaN first), equal keys keeping their
// input order.
struct SortCall {
  SortOp op = SortOp::Sort;
  DType dtype = DType::F32;  // of `in` (and `in2`, `out`)
  bool descending = false;   // Sort
  bool right = false;        // Searchsorted: side = "right"
  int64_t rows = 1;          // Sort: independent rows; Searchsorted: values searched
  int64_t n = 0;             // Sort: the length of a row; the others: the length of `in`
  int ndim = 1;              // Nonzero: the dimensions of the input
  int64_t shape[8] = {};     // Nonzero: its shape (row-major)

  // Sort: rows x n keys. Nonzero: the n elements. Unique: n keys in sorted order. Searchsorted:
  // the n sorted elements searched (in order after `perm`).
  const void* in = nullptr;
  // Unique: the 1-based positions in the input of the sorted keys (a stable argsort), or null when
  // neither `out_index` nor `out_inverse` is wanted. Searchsorted: the 1-based sorter, or null.
  const int64_t* perm = nullptr;
  const void* in2 = nullptr;  // Searchsorted: the `rows` values looked up

  // Sort: the sorted rows, or null. Unique: the distinct values (room for n).
  void* out = nullptr;
  // Sort: for each sorted element its 1-based position in its row, or null. Nonzero: ndim rows of
  // `count` 1-based coordinates (row d at out_index + d * count). Unique: the 1-based position of
  // each distinct value's first occurrence (room for n), or null. Searchsorted: 1-based insertion
  // positions (`rows` of them): x1[p-1] < v <= x1[p] for the left side.
  int64_t* out_index = nullptr;
  int64_t* out_counts =
      nullptr;  // Unique: occurrences of each distinct value (room for n), or null
  int64_t* out_inverse = nullptr;  // Unique: n 1-based positions in the distinct values, or null
  int64_t* out_count = nullptr;    // Unique: one element, the number of distinct values
  int64_t count = 0;               // Nonzero: the number of nonzero elements (counted before)

  const char* name() const { return op_name(op); }
};

}  // namespace culua::detail
