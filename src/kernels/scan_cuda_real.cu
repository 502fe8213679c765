// CUDA scans of half bfloat16 float double inputs.
#include "kernels/scan_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int scan_typed<half>(const ScanCall&, const Launch&);
template int scan_typed<bfloat16>(const ScanCall&, const Launch&);
template int scan_typed<float>(const ScanCall&, const Launch&);
template int scan_typed<double>(const ScanCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
