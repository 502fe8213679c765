#include "host/host_fft.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "core/backend/fft_call.hpp"
#include "core/base/error.hpp"
#include "kernels/host_pool.hpp"

#if defined(CULUA_HAVE_KISSFFT)
#include <kissfft.hh>
#endif

namespace culua::detail::host {

#if defined(CULUA_HAVE_KISSFFT)

namespace {

using kernels::host::grain_for;
using kernels::host::parallel_for;

// The largest prime factor of n (trial division: n is an array length).
uint64_t largest_prime_factor(uint64_t n) {
  uint64_t largest = 1;
  for (uint64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  }
  return n > 1 ? n : largest;
}

// kissfft's butterflies for a prime factor p cost O(n p): lengths with a prime factor above this
// go through Bluestein's algorithm instead (a convolution of power-of-two transforms, O(n log n)).
constexpr uint64_t kLargestDirectFactor = 61;

// One complex transform of length n, out of place, by kissfft or by Bluestein's algorithm. A copy
// is made per thread: kissfft's generic butterfly has a scratch buffer of its own.
template <class T>
class Transform {
 public:
  using C = std::complex<T>;

  Transform(size_t n, bool inverse) : n_(n) {
    if (largest_prime_factor(n) <= kLargestDirectFactor) {
      direct_.emplace(n, inverse);
      return;
    }
    // X[k] = w[k] sum_j (x[j] w[j]) conj(w[k - j]) with w[m] = exp(-+ i pi m^2 / n), as a
    // circular convolution of length m >= 2n - 1 (a power of two).
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    forward_.emplace(m_, false);
    backward_.emplace(m_, true);
    const double sign = inverse ? 1.0 : -1.0;
    const double pi = std::acos(-1.0);
    chirp_.resize(n);
    for (size_t j = 0; j < n; ++j) {
      const uint64_t q = (static_cast<uint64_t>(j) * j) % (2 * static_cast<uint64_t>(n));
      const double angle = sign * pi * static_cast<double>(q) / static_cast<double>(n);
      chirp_[j] = C(static_cast<T>(std::cos(angle)), static_cast<T>(std::sin(angle)));
    }
    std::vector<C> b(m_, C(0, 0));
    for (size_t j = 0; j < n; ++j) {
      b[j] = std::conj(chirp_[j]);
      if (j > 0) b[m_ - j] = std::conj(chirp_[j]);
    }
    kernel_.resize(m_);
    forward_->transform(b.data(), kernel_.data());
    const T scale = T(1) / static_cast<T>(m_);
    for (C& v : kernel_) v *= scale;
  }

  void run(const C* in, C* out) {
    if (direct_) {
      direct_->transform(in, out);
      return;
    }
    a_.assign(m_, C(0, 0));
    spectrum_.resize(m_);
    for (size_t j = 0; j < n_; ++j) a_[j] = in[j] * chirp_[j];
    forward_->transform(a_.data(), spectrum_.data());
    for (size_t k = 0; k < m_; ++k) spectrum_[k] *= kernel_[k];
    backward_->transform(spectrum_.data(), a_.data());
    for (size_t k = 0; k < n_; ++k) out[k] = a_[k] * chirp_[k];
  }

 private:
  size_t n_ = 0, m_ = 0;
  std::optional<kissfft<T>> direct_;
  std::optional<kissfft<T>> forward_, backward_;  // Bluestein: length m_
  std::vector<C> chirp_, kernel_, a_, spectrum_;
};

// Rows [lo, hi) of the call with a copy of the transform per range.
template <class T>
void run_rows(const FftCall& c, const Transform<T>& plan, int64_t lo, int64_t hi) {
  using C = std::complex<T>;
  Transform<T> local(plan);
  const auto n = static_cast<size_t>(c.n);
  const auto in_row = static_cast<size_t>(c.in_row());
  const auto out_row = static_cast<size_t>(c.out_row());
  std::vector<C> a, b;
  if (c.kind != FftKind::C2C) {
    a.resize(n);
    b.resize(n);
  }
  for (int64_t r = lo; r < hi; ++r) {
    const auto row = static_cast<size_t>(r);
    switch (c.kind) {
      case FftKind::C2C:
        local.run(static_cast<const C*>(c.in) + row * in_row,
                  static_cast<C*>(c.out) + row * out_row);
        break;
      case FftKind::R2C: {
        const T* x = static_cast<const T*>(c.in) + row * in_row;
        for (size_t j = 0; j < n; ++j) a[j] = C(x[j], T(0));
        local.run(a.data(), b.data());
        std::memcpy(static_cast<C*>(c.out) + row * out_row, b.data(), out_row * sizeof(C));
        break;
      }
      case FftKind::C2R: {
        // The Hermitian spectrum in full: X[n-k] = conj(X[k]). The real part of its inverse
        // transform ignores the imaginary parts of X[0] and (even n) X[n/2], as pocketfft and
        // cuFFT do.
        const C* x = static_cast<const C*>(c.in) + row * in_row;
        for (size_t k = 0; k < in_row; ++k) a[k] = x[k];
        for (size_t k = in_row; k < n; ++k) a[k] = std::conj(x[n - k]);
        local.run(a.data(), b.data());
        T* y = static_cast<T*>(c.out) + row * out_row;
        for (size_t j = 0; j < n; ++j) y[j] = b[j].real();
        break;
      }
    }
  }
}

template <class T>
void run(const FftCall& c) {
  const bool inverse = c.kind == FftKind::C2R || (c.kind == FftKind::C2C && c.inverse);
  const Transform<T> plan(static_cast<size_t>(c.n), inverse);
  const int64_t row_bytes = 4 * c.n * static_cast<int64_t>(sizeof(std::complex<T>));
  parallel_for(c.batch, grain_for(row_bytes),
               [&](int64_t lo, int64_t hi) { run_rows<T>(c, plan, lo, hi); });
}

}  // namespace

void check_host_fft() {}

size_t host_fft_scratch_bytes(const FftCall& c) {
  const auto n = static_cast<uint64_t>(c.n);
  if (n == 0 || c.batch <= 0) return 0;
  uint64_t m = 0;  // Bluestein's length: its two transforms, kernel, chirp-weighted row, spectrum
  if (largest_prime_factor(n) > kLargestDirectFactor) {
    m = 1;
    while (m < 2 * n - 1) m *= 2;
  }
  const uint64_t complex_bytes = c.real == DType::F64 ? 16 : 8;
  // A plan: kissfft's twiddles (n, or 2m) and Bluestein's chirp (n) and four m-long rows; a range
  // adds the real transforms' two n-long rows to its copy.
  const uint64_t copy = (4 * n + 6 * m) * complex_bytes;
  const auto ranges = std::min<int64_t>(c.batch, kernels::host::pool_threads());
  const auto copies = static_cast<uint64_t>(ranges) + 1;
  return static_cast<size_t>(copies * copy);
}

void host_fft(const FftCall& c) {
  if (c.real == DType::F64) {
    run<double>(c);
  } else {
    run<float>(c);
  }
}

#else

void check_host_fft() {
  fail(ErrorKind::Unsupported,
       "the host backend's FFTs need kissfft, and this culua was built without it: install "
       "libkissfft-dev (tools/dev setup) and build again");
}

void host_fft(const FftCall&) {
  check_host_fft();
}

size_t host_fft_scratch_bytes(const FftCall&) {
  return 0;
}

#endif

}  // namespace culua::detail::host
