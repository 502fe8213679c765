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

#include "core/backend/rtc_types.hpp"
#include "fuse/codegen.hpp"

namespace culua::detail {
class Backend;
class Buffer;
}  // namespace culua::detail

namespace culua::detail::fuse {

// The kernels of one generated source: the group's, and with a reduction the second one.
struct FusedFunctions {
  std::shared_ptr<RtcFunction> main, final;
};

// A group that ran as generated kernels, ready to run again (fuse/recorder.cpp): its functions,
// its parameter block (the scalars are patched in at each run), its grid.
struct PreparedGroup {
  bool generated = false;
  FusedFunctions f;
  std::vector<unsigned char> params;
  size_t scalar_at = 0;
  std::vector<std::pair<uint32_t, uint8_t>> scalars;  // (tape entry, operand), in block order
  int64_t blocks = 1, grid_y = 1;                     // the first kernel's grid
  int64_t final_blocks = 1;                           // the second kernel's (with a reduction)
  int64_t partial_count = 0;                          // its partial results
  bool reduces = false;
  size_t reduce_at = 0, acc_bytes = 0;
  // The partial results' memory, kept for the next run on the same stream (outside captures).
  mutable std::shared_ptr<Buffer> partials;
  mutable uint64_t partials_stream = 0;
};

// A flush's plan, reused by the next flush whose tape has the same structure (the same
// operations, views, streams and scalar positions; scalar values may differ): a loop's warm
// call then costs its recording and its launches, not the planning and code generation again.
struct CachedFlush {
  Tape tape;
  std::vector<Group> groups;
  std::vector<PreparedGroup> prepared;
  bool final = false;  // the flush at fn's end (scratch values may go unstored)
  bool generate_single = false;
  std::vector<Span> scratch;
  uint64_t used = 0;
};

class KernelCache {
 public:
  // The cached flushes (at most kCachedFlushes; the least recently used is replaced).
  static constexpr size_t kCachedFlushes = 4;
  std::vector<CachedFlush> flushes;
  uint64_t flush_clock = 0;

  // The functions of the kernel with `k`'s key on `device`, null when it does not compile (`why`
  // says why; a kernel that failed once is not tried again). `source` gives the kernel's text
  // (FusedKernel::kernel, without the prelude) on a miss.
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
