// CUDA sorting, searching and sets of uint8_t, uint16_t, uint32_t and uint64_t
// elements.
#include "kernels/sort_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int sort_typed<uint8_t>(const SortCall&, const Launch&);
template int sort_typed<uint16_t>(const SortCall&, const Launch&);
template int sort_typed<uint32_t>(const SortCall&, const Launch&);
template int sort_typed<uint64_t>(const SortCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
