// Matrix products on the host backend through OpenBLAS (CBLAS).
#pragma once

namespace culua::detail {
struct MatmulCall;
struct DotCall;
}  // namespace culua::detail

namespace culua::detail::host {

void blas_matmul(const MatmulCall& c);
void blas_dot(const DotCall& c);

}  // namespace culua::detail::host
