#include "fuse/kernel_cache.hpp"

#include <cstdlib>
#include <exception>
#include <sstream>

#include "core/backend/backend.hpp"
#include "fuse/prelude.hpp"

namespace culua::detail::fuse {

FusedFunctions KernelCache::functions(Backend& backend, const FusedKernel& k, int device,
                                      const std::function<std::string()>& source,
                                      std::string& why) {
  std::string key = std::to_string(device) + "\n" + k.key;
  if (auto it = functions_.find(key); it != functions_.end()) {
    found = Found::Memory;
    return it->second;
  }
  if (auto it = failed_.find(key); it != failed_.end()) {
    why = it->second;
    return {};
  }
  try {
    RtcRequest request;
    // The prelude stands in the disk cache's key as its hash: a hit reads a key of a few
    // kilobytes (the kernel), not the prelude's ninety.
    const std::string kernel = source();
    request.source = std::string(kFusePrelude) + "\n" + kernel;
    request.key_source =
        std::string("culua fused kernel; prelude sha256 ") + kFusePreludeHash + "\n" + kernel;
    request.name = "culua_fused.cu";
    // As the built-in kernels: no contraction into FMAs (the same bits as unfused operations).
    request.options = {"--fmad=false", "-default-device"};
    // CULUA_FUSE_NVRTC_OPTIONS: more options, separated by spaces (part of the disk cache's key).
    if (const char* extra = std::getenv("CULUA_FUSE_NVRTC_OPTIONS")) {
      std::istringstream words(extra);
      for (std::string w; words >> w;) request.options.push_back(w);
    }
    const RtcBinary binary = backend.compile(request, device);
    found = binary.cache == CacheOutcome::Hit ? Found::Disk : Found::Compiled;
    compile_ms = binary.cache == CacheOutcome::Hit ? 0 : binary.compile_ms;
    std::shared_ptr<RtcModule> module = backend.load_module(binary, device);
    FusedFunctions f{module->function(kFusedKernelName),
                     k.reduces ? module->function(kFusedFinalName) : nullptr};
    modules_.push_back(std::move(module));
    functions_.emplace(std::move(key), f);
    return f;
  } catch (const std::exception& e) {
    why = e.what();
    failed_.emplace(std::move(key), why);
    return {};
  }
}

}  // namespace culua::detail::fuse
