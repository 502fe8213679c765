#include "cuda/cublas.hpp"

#include "core/blas_call.hpp"
#include "core/error.hpp"
#include "cuda/cuda_check.hpp"

namespace culua::cuda {

Cublas::Cublas(std::shared_ptr<Health> health) : health_(std::move(health)) {}
Cublas::~Cublas() = default;

void Cublas::matmul(const MatmulCall&, Stream&) {
  fail(ErrorKind::Unsupported, "matmul is not implemented yet");
}

void Cublas::dot(const DotCall&, Stream&) {
  fail(ErrorKind::Unsupported, "dot is not implemented yet");
}

}  // namespace culua::cuda
