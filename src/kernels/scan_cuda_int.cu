// CUDA scans of bool int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
// inputs.
#include "kernels/scan_cuda.cuh"

namespace culua::detail::kernels::cuda {

template int scan_typed<bool>(const ScanCall&, const Launch&);
template int scan_typed<int8_t>(const ScanCall&, const Launch&);
template int scan_typed<int16_t>(const ScanCall&, const Launch&);
template int scan_typed<int32_t>(const ScanCall&, const Launch&);
template int scan_typed<int64_t>(const ScanCall&, const Launch&);
template int scan_typed<uint8_t>(const ScanCall&, const Launch&);
template int scan_typed<uint16_t>(const ScanCall&, const Launch&);
template int scan_typed<uint32_t>(const ScanCall&, const Launch&);
template int scan_typed<uint64_t>(const ScanCall&, const Launch&);

}  // namespace culua::detail::kernels::cuda
