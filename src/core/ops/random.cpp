// Random arrays: the global seed and offset, the dtype check, and the launch of a fill.
#include "core/ops/random.hpp"

#include "core/base/error.hpp"
#include "core/ops/launcher.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/capture.hpp"

namespace culua::detail {

void seed(Runtime& rt, uint64_t seed) {
  rt.random_state().seed = seed;
  rt.random_state().offset = 0;
}

void check_random_dtype(DType t, RandomDistribution dist) {
  if (is_floating(t) || is_complex(t)) return;
  fail(ErrorKind::Value,
       "{} numbers need a float or complex dtype (f32, f64, f16, bf16, c64 or c128), not {}",
       dist == RandomDistribution::Normal ? "normal" : "uniform", name(t));
}

Array random(Runtime& rt, RandomDistribution dist, const Shape& shape, DType dtype, Location loc,
             Stream* stream, std::optional<uint64_t> seed) {
  check_random_dtype(dtype, dist);
  Array out = empty(rt, shape, dtype, loc, stream);
  random_fill(rt, dist, out, stream, seed);
  return out;
}

void random_fill(Runtime& rt, RandomDistribution dist, const Array& out, Stream* stream,
                 std::optional<uint64_t> seed) {
  out.check_alive("the output array");
  check_random_dtype(out.dtype(), dist);
  RandomCall c;
  c.dist = dist;
  c.out = out.view();
  if (seed) {
    c.seed = *seed;
    c.offset = 0;
  } else {
    Runtime::RandomState& state = rt.random_state();
    c.seed = state.seed;
    c.offset = state.offset;
  }
  if (out.size() > 0) {
    const Launcher l(rt, out, stream, "filling a host array");
    l.wait(out);
    l.record(out);
    // In a graph, each launch draws new numbers: the counter advances per launch.
    if (Capture* capture = l.host() ? nullptr : l.stream()->capture()) {
      c.offset_base = capture->random_counter(random_blocks(out.dtype(), out.size()));
    }
    l.run(c);  // out's use is recorded above, before the capture's counter
  }
  // Advanced only once the work is queued: a failed call consumes nothing.
  if (!seed) rt.random_state().offset += random_blocks(out.dtype(), out.size());
}

}  // namespace culua::detail
