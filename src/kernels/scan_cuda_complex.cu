// CUDA scans accumulating in complex64 and complex128.
#include "kernels/scan_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int scan_rows<complex64>(bool, const complex64*, complex64*, int64_t, int64_t,
                                  const Launch&);
template int scan_rows<complex128>(bool, const complex128*, complex128*, int64_t, int64_t,
                                   const Launch&);

}  // namespace culua::detail::kernels::cuda
