// Host memory that work keeps while it runs: a reduction's partials, a sort's merge buffer, the
// f32 copies of a half-precision product, an FFT's work rows. Under the sandbox's memory quota it
// counts as arrays do (docs/sandbox.md, "Limits"): the code that starts such work reserves the
// most it keeps, on the calling thread, before anything is queued, and the work holds the token
// until it ends (a queued task, or a graph that captured it, for as long as it lives). A
// reservation with no room throws Error(OutOfMemory) naming the quota, and the runtime keeps
// working.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace culua::detail {

// Dropping the last copy gives the bytes back (on any thread). Null: nothing was counted.
using ScratchToken = std::shared_ptr<const void>;
// The runtime's reservation: `bytes` of temporaries for the operation named `what`.
using ScratchReserve = std::function<ScratchToken(size_t bytes, const char* what)>;

// While it lives, reserve_scratch on this thread goes to `reserve` (the runtime's observed
// backend and host executor install it around the calls that keep temporaries).
class ScratchScope {
 public:
  explicit ScratchScope(const ScratchReserve* reserve) noexcept;
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

 private:
  const ScratchReserve* previous_;
};

// Reserves `bytes` of host temporaries for `what` with the reservation in scope on this thread;
// none in scope (no runtime around the call, or no quota): nothing is counted.
ScratchToken reserve_scratch(size_t bytes, const char* what);

}  // namespace culua::detail
