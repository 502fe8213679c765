// CUDA sorting, searching and sets of complex64 and complex128 elements.
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int sort_typed<complex64>(const SortCall&, const Launch&);
template int sort_typed<complex128>(const SortCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
