// The compiled fused kernels of one runtime (one Lua state): each generated source compiled once
// per device through the backend (NVRTC and its on-disk cache, src/rtc/kernel_cache.cpp) and kept
// in memory from then on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/rtc_types.hpp"
#include "fuse/codegen.hpp"

namespace culua::detail {
class Backend;
}

namespace culua::detail::fuse {

// The kernels of one generated source: the group's, and with a reduction the second one.
struct FusedFunctions {
  std::shared_ptr<RtcFunction> main, final;
};

class KernelCache {
 public:
  // The functions of the kernel with `k`'s key on `device`, null when it does not compile (`why`
  // says why; a kernel that failed once is not tried again). `source` gives the complete source
  // on a miss.
  FusedFunctions functions(Backend& backend, const FusedKernel& k, int device,
                           const std::function<std::string()>& source, std::string& why);

  // How the last function() found its kernel.
  enum class Found : uint8_t { Memory, Disk, Compiled };
  Found found = Found::Memory;
  double compile_ms = 0;         // the last compile's NVRTC time
  std::set<std::string> warned;  // why groups ran one by one, each reported once

 private:
  std::unordered_map<std::string, FusedFunctions> functions_;  // device + source
  std::unordered_map<std::string, std::string> failed_;        // ... and why
  std::vector<std::shared_ptr<RtcModule>> modules_;
};

}  // namespace culua::detail::fuse
