// Sorting, searching and sets on the host (core/backend/sort_call.hpp): std::stable_sort with
// numpy's order (kernels/sort_order.cuh). Many rows are sorted in parallel on the host pool; a long
// row is cut into pieces sorted in parallel and merged pairwise (std::merge is stable: the earlier
// piece wins ties), so the result is the same whatever the pool's size.
#include <algorithm>
#include <memory>
#include <numeric>

#include "core/backend/sort_call.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/kernels.hpp"
#include "kernels/sort_order.cuh"

namespace culua::detail::kernels::host {

namespace {

// Pieces of a long row: about 64 Ki elements each, and as many as the pool has threads.
constexpr int64_t kPiece = int64_t{1} << 16;

// Stable sort of v[0, n) by `less`, in parallel for long rows.
template <class V, class Less>
void stable_sort_parallel(V* v, int64_t n, const Less& less) {
  const int threads = pool_threads();
  if (threads <= 1 || n < 2 * kPiece) {
    std::stable_sort(v, v + n, less);
    return;
  }
  int64_t pieces = std::min<int64_t>(threads, n / kPiece);
  const int64_t len = (n + pieces - 1) / pieces;
  pieces = (n + len - 1) / len;
  parallel_for(pieces, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      std::stable_sort(v + p * len, v + std::min(n, (p + 1) * len), less);
    }
  });
  const std::unique_ptr<V[]> tmp(new V[static_cast<size_t>(n)]);
  V* src = v;
  V* dst = tmp.get();
  for (int64_t width = len; width < n; width *= 2) {
    const int64_t pairs = (n + 2 * width - 1) / (2 * width);
    parallel_for(pairs, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t a = p * 2 * width;
        const int64_t m = std::min(n, a + width);
        const int64_t b = std::min(n, a + 2 * width);
        std::merge(src + a, src + m, src + m, src + b, dst + a, less);
      }
    });
    std::swap(src, dst);
  }
  if (src != v) std::copy(src, src + n, v);
}

template <class T>
void sort_rows(const SortCall& c) {
  const T* in = static_cast<const T*>(c.in);
  T* out = static_cast<T*>(c.out);
  const int64_t n = c.n;
  const bool desc = c.descending;
  // Rows in parallel when there are enough of them; else each row uses the pool.
  const bool many = c.rows >= pool_threads();
  const auto one_row = [&](int64_t r) {
    const T* k = in + r * n;
    if (!c.out_index) {
      // Keys alone: the elements themselves move (a -0.0 or a NaN keeps its bits).
      T* o = out + r * n;
      std::copy(k, k + n, o);
      const auto less = [desc](const T& a, const T& b) {
        return desc ? sort_order::less(b, a) : sort_order::less(a, b);
      };
      if (many) {
        std::stable_sort(o, o + n, less);
      } else {
        stable_sort_parallel(o, n, less);
      }
      return;
    }
    int64_t* idx = c.out_index + r * n;
    std::iota(idx, idx + n, int64_t{0});
    const auto less = [k, desc](int64_t a, int64_t b) {
      return desc ? sort_order::less(k[b], k[a]) : sort_order::less(k[a], k[b]);
    };
    if (many) {
      std::stable_sort(idx, idx + n, less);
    } else {
      stable_sort_parallel(idx, n, less);
    }
    if (out) {
      T* o = out + r * n;
      for (int64_t j = 0; j < n; ++j) o[j] = k[idx[j]];
    }
    for (int64_t j = 0; j < n; ++j) ++idx[j];  // 1-based
  };
  if (many) {
    parallel_for(c.rows, std::max<int64_t>(1, grain_for(n * 16)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) one_row(r);
    });
  } else {
    for (int64_t r = 0; r < c.rows; ++r) one_row(r);
  }
}

template <class T>
void nonzero(const SortCall& c) {
  const T* in = static_cast<const T*>(c.in);
  int64_t w = 0;
  for (int64_t i = 0; i < c.n && w < c.count; ++i) {
    if (!sort_order::nonzero(in[i])) continue;
    int64_t rest = i;
    for (int d = c.ndim - 1; d >= 0; --d) {
      c.out_index[d * c.count + w] = rest % c.shape[d] + 1;
      rest /= c.shape[d];
    }
    ++w;
  }
}

template <class T>
void unique(const SortCall& c) {
  const T* k = static_cast<const T*>(c.in);
  T* values = static_cast<T*>(c.out);
  int64_t u = -1;  // the current distinct value
  int64_t start = 0;
  for (int64_t i = 0; i < c.n; ++i) {
    if (i == 0 || !sort_order::equal(k[i], k[i - 1])) {
      if (u >= 0 && c.out_counts) c.out_counts[u] = i - start;
      ++u;
      start = i;
      values[u] = k[i];
      if (c.out_index) c.out_index[u] = c.perm[i];
    }
    if (c.out_inverse) c.out_inverse[c.perm[i] - 1] = u + 1;
  }
  if (u >= 0 && c.out_counts) c.out_counts[u] = c.n - start;
  *c.out_count = u + 1;
}

template <class T>
void searchsorted(const SortCall& c) {
  const T* x1 = static_cast<const T*>(c.in);
  const T* v = static_cast<const T*>(c.in2);
  const auto at = [&](int64_t i) { return c.perm ? x1[c.perm[i] - 1] : x1[i]; };
  parallel_for(c.rows, grain_for(64), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const T x = v[r];
      int64_t a = 0, b = c.n;  // the answer lies in [a, b]
      while (a < b) {
        const int64_t m = a + (b - a) / 2;
        // left: the first position whose element is not less than x; right: greater than x.
        const bool before = c.right ? !sort_order::less(x, at(m)) : sort_order::less(at(m), x);
        if (before) {
          a = m + 1;
        } else {
          b = m;
        }
      }
      c.out_index[r] = a + 1;
    }
  });
}

}  // namespace

size_t sort_scratch_bytes(const SortCall& c) {
  if (c.op != SortOp::Sort || c.rows <= 0 || c.n <= 0) return 0;  // the others sort nothing
  // What moves: the keys, or their int64 positions. std::stable_sort's buffer holds half a row;
  // stable_sort_parallel's merges a whole row; rows sorted side by side hold one buffer each.
  const auto moved = static_cast<size_t>(c.out_index ? sizeof(int64_t) : itemsize(c.dtype));
  const auto n = static_cast<size_t>(c.n);
  const int threads = pool_threads();
  if (c.rows >= threads) {
    return static_cast<size_t>(std::min<int64_t>(c.rows, threads)) * ((n + 1) / 2) * moved;
  }
  return n * moved;
}

void sort(const SortCall& c) {
  dispatch(c.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (c.op) {
      case SortOp::Sort:
        if (c.rows > 0 && c.n > 0) sort_rows<T>(c);
        break;
      case SortOp::Nonzero:
        nonzero<T>(c);
        break;
      case SortOp::Unique:
        unique<T>(c);
        break;
      case SortOp::Searchsorted:
        searchsorted<T>(c);
        break;
    }
  });
}

}  // namespace culua::detail::kernels::host
