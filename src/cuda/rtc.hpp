// Run-time compilation through NVRTC (with the persistent cache) and modules loaded through the
// driver API.
#pragma once

#include <functional>
#include <memory>

#include "core/backend/backend.hpp"
#include "core/backend/rtc_types.hpp"
#include "cuda/cuda_check.hpp"

namespace culua::detail::cuda {

// Whether an image read from the kernel cache loads: false when the driver refuses it.
using CachedImageCheck = std::function<bool(const RtcBinary&)>;

// Compiles for `device` (its architecture: a cubin, or PTX when NVRTC is older than the GPU).
// Compile errors throw Error(Value) whose message holds NVRTC's log. A cache hit is returned only
// when `usable` (if given) accepts it; a refused one (a corrupt file, an image a changed driver
// no longer takes) is removed from the cache, compiled afresh and stored again. A bad
// $CULUA_CACHE_MAX_BYTES throws Error(Value) naming it (when the cache is on).
RtcBinary compile(const RtcRequest& request, const DeviceInfo& device,
                  const CachedImageCheck& usable = {});

// Loads `binary` into `device`'s context, which the caller has made current. The module and its
// kernels make `device` current for each of their calls (a launch: see cuda/scoped.hpp).
std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device,
                                       std::shared_ptr<Health> health);
// The same for an image read from the kernel cache: nullptr when the driver refuses it (or when a
// "cubin" is not an ELF file at all), so that the caller compiles afresh. A sticky error still
// throws and poisons the runtime.
std::shared_ptr<RtcModule> load_cached_module(const RtcBinary& binary, int device,
                                              std::shared_ptr<Health> health);

}  // namespace culua::detail::cuda
