// CUDA sorting, searching and sets of half and bfloat16 elements.
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int sort_typed<half>(const SortCall&, const Launch&);
template int sort_typed<bfloat16>(const SortCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
