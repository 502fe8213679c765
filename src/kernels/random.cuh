// Counter-based random numbers shared by the host and CUDA backends: Philox4x32-10, the forming of
// uniform values of each dtype from its bits, and a Box-Muller transform built on a logarithm and
// a sine/cosine of our own. Everything uses only + - * / and sqrt in double precision (correctly
// rounded on both backends; the kernels are compiled without FMA contraction), so both backends
// produce the same bits.
//
// The mapping from element to bits (see RandomCall): the output is a sequence of real values
// (complex elements are two: real part, then imaginary part), in row-major element order. Philox
// block b (counter {lo32(offset + b), hi32(offset + b), 0, 0}, key {lo32(seed), hi32(seed)}) gives
// four 32-bit words w0..w3 and serves values_per_block(dtype) consecutive values:
//   - 4 values (f32, f16, bf16, c64): value 4b+j takes word wj;
//   - 2 values (f64, c128): value 2b+j takes the 64-bit word (w[2j] << 32) | w[2j+1].
// Uniform [0, 1): the top bits of the word for the precision, times a power of two (exact in the
// dtype, so never rounded up to 1): f32 24 bits, f16 11, bf16 8, f64 53. Normal: values 2p and 2p+1
// (always in one block) are the Box-Muller pair of the words of those values: u1 = (x + 1) 2^-bits
// in (0, 1], u2 = x 2^-bits in [0, 1), with bits = 32 (53 for f64); r = sqrt(-2 log u1) (sqrt(-log
// u1) for complex, whose parts have variance 1/2), values r cos(2 pi u2) and r sin(2 pi u2)
// computed in double and rounded once to the dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/backend/random_call.hpp"
#include "core/model/dtype.hpp"
#include "core/model/numeric.hpp"
#include "kernels/functors.cuh"

namespace culua::detail::kernels {

struct PhiloxBlock {
  uint32_t w[4];
};

CULUA_HD inline uint32_t mulhi32(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
#endif
}

// Philox4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011).
CULUA_HD inline PhiloxBlock philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                          uint32_t k0, uint32_t k1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    const uint32_t hi0 = mulhi32(kMul0, c0), lo0 = kMul0 * c0;
    const uint32_t hi1 = mulhi32(kMul1, c2), lo1 = kMul1 * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

CULUA_HD inline double double_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
#endif
}

// Natural logarithm of a positive normal double: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s) with s = (m - 1)/(m + 1), |s| <= 0.1716, by its series to s^27 (the next term
// is below 1e-21 relative). Error about 1e-16 relative, away from x = 1 about 2e-16 absolute.
CULUA_HD inline double random_log(double x) {
  const uint64_t b = bits_of(x);
  int e = static_cast<int>((b >> 52) & 0x7FF) - 1023;
  double m = double_from_bits((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
  if (m > 1.4142135623730951) {
    m *= 0.5;  // exact
    ++e;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 27;
  p = p * s2 + 1.0 / 25;
  p = p * s2 + 1.0 / 23;
  p = p * s2 + 1.0 / 21;
  p = p * s2 + 1.0 / 19;
  p = p * s2 + 1.0 / 17;
  p = p * s2 + 1.0 / 15;
  p = p * s2 + 1.0 / 13;
  p = p * s2 + 1.0 / 11;
  p = p * s2 + 1.0 / 9;
  p = p * s2 + 1.0 / 7;
  p = p * s2 + 1.0 / 5;
  p = p * s2 + 1.0 / 3;
  // log m = 2s + 2s^3 p(s^2), the small correction added last.
  const double log_m = 2.0 * s + 2.0 * s * s2 * p;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000: e * hi is exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  return de * kLn2Hi + (de * kLn2Lo + log_m);
}

// sin(2 pi u) and cos(2 pi u) for u in [0, 1] given in turns: the quadrant q = round(4u) is taken
// exactly (u - q/4 is exact in [-1/8, 1/8]), then t = 2 pi (u - q/4) in [-pi/4, pi/4] and Taylor
// polynomials to t^17 and t^18 (next terms below 1e-17). Error about 2e-16.
CULUA_HD inline void random_sincos_turns(double u, double* sin_out, double* cos_out) {
  const double q = static_cast<double>(static_cast<int64_t>(u * 4.0 + 0.5));  // round(4u), u >= 0
  const double f = u - q * 0.25;
  const int quadrant = static_cast<int>(q) & 3;
  constexpr double kTwoPi = 6.28318530717958647692;
  const double t = f * kTwoPi;
  const double t2 = t * t;
  // sin t = t (1 - t^2/3! + t^4/5! - ...), cos t = 1 - t^2/2! + t^4/4! - ...
  double ps = -1.0 / 355687428096000.0;  // -1/17!
  ps = ps * t2 + 1.0 / 1307674368000.0;  // 1/15!
  ps = ps * t2 - 1.0 / 6227020800.0;     // 1/13!
  ps = ps * t2 + 1.0 / 39916800.0;       // 1/11!
  ps = ps * t2 - 1.0 / 362880.0;         // 1/9!
  ps = ps * t2 + 1.0 / 5040.0;           // 1/7!
  ps = ps * t2 - 1.0 / 120.0;            // 1/5!
  ps = ps * t2 + 1.0 / 6.0;              // 1/3!
  const double s = t - t * t2 * ps;
  double pc = 1.0 / 6402373705728000.0;   // 1/18!
  pc = pc * t2 - 1.0 / 20922789888000.0;  // 1/16!
  pc = pc * t2 + 1.0 / 87178291200.0;     // 1/14!
  pc = pc * t2 - 1.0 / 479001600.0;       // 1/12!
  pc = pc * t2 + 1.0 / 3628800.0;         // 1/10!
  pc = pc * t2 - 1.0 / 40320.0;           // 1/8!
  pc = pc * t2 + 1.0 / 720.0;             // 1/6!
  pc = pc * t2 - 1.0 / 24.0;              // 1/4!
  pc = pc * t2 + 0.5;                     // 1/2!
  const double c = 1.0 - t2 * pc;
  switch (quadrant) {
    case 0:
      *sin_out = s;
      *cos_out = c;
      break;
    case 1:
      *sin_out = c;
      *cos_out = -s;
      break;
    case 2:
      *sin_out = -s;
      *cos_out = -c;
      break;
    default:
      *sin_out = -c;
      *cos_out = s;
      break;
  }
}

// The real type a random dtype is made of (complex dtypes: their parts).
template <class T>
struct random_real {
  using type = T;
};
template <class R>
struct random_real<complex<R>> {
  using type = R;
};

// Bits of uniform precision that a value of R takes (exact in R).
template <class R>
CULUA_HD constexpr int uniform_bits() {
  if constexpr (std::is_same_v<R, double>) {
    return 53;
  } else if constexpr (std::is_same_v<R, float>) {
    return 24;
  } else if constexpr (std::is_same_v<R, half>) {
    return 11;
  } else {
    return 8;
  }
}

// The values of one Philox block for real type R (4 values, or 2 for double). `normal_scale_log`
// is -2 (variance 1) or -1 (complex parts: variance 1/2).
template <class R, bool Normal>
struct RandomBlock {
  static constexpr int kValues = std::is_same_v<R, double> ? 2 : 4;

  CULUA_HD static void values(const PhiloxBlock& blk, double log_factor, double out[kValues]) {
    if constexpr (kValues == 2) {
      const uint64_t x0 = (static_cast<uint64_t>(blk.w[0]) << 32) | blk.w[1];
      const uint64_t x1 = (static_cast<uint64_t>(blk.w[2]) << 32) | blk.w[3];
      constexpr double kScale = 1.0 / 9007199254740992.0;  // 2^-53
      if constexpr (Normal) {
        normal_pair(static_cast<double>((x0 >> 11) + 1) * kScale,
                    static_cast<double>(x1 >> 11) * kScale, log_factor, out);
      } else {
        out[0] = static_cast<double>(x0 >> 11) * kScale;
        out[1] = static_cast<double>(x1 >> 11) * kScale;
      }
    } else {
      if constexpr (Normal) {
        constexpr double kScale = 1.0 / 4294967296.0;  // 2^-32
        normal_pair((static_cast<double>(blk.w[0]) + 1.0) * kScale,
                    static_cast<double>(blk.w[1]) * kScale, log_factor, out);
        normal_pair((static_cast<double>(blk.w[2]) + 1.0) * kScale,
                    static_cast<double>(blk.w[3]) * kScale, log_factor, out + 2);
      } else {
        constexpr int kBits = uniform_bits<R>();
        constexpr double kScale = 1.0 / static_cast<double>(1u << kBits);
        for (int j = 0; j < 4; ++j) out[j] = static_cast<double>(blk.w[j] >> (32 - kBits)) * kScale;
      }
    }
  }

  CULUA_HD static void normal_pair(double u1, double u2, double log_factor, double out[2]) {
    const double r = sqrt(log_factor * random_log(u1));
    double s, c;
    random_sincos_turns(u2, &s, &c);
    out[0] = r * c;
    out[1] = r * s;
  }
};

// Fills values [block * kValues, ...) of an output of `count` real values: element i of the output
// (row-major) holds values i*parts .. i*parts + parts - 1.
template <class R, bool Normal>
struct RandomFill {
  using Block = RandomBlock<R, Normal>;
  static constexpr int kValues = Block::kValues;

  R* out;
  int64_t count;  // real values: elements * parts
  int parts;      // 1 real, 2 complex
  bool contiguous;
  Indexer idx;
  uint32_t key0, key1;
  uint64_t offset;
  double log_factor;
  const uint64_t* offset_base;  // null, or a count added to offset (graphs: per launch)

  CULUA_HD PhiloxBlock bits(int64_t block) const {
    const uint64_t base = offset_base ? *offset_base : 0;
    const uint64_t ctr = offset + base + static_cast<uint64_t>(block);
    return philox4x32_10(static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0u, 0u, key0,
                         key1);
  }

  CULUA_HD R* place(int64_t v) const {
    if (contiguous) return out + v;
    if (parts == 1) return out + idx(v);
    return out + 2 * idx(v >> 1) + (v & 1);
  }

  // The block's values rounded to R.
  CULUA_HD void generate(int64_t block, R out_values[kValues]) const {
    double vals[kValues];
    Block::values(bits(block), log_factor, vals);
    for (int j = 0; j < kValues; ++j) out_values[j] = convert<R>(vals[j]);
  }

  CULUA_HD void operator()(int64_t block) const {
    R vals[kValues];
    generate(block, vals);
    const int64_t first = block * kValues;
    for (int j = 0; j < kValues && first + j < count; ++j) *place(first + j) = vals[j];
  }
};

// Calls f(RandomFill<R, Normal>{...}, blocks) for the call's dtype and distribution.
template <class F>
decltype(auto) dispatch_random(const RandomCall& c, F&& f) {
  auto typed = [&](auto real_tag, auto normal_tag) {
    using R = typename decltype(real_tag)::type;
    constexpr bool kNormal = decltype(normal_tag)::value;
    using Fill = RandomFill<R, kNormal>;
    const int parts = is_complex(c.out.dtype) ? 2 : 1;
    Fill fill{static_cast<R*>(c.out.data),
              c.out.size * parts,
              parts,
              c.out.is_contiguous(),
              Indexer(c.out),
              static_cast<uint32_t>(c.seed),
              static_cast<uint32_t>(c.seed >> 32),
              c.offset,
              parts == 2 ? -1.0 : -2.0,
              c.offset_base};
    return f(fill, static_cast<int64_t>(random_blocks(c.out.dtype, c.out.size)));
  };
  auto by_dist = [&](auto real_tag) {
    if (c.dist == RandomDistribution::Normal) return typed(real_tag, std::true_type{});
    return typed(real_tag, std::false_type{});
  };
  switch (c.out.dtype) {
    case DType::F64:
    case DType::C128:
      return by_dist(type_tag<double>{});
    case DType::F16:
      return by_dist(type_tag<half>{});
    case DType::BF16:
      return by_dist(type_tag<bfloat16>{});
    default:
      return by_dist(type_tag<float>{});
  }
}

}  // namespace culua::detail::kernels
