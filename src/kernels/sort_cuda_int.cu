// CUDA sorting, searching and sets of int8_t, int16_t, int32_t, int64_t and bool elements.
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int sort_typed<int8_t>(const SortCall&, const Launch&);
template int sort_typed<int16_t>(const SortCall&, const Launch&);
template int sort_typed<int32_t>(const SortCall&, const Launch&);
template int sort_typed<int64_t>(const SortCall&, const Launch&);
template int sort_typed<bool>(const SortCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
