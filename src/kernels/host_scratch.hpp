// The most host memory each built-in host kernel keeps while it runs (core/base/scratch.hpp): a
// bound that follows the kernel's own allocations (reduction partials, a sort's merge buffer, ...),
// for the host backend and host executor to reserve against the sandbox's quota before the work
// starts. The element functors and the inputs and outputs are not counted (the arrays are).
#pragma once

#include <cstddef>

namespace culua::detail {
struct ReduceCall;
struct ScanCall;
struct SortCall;
struct MatmulCall;
}  // namespace culua::detail

namespace culua::detail::kernels::host {

size_t reduce_scratch_bytes(const ReduceCall& c);        // reduce_host.cpp
size_t scan_scratch_bytes(const ScanCall& c);            // scan_host.cpp
size_t sort_scratch_bytes(const SortCall& c);            // sort_host.cpp
size_t integer_gemm_scratch_bytes(const MatmulCall& c);  // integer_gemm_host.cpp

}  // namespace culua::detail::kernels::host
