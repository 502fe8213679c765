// Matrix products on the host backend through OpenBLAS (CBLAS).
#pragma once

namespace culua {
struct MatmulCall;
struct DotCall;
}  // namespace culua

namespace culua::host {

void blas_matmul(const MatmulCall& c);
void blas_dot(const DotCall& c);

}  // namespace culua::host
