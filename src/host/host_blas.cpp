#include "host/host_blas.hpp"

#include <cblas.h>

#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/blas_call.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"
#include "kernels/integer_gemm.hpp"

namespace culua::detail::host {

namespace {

CBLAS_TRANSPOSE op(bool trans) {
  return trans ? CblasTrans : CblasNoTrans;
}

blasint bi(int64_t v) {
  return static_cast<blasint>(v);  // core/linalg.cpp checked the range
}

template <class T>
T* at(void* base, int64_t offset) {
  return static_cast<T*>(base) + offset;
}

// A column-major rows x cols matrix of half/bfloat16 with leading dimension ld, as packed floats.
template <class T>
void widen(const T* src, int64_t rows, int64_t cols, int64_t ld, std::vector<float>& dst) {
  dst.resize(static_cast<size_t>(rows * cols));
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < rows; ++i) {
      dst[static_cast<size_t>(i + j * rows)] = src[i + j * ld].to_float();
    }
  }
}

// f16/bf16: through f32 temporaries, accumulated in f32 (as cuBLAS with CUBLAS_COMPUTE_32F), each
// result rounded once from f32.
template <class T>
void small_float_gemm(const MatmulCall& c) {
  const int64_t m = c.m, n = c.n, k = c.k;
  const int64_t ar = c.a.trans ? k : m, ac = c.a.trans ? m : k;
  const int64_t br = c.b.trans ? n : k, bc = c.b.trans ? k : n;
  const bool read_c = c.beta[0] != 0;
  std::vector<float> a, b, out;
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    for (int64_t i = 0; i < count; ++i) {
      widen(at<const T>(c.a.data, oa + i * sa), ar, ac, c.a.ld, a);
      widen(at<const T>(c.b.data, ob + i * sb), br, bc, c.b.ld, b);
      T* dst = at<T>(c.c.data, oc + i * sc);
      if (read_c) {
        widen(static_cast<const T*>(dst), m, n, c.c.ld, out);
      } else {
        out.assign(static_cast<size_t>(m * n), 0.0f);
      }
      cblas_sgemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(m), bi(n), bi(k),
                  static_cast<float>(c.alpha[0]), a.data(), bi(std::max<int64_t>(1, ar)), b.data(),
                  bi(std::max<int64_t>(1, br)), static_cast<float>(c.beta[0]), out.data(),
                  bi(std::max<int64_t>(1, m)));
      for (int64_t col = 0; col < n; ++col) {
        for (int64_t row = 0; row < m; ++row) {
          dst[row + col * c.c.ld] = convert<T>(out[static_cast<size_t>(row + col * m)]);
        }
      }
    }
  });
}

template <class T, class Gemm>
void real_gemm(const MatmulCall& c, Gemm gemm) {
  const T alpha = static_cast<T>(c.alpha[0]), beta = static_cast<T>(c.beta[0]);
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    for (int64_t i = 0; i < count; ++i) {
      T* dst = at<T>(c.c.data, oc + i * sc);
      if (beta == 0) {
        // beta = 0 must not read C (it may hold NaN); BLAS implementations differ in that.
        for (int64_t col = 0; col < c.n; ++col) std::memset(dst + col * c.c.ld, 0, sizeof(T) * c.m);
      }
      gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(c.m), bi(c.n), bi(c.k), alpha,
           at<const T>(c.a.data, oa + i * sa), bi(c.a.ld), at<const T>(c.b.data, ob + i * sb),
           bi(c.b.ld), beta, dst, bi(c.c.ld));
    }
  });
}

template <class R, class Gemm>
void complex_gemm(const MatmulCall& c, Gemm gemm) {
  const R alpha[2] = {static_cast<R>(c.alpha[0]), static_cast<R>(c.alpha[1])};
  const R beta[2] = {static_cast<R>(c.beta[0]), static_cast<R>(c.beta[1])};
  for_each_gemm_batch(c, [&](int64_t oa, int64_t ob, int64_t oc, int64_t count, int64_t sa,
                             int64_t sb, int64_t sc) {
    for (int64_t i = 0; i < count; ++i) {
      complex<R>* dst = at<complex<R>>(c.c.data, oc + i * sc);
      if (beta[0] == 0 && beta[1] == 0) {
        for (int64_t col = 0; col < c.n; ++col) {
          std::memset(static_cast<void*>(dst + col * c.c.ld), 0, sizeof(complex<R>) * c.m);
        }
      }
      gemm(CblasColMajor, op(c.a.trans), op(c.b.trans), bi(c.m), bi(c.n), bi(c.k), alpha,
           at<const complex<R>>(c.a.data, oa + i * sa), bi(c.a.ld),
           at<const complex<R>>(c.b.data, ob + i * sb), bi(c.b.ld), beta, dst, bi(c.c.ld));
    }
  });
}

template <class T>
float small_float_dot(const DotCall& c) {
  std::vector<float> x(static_cast<size_t>(c.n)), y(static_cast<size_t>(c.n));
  const T* px = static_cast<const T*>(c.x);
  const T* py = static_cast<const T*>(c.y);
  for (int64_t i = 0; i < c.n; ++i) {
    x[static_cast<size_t>(i)] = px[i * c.incx].to_float();
    y[static_cast<size_t>(i)] = py[i * c.incy].to_float();
  }
  return cblas_sdot(bi(c.n), x.data(), 1, y.data(), 1);
}

template <class T>
void integer_dot(const DotCall& c) {
  const T* x = static_cast<const T*>(c.x);
  const T* y = static_cast<const T*>(c.y);
  uint64_t sum = 0;  // modular: the low bits are exact whatever the order
  for (int64_t i = 0; i < c.n; ++i) {
    sum += static_cast<uint64_t>(static_cast<int64_t>(x[i * c.incx])) *
           static_cast<uint64_t>(static_cast<int64_t>(y[i * c.incy]));
  }
  *static_cast<T*>(c.result) = static_cast<T>(sum);
}

// The serial OpenBLAS is not guaranteed to be safe when called from several threads at once (its
// buffers are shared unless built with USE_LOCKING); host streams are threads, so calls take turns.
std::mutex& blas_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void blas_matmul(const MatmulCall& c) {
  if (is_integer(c.dtype) || c.dtype == DType::Bool) {
    kernels::host::integer_gemm(c);  // no BLAS: needs no turn
    return;
  }
  std::lock_guard lock(blas_mutex());
  switch (c.dtype) {
    case DType::F32:
      real_gemm<float>(c, cblas_sgemm);
      return;
    case DType::F64:
      real_gemm<double>(c, cblas_dgemm);
      return;
    case DType::F16:
      small_float_gemm<half>(c);
      return;
    case DType::BF16:
      small_float_gemm<bfloat16>(c);
      return;
    case DType::C64:
      complex_gemm<float>(c, cblas_cgemm);
      return;
    case DType::C128:
      complex_gemm<double>(c, cblas_zgemm);
      return;
    default:
      fail(ErrorKind::Unsupported, "OpenBLAS has no {} matrix product", name(c.dtype));
  }
}

void blas_dot(const DotCall& c) {
  std::lock_guard lock(blas_mutex());
  const blasint n = bi(c.n), ix = bi(c.incx), iy = bi(c.incy);
  switch (c.dtype) {
    case DType::F32:
      *static_cast<float*>(c.result) =
          cblas_sdot(n, static_cast<const float*>(c.x), ix, static_cast<const float*>(c.y), iy);
      return;
    case DType::F64:
      *static_cast<double*>(c.result) =
          cblas_ddot(n, static_cast<const double*>(c.x), ix, static_cast<const double*>(c.y), iy);
      return;
    case DType::F16:
      *static_cast<half*>(c.result) = convert<half>(small_float_dot<half>(c));
      return;
    case DType::BF16:
      *static_cast<bfloat16*>(c.result) = convert<bfloat16>(small_float_dot<bfloat16>(c));
      return;
    case DType::C64:
      cblas_cdotu_sub(n, c.x, ix, c.y, iy, c.result);
      return;
    case DType::C128:
      cblas_zdotu_sub(n, c.x, ix, c.y, iy, c.result);
      return;
    case DType::I8:
      integer_dot<int8_t>(c);
      return;
    case DType::I16:
      integer_dot<int16_t>(c);
      return;
    case DType::I32:
      integer_dot<int32_t>(c);
      return;
    case DType::I64:
      integer_dot<int64_t>(c);
      return;
    case DType::U8:
      integer_dot<uint8_t>(c);
      return;
    case DType::U32:
      integer_dot<uint32_t>(c);
      return;
    default:
      fail(ErrorKind::Unsupported, "dot of {} arrays", name(c.dtype));
  }
}

}  // namespace culua::detail::host
