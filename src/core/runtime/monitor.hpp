// What the measurement tools need to see of every run: the ledger of transfers, synchronizations
// and allocations (cu.ledger), strict mode (cu.strict), the streams that may still have queued
// work (the host-clock tripwire), and an observer that sees every operation queued on a stream
// (the trace, src/measure/trace.hpp). The runtime owns one; its backend reports to it
// (core/runtime/observed_backend.hpp), and the core's synchronizing operations call it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/stream.hpp"

namespace culua::detail {

// Counts since the runtime started (cu.ledger). Transfers are counted per call of a copy queued
// on a stream; pageable/pinned count the host side of host<->device copies.
struct Ledger {
  uint64_t h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0;
  uint64_t h2d_calls = 0, d2h_calls = 0, d2d_calls = 0;
  uint64_t pageable_bytes = 0, pageable_calls = 0;
  uint64_t pinned_bytes = 0, pinned_calls = 0;
  uint64_t p2p_bytes = 0, p2p_calls = 0;  // copies between two devices (peer or staged)
  uint64_t syncs = 0;           // every time the host waited for the device (explicit or not)
  uint64_t implicit_syncs = 0;  // ... of which an operation waited without being asked to
  uint64_t allocs = 0, alloc_bytes = 0;  // memory allocations through the backend
  uint64_t launches = 0;                 // operations queued on streams (kernels, copies, fills)
  uint64_t graph_launches = 0;  // launches of graphs (their operations count in the fields above)
  // NCCL collectives (cu.nccl): one call per rank of this process, and the bytes of each rank's
  // input (a send's or receive's buffer).
  uint64_t nccl_calls = 0, nccl_bytes = 0;
  // cu.fuse: elementwise operations recorded, and the groups they ran as (each group one pass
  // over its elements: one launch in `launches`).
  uint64_t fused_ops = 0, fused_groups = 0;
  // ... the groups that ran as generated kernels (CUDA), and how their kernels were found: compiled
  // by NVRTC (with the compile time in microseconds), from the on-disk cache, or already loaded.
  uint64_t fused_kernels = 0, fused_compiles = 0, fused_compile_us = 0, fused_disk_hits = 0,
           fused_memory_hits = 0;
  // ... flushes before the fused function's end (an operation that is not recorded, a wait, a
  // free, an event: the recorded operations ran before it, as separate groups).
  uint64_t fused_early_flushes = 0;

  Ledger& operator+=(const Ledger& o);
  Ledger times(uint64_t n) const;  // every count multiplied by n (n launches of one graph)
};

enum class OpCategory : uint8_t { Copy, Kernel, Library, Other };

// One operation queued on a stream.
struct OpInfo {
  const char* name = "";  // "copy HtoD", "add", "kernel saxpy"
  OpCategory category = OpCategory::Other;
  uint64_t bytes = 0;  // bytes the operation reads and writes (logical, per element of each view)
  const char* covers = nullptr;  // a fused group's script lines (Monitor::fused_covers)
};

// Sees every queued operation and every host wait (the trace recorder).
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void begin_op(const OpInfo& op, Stream& s) = 0;  // before the operation is queued
  virtual void end_op(const OpInfo& op, Stream& s) = 0;    // after it was queued
  // The host waited for the device from t0 to t1 (steady-clock seconds).
  virtual void host_wait(const char* what, bool implicit, double t0, double t1) = 0;
  // Math on host arrays ran on the calling thread from t0 to t1 (Runtime::host_math).
  virtual void host_op(const OpInfo& op, double t0, double t1) = 0;
};

struct ElementwiseCall;
struct ReduceCall;

// Takes elementwise operations instead of the backend (cu.fuse, src/fuse/recorder.hpp): while one
// is set, the observed backend hands it each elementwise call, and asks it to flush what it holds
// before any other operation, wait, free or event, so that everything runs in the order written.
class OpRecorder {
 public:
  virtual bool record(const ElementwiseCall& c, Stream& s) = 0;  // true: taken, not queued
  // A reduction, which may end a group (its epilogue); false: flush, then queue it.
  virtual bool record_reduce(const ReduceCall& c, Stream& s) = 0;
  virtual void flush() = 0;  // queue what was taken
  // Before memory is freed (which must not throw): a failure is kept and thrown by the next
  // flush().
  virtual void flush_before_free() noexcept = 0;

 protected:
  ~OpRecorder() = default;
};

// The recorder of the cu.fuse call running on this thread, or null: a buffer's first use on
// another stream flushes it before it orders the streams (core/model/buffer.cpp).
OpRecorder*& thread_recorder();

// The script lines operations came from, each interned once as a small number (0: none): the
// profiler keeps a number per operation, not a string (core stays free of Lua: the Lua layer
// finds the line and interns it).
class SiteTable {
 public:
  // The number of the line `line` of the chunk named `source` ("@script.lua"; `key` identifies
  // the chunk's text, compared first), shown as "<short_src>:<line>" ("script.lua:12").
  uint32_t intern(const void* key, const char* source, int line, const char* short_src);
  // "script.lua:12" for a number from intern ("" for 0 or an unknown number).
  const std::string& name(uint32_t id) const;
  size_t size() const { return names_.size(); }

 private:
  struct Slot {
    const void* key = nullptr;
    int line = 0;
    uint32_t id = 0;
    std::string source;
  };
  std::vector<Slot> slots_;  // open addressing on (key, line); grows at half full
  std::vector<std::string> names_{std::string()};
};

class Monitor {
 public:
  Ledger ledger;
  // > 0 inside cu.strict: implicit synchronizations raise.
  int strict = 0;
  // Sees every operation: the one observer added, or a tee of several (the trace and the
  // profiler at once); null when none. Set through add_observer/remove_observer.
  OpObserver* observer = nullptr;
  // Observers that show each fused group's script lines (the trace): while one is set, cu.fuse
  // notes every recorded operation's line and plans each flush anew (the profiler needs neither).
  int sites_wanted = 0;
  // Adds `o` after those already added (begin_op in the order added, end_op in reverse, so the
  // first one's interval encloses the later ones'); remove_observer takes it out (no-op if absent).
  void add_observer(OpObserver* o);
  void remove_observer(OpObserver* o);
  OpRecorder* recorder = nullptr;  // inside cu.fuse
  // While cu.fuse runs a group under a trace: the script lines its operations came from
  // ("script.lua:12-20,31"), shown with the group's kernel (null otherwise).
  const char* fused_covers = nullptr;
  void flush_recorded() {
    if (recorder) recorder->flush();
  }
  // The script location issuing the current operation ("script.lua:12"), set by the Lua layer;
  // used by the trace and the strict-mode message. May be empty.
  std::function<std::string()> site;
  // The same line, interned in `sites` (0: none); cheaper than site() (no string is made).
  std::function<uint32_t()> site_id;
  SiteTable sites;

  // Work was queued on `s`.
  void queued(Stream& s) {
    ++ledger.launches;
    queued_uncounted(s);
  }
  // ... without counting it as an operation (a graph launch: its operations count instead).
  void queued_uncounted(Stream& s) {
    if (&s != last_queued_ || last_queued_ref_.expired()) queued_slow(s);
  }
  // True when work queued on some stream may still be running (queries those streams).
  bool work_pending();
  // The host waited for all work queued on `s` (a stream synchronize) / on every stream of
  // `device`: they are idle until work is queued again. (An event recorded later queues no work,
  // though the stream reports it as pending for a moment.)
  void idle(Stream& s);
  void idle_device(int device);

  // Wraps a host wait for the device: counts it, raises under strict mode when implicit and
  // during a graph capture (before waiting), and reports its duration to the observer.
  class Wait {
   public:
    Wait(Monitor& m, const char* what, bool implicit);
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    Monitor& m_;
    const char* what_;
    bool implicit_;
    double t0_ = 0;
  };

 private:
  void queued_slow(Stream& s);
  class Tee;
  std::vector<OpObserver*> observers_;
  std::unique_ptr<OpObserver> tee_;
  Stream* last_queued_ = nullptr;
  std::weak_ptr<Stream> last_queued_ref_;
  std::vector<std::weak_ptr<Stream>> busy_;  // streams that got work since they were last idle
};

// Seconds on the steady clock (the time base of the trace's host side).
double steady_seconds();

}  // namespace culua::detail
