// The description of one random-number kernel launch (cu.rand, cu.randn): a counter-based
// generator, so the values depend only on (seed, offset, element index), never on the backend or
// the launch configuration. kernels/random.cuh documents the mapping from elements to bits.
#pragma once

#include <cstdint>

#include "core/model/layout.hpp"

namespace culua::detail {

enum class RandomDistribution : uint8_t { Uniform, Normal };

struct RandomCall {
  RandomDistribution dist = RandomDistribution::Uniform;
  StridedView out;      // f32, f64, f16, bf16, c64 or c128; element i is the row-major i-th
  uint64_t seed = 0;    // the Philox key
  uint64_t offset = 0;  // the Philox counter of the first block
  // Memory (device memory; host memory on the host backend) holding a count added to `offset`
  // when the work runs, or null: a graph advances it at every launch, so that each launch draws
  // new numbers.
  const uint64_t* offset_base = nullptr;

  const char* name() const { return dist == RandomDistribution::Normal ? "randn" : "rand"; }
};

// Real values a Philox block (four 32-bit words) serves for `t`: 2 for f64/c128, else 4.
inline int random_values_per_block(DType t) {
  return t == DType::F64 || t == DType::C128 ? 2 : 4;
}

// Philox blocks (counter values) that `elements` elements of `t` consume.
inline uint64_t random_blocks(DType t, int64_t elements) {
  const auto values =
      static_cast<uint64_t>(elements) * (t == DType::C64 || t == DType::C128 ? 2 : 1);
  const auto per = static_cast<uint64_t>(random_values_per_block(t));
  return (values + per - 1) / per;
}

}  // namespace culua::detail
