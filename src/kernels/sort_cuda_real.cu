// CUDA sorting, searching and sets of float and double elements.
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int sort_typed<float>(const SortCall&, const Launch&);
template int sort_typed<double>(const SortCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
