// CUDA scans accumulating in uint64 (bool and integers), float (f16, bf16, f32) and double.
#include "kernels/scan_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int scan_rows<uint64_t>(bool, const uint64_t*, uint64_t*, int64_t, int64_t, const Launch&);
template int scan_rows<float>(bool, const float*, float*, int64_t, int64_t, const Launch&);
template int scan_rows<double>(bool, const double*, double*, int64_t, int64_t, const Launch&);

}  // namespace culua::detail::kernels::cuda
