// The sort of complex64 and complex128 elements: a stable merge sort (numpy's lexicographic order
// with its NaN rules needs a comparison); the rest of their code is every type's (sort_cuda.cuh).
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_merge_sort.cuh>

#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

namespace sort_detail {

// Complex numbers: a stable merge sort of the flat positions, row first, then numpy's order.
template <class T>
struct PositionLess {
  const T* k;
  int64_t n;
  bool desc;
  __device__ bool operator()(int64_t a, int64_t b) const {
    const int64_t ra = a / n, rb = b / n;
    if (ra != rb) return ra < rb;
    return desc ? so::less(k[b], k[a]) : so::less(k[a], k[b]);
  }
};

template <int = 0>
__global__ void iota_kernel(int64_t* out, int64_t total) {
  CULUA_GRID_LOOP(i, total) out[i] = i;
}

template <class T>
__global__ void from_positions_kernel(const T* in, const int64_t* pos, T* out, int64_t* out_index,
                                      int64_t total, int64_t n) {
  CULUA_GRID_LOOP(i, total) {
    const int64_t p = pos[i];
    if (out) out[i] = in[p];
    if (out_index) out_index[i] = p % n + 1;
  }
}

template <class T>
cudaError_t merge_sort(const SortCall& c, const Launch& l) {
  Temp t(l);
  const int64_t total = c.rows * c.n;
  const int grid = grid_for(total, l);
  const T* in = static_cast<const T*>(c.in);
  int64_t* pos = nullptr;
  CULUA_SORT_TRY(t.get(&pos, total));
  iota_kernel<><<<grid, 256, 0, t.stream()>>>(pos, total);
  CULUA_SORT_TRY(cudaGetLastError());
  const PositionLess<T> less{in, c.n, c.descending};
  CULUA_SORT_TRY(with_storage(t, [&](void* p, size_t& b) {
    return cub::DeviceMergeSort::StableSortKeys(p, b, pos, total, less, t.stream());
  }));
  from_positions_kernel<T>
      <<<grid, 256, 0, t.stream()>>>(in, pos, static_cast<T*>(c.out), c.out_index, total, c.n);
  return cudaGetLastError();
}

template cudaError_t merge_sort<complex64>(const SortCall&, const Launch&);
template cudaError_t merge_sort<complex128>(const SortCall&, const Launch&);

}  // namespace sort_detail

}  // namespace culua::detail::kernels::cuda
