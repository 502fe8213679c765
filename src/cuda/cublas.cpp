#include "cuda/cublas.hpp"

#include "cuda/cublas_api.hpp"

#include <climits>

#include "core/backend/blas_call.hpp"
#include "core/base/error.hpp"
#include "cuda/cuda_check.hpp"
#include "kernels/integer_dot.hpp"
#include "kernels/integer_gemm.hpp"

namespace culua::detail::cuda {

namespace {

// Throws for a failed cuBLAS call, naming the status; a sticky CUDA error behind it poisons the
// runtime as any other sticky error does.
void check(Health& health, cublasStatus_t st, const char* call) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess && is_sticky(e)) health.check(e, call, __FILE__, __LINE__);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) {
    fail(ErrorKind::OutOfMemory, "cuBLAS {} failed: {} ({})", call, cublas_api().status_name(st),
         cublas_api().status_string(st));
  }
  fail(ErrorKind::Device, "cuBLAS {} failed: {} ({})", call, cublas_api().status_name(st),
       cublas_api().status_string(st));
}
#define CULUA_CUBLAS_CHECK(call) check(*health_, (call), #call)

struct GemmTypes {
  cudaDataType data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(DType t, bool tf32) {
  switch (t) {
    case DType::F32:
      return {CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case DType::F64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::F16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::BF16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::C64:
      return {CUDA_C_32F, CUBLAS_COMPUTE_32F};
    case DType::C128:
      return {CUDA_C_64F, CUBLAS_COMPUTE_64F};
    default:
      fail(ErrorKind::Unsupported, "cuBLAS has no {} matrix product", name(t));
  }
}

// alpha and beta in the scale type of the compute type: float (32F) or double (64F), two parts for
// complex dtypes.
struct ScaleValue {
  union {
    float f[2];
    double d[2];
  };
  ScaleValue(const double v[2], cublasComputeType_t compute) {
    if (compute == CUBLAS_COMPUTE_64F) {
      d[0] = v[0];
      d[1] = v[1];
    } else {
      f[0] = static_cast<float>(v[0]);
      f[1] = static_cast<float>(v[1]);
    }
  }
};

cublasOperation_t op(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

bool fits_int(std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v > INT_MAX) return false;
  }
  return true;
}

const char* byte_offset(const void* p, int64_t elements, size_t size) {
  return static_cast<const char*>(p) + elements * static_cast<int64_t>(size);
}

// Restores the host pointer mode when a device-pointer call returns or throws.
struct DevicePointerMode {
  cublasHandle_t h;
  explicit DevicePointerMode(cublasHandle_t handle, Health& health) : h(handle) {
    check(health, cublas_api().set_pointer_mode(h, CUBLAS_POINTER_MODE_DEVICE),
          "cublasSetPointerMode");
  }
  ~DevicePointerMode() { cublas_api().set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST); }
  DevicePointerMode(const DevicePointerMode&) = delete;
  DevicePointerMode& operator=(const DevicePointerMode&) = delete;
};

}  // namespace

Cublas::Cublas(std::shared_ptr<Health> health) : health_(std::move(health)) {}

Cublas::~Cublas() {
  if (!health_->poisoned.load()) return;
  // The context is unusable: nothing can be released.
  for (UniqueCublas& h : handles_) static_cast<void>(h.release());
}

cublasContext* Cublas::handle(Stream& s, void* workspace, size_t bytes) {
  const auto d = static_cast<size_t>(s.device());
  if (handles_.size() <= d) handles_.resize(d + 1);
  if (!handles_[d]) {
    cublasHandle_t h = nullptr;
    CULUA_CUBLAS_CHECK(cublas_api().create(&h));
    handles_[d] = UniqueCublas(h, DestroyCublas{s.device()});
    CULUA_CUBLAS_CHECK(cublas_api().set_math_mode(h, CUBLAS_DEFAULT_MATH));
    CULUA_CUBLAS_CHECK(cublas_api().set_pointer_mode(h, CUBLAS_POINTER_MODE_HOST));
  }
  cublasHandle_t h = handles_[d].get();
  if (bindings_.size() <= d) bindings_.resize(d + 1);
  Binding& b = bindings_[d];
  void* stream = s.native_handle();
  if (!b.bound || b.stream != stream || b.workspace || workspace) {
    b.bound = false;  // until both calls succeed
    CULUA_CUBLAS_CHECK(cublas_api().set_stream(h, static_cast<cudaStream_t>(stream)));
    if (workspace) CULUA_CUBLAS_CHECK(cublas_api().set_workspace(h, workspace, bytes));
    b = Binding{stream, workspace, true};
  }
  return h;
}

void Cublas::matmul(const MatmulCall& c, Stream& s, void* workspace, size_t bytes) {
  if (is_integer(c.dtype) || c.dtype == DType::Bool) {
    CULUA_CUDA_CHECK(*health_,
                     static_cast<cudaError_t>(kernels::cuda::integer_gemm(c, s.native_handle())));
    return;
  }
  const GemmTypes types = gemm_types(c.dtype, c.tf32);
  const ScaleValue alpha(c.alpha, types.compute), beta(c.beta, types.compute);
  const size_t size = itemsize(c.dtype);
  std::lock_guard lock(mutex_);
  cublasHandle_t h = handle(s, workspace, bytes);
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    const void* a = byte_offset(c.a.data, oa, size);
    const void* b = byte_offset(c.b.data, ob, size);
    void* out = const_cast<char*>(byte_offset(c.c.data, oc, size));
    if (count == 1 && fits_int({c.m, c.n, c.k, c.a.ld, c.b.ld, c.c.ld})) {
      CULUA_CUBLAS_CHECK(cublas_api().gemm(
          h, op(c.a.trans), op(c.b.trans), static_cast<int>(c.m), static_cast<int>(c.n),
          static_cast<int>(c.k), &alpha, a, types.data, static_cast<int>(c.a.ld), b, types.data,
          static_cast<int>(c.b.ld), &beta, out, types.data, static_cast<int>(c.c.ld), types.compute,
          CUBLAS_GEMM_DEFAULT));
    } else if (fits_int({c.m, c.n, c.k, c.a.ld, c.b.ld, c.c.ld, count})) {
      CULUA_CUBLAS_CHECK(cublas_api().gemm_strided_batched(
          h, op(c.a.trans), op(c.b.trans), static_cast<int>(c.m), static_cast<int>(c.n),
          static_cast<int>(c.k), &alpha, a, types.data, static_cast<int>(c.a.ld), sa, b, types.data,
          static_cast<int>(c.b.ld), sb, &beta, out, types.data, static_cast<int>(c.c.ld), sc,
          static_cast<int>(count), types.compute, CUBLAS_GEMM_DEFAULT));
    } else {
      CULUA_CUBLAS_CHECK(cublas_api().gemm_strided_batched_64(
          h, op(c.a.trans), op(c.b.trans), c.m, c.n, c.k, &alpha, a, types.data, c.a.ld, sa, b,
          types.data, c.b.ld, sb, &beta, out, types.data, c.c.ld, sc, count, types.compute,
          CUBLAS_GEMM_DEFAULT));
    }
  });
}

void Cublas::dot(const DotCall& c, Stream& s, void* workspace, size_t bytes) {
  if (is_integer(c.dtype)) {
    CULUA_CUDA_CHECK(*health_,
                     static_cast<cudaError_t>(kernels::cuda::integer_dot(c, s.native_handle())));
    return;
  }
  cudaDataType data, exec;
  switch (c.dtype) {
    case DType::F32:
      data = exec = CUDA_R_32F;
      break;
    case DType::F64:
      data = exec = CUDA_R_64F;
      break;
    case DType::F16:
      data = CUDA_R_16F;
      exec = CUDA_R_32F;
      break;
    case DType::BF16:
      data = CUDA_R_16BF;
      exec = CUDA_R_32F;
      break;
    case DType::C64:
      data = exec = CUDA_C_32F;
      break;
    case DType::C128:
      data = exec = CUDA_C_64F;
      break;
    default:
      fail(ErrorKind::Unsupported, "dot of {} arrays", name(c.dtype));
  }
  std::lock_guard lock(mutex_);
  cublasHandle_t h = handle(s, workspace, bytes);
  const DevicePointerMode mode(h, *health_);
  // cublasDotEx computes the unconjugated product (cublasDotcEx conjugates).
  if (fits_int({c.n, c.incx, c.incy})) {
    CULUA_CUBLAS_CHECK(cublas_api().dot(h, static_cast<int>(c.n), c.x, data,
                                        static_cast<int>(c.incx), c.y, data,
                                        static_cast<int>(c.incy), c.result, data, exec));
  } else {
    CULUA_CUBLAS_CHECK(
        cublas_api().dot_64(h, c.n, c.x, data, c.incx, c.y, data, c.incy, c.result, data, exec));
  }
}

}  // namespace culua::detail::cuda
