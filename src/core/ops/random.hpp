// Random arrays (cu.rand, cu.randn, cu.seed): a counter-based generator (Philox4x32-10), so the
// numbers depend only on the seed, the counter offset and the element index: the CUDA and host
// backends give the same bits, whatever the launch configuration.
//
// Without an explicit seed a call uses the runtime's global seed at its current offset and
// advances the offset by the counters it consumed, so successive calls differ and
// seed(n) followed by the same calls reproduces the same arrays. With an explicit seed a call uses
// that seed at offset 0 and leaves the global state alone. The seed at start-up is kDefaultSeed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/backend/random_call.hpp"
#include "core/model/array.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

// The global seed of a new runtime (Runtime::RandomState's initial value).
inline constexpr uint64_t kDefaultSeed = 0;

// Sets the global seed and resets the counter offset.
void seed(Runtime& rt, uint64_t seed);

// Throws Error(Value) unless `t` is a dtype random arrays support (floats and complex).
void check_random_dtype(DType t, RandomDistribution dist);

// A new array of uniform [0, 1) (Uniform) or standard normal (Normal) values. Complex dtypes:
// each part uniform, or each part N(0, 1/2) (total variance 1).
Array random(Runtime& rt, RandomDistribution dist, const Shape& shape, DType dtype,
             Location loc = Location::Device, Stream* stream = nullptr,
             std::optional<uint64_t> seed = std::nullopt);

// Fills an existing array (any layout; element i is the row-major i-th).
void random_fill(Runtime& rt, RandomDistribution dist, const Array& out, Stream* stream = nullptr,
                 std::optional<uint64_t> seed = std::nullopt);

// The generator's building blocks exactly as the host backend compiles them (kernels/random.cuh;
// defined in kernels/random_host.cpp), for tests.
namespace random_detail {
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);
double log(double x);                               // x positive and normal
void sincos_turns(double u, double* s, double* c);  // sin and cos of 2 pi u, u in [0, 1]
}  // namespace random_detail

}  // namespace culua::detail
