// CUDA scans of complex64 complex128 inputs.
#include "kernels/scan_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int scan_typed<complex64>(const ScanCall&, const Launch&);
template int scan_typed<complex128>(const ScanCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
