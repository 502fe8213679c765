// The profiler (cu.profile, culua --profile): every kernel, copy and fill that ran on the device,
// with its device start and end, joined to the operation culua queued and the script line that
// queued it. On CUDA the device rows come from CUPTI's activity records (a cuBLAS product, a sort
// or a graph shows each of its kernels), joined through CUPTI's correlation ids; on the host
// backend they are the host streams' task times (events around each operation), so that the
// tables, the join and the trace rows are the same code on both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/monitor.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail::measure {

enum class ActivityKind : uint8_t { Kernel, Copy, Memset, Other };
const char* activity_kind_name(ActivityKind k);

// One thing that ran on a device.
struct ActivityRecord {
  std::string name;  // a kernel's name (demangled), "copy HtoD", "memset"
  ActivityKind kind = ActivityKind::Other;
  int device = 0;
  uint64_t stream = 0;    // culua's stream id when joined to an operation, else CUPTI's
  double t0 = 0, t1 = 0;  // device start and end, steady-clock seconds
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int32_t registers = -1;                           // per thread (-1: not a kernel, or not known)
  int32_t static_shared = -1, dynamic_shared = -1;  // bytes per block
  uint64_t bytes = 0;                               // a copy's or fill's bytes
  uint32_t graph = 0;                               // the graph it ran in (0: none)
  uint32_t op = 0;  // 1 + the index of the operation that queued it (0: none seen)
};

// One operation culua queued while the profiler listened.
struct ProfiledOp {
  std::string name;  // "add", "kernel saxpy", "matmul", "graph launch"
  OpCategory category = OpCategory::Other;
  uint32_t site = 0;  // the script line (Monitor::sites)
  int device = 0;
  uint64_t stream = 0;
  double host_t0 = 0, host_t1 = 0;  // the enqueue call, steady seconds
};

// Where device rows come from: CUPTI on CUDA, events on the host backend.
class DeviceActivity {
 public:
  virtual ~DeviceActivity() = default;
  // Around the queueing of operation `op` (1-based) on `s`.
  virtual void begin_op(uint32_t op, const OpInfo& info, Stream& s) = 0;
  virtual void end_op(uint32_t op, Stream& s) = 0;
  // Waits for what was queued and appends the records completed since the last collect.
  virtual void collect(std::vector<ActivityRecord>& out) = 0;
  // Stops listening (collect first); idempotent.
  virtual void stop() = 0;
  virtual std::string source() const = 0;  // "CUPTI 13.0 activity (libcupti.so.13)", ...
  virtual uint64_t dropped() const = 0;    // records lost (buffers full)
};

// The host backend's rows (and any backend's, when asked): a timing event before and after each
// operation on its stream.
std::unique_ptr<DeviceActivity> make_event_activity(Runtime& rt);
// CUPTI's activity records; throws Error(Unsupported) "unavailable: ..." without CUPTI, or when
// another tool (Nsight, a second culua profiler) holds CUPTI's callbacks.
std::unique_ptr<DeviceActivity> make_cupti_activity(Runtime& rt);

// A summary row: by kernel name or by script line.
struct ProfileRow {
  std::string key;     // the name, or the line ("script.lua:12"; "(not from a script line)")
  std::string detail;  // by line: its operations' names; by kernel: its kind
  uint64_t calls = 0;
  double total_ms = 0, mean_us = 0, min_us = 0, max_us = 0;
  double share = 0;           // of the device time of all rows
  double idle_before_ms = 0;  // device idle just before this row's records started
};

struct ProfileGap {
  int device = 0;
  double t0 = 0, ms = 0;      // relative to the profile's start (ms)
  std::string before, after;  // the lines of the records around it
};

struct ProfileReport {
  std::string backend;   // "cuda", "host"
  std::string source;    // where the rows came from
  double span_ms = 0;    // first device start to last device end
  double device_ms = 0;  // sum of every record's device time
  double busy_ms = 0;    // time some record ran (per device, summed over devices)
  double idle_ms = 0;    // span (per device) minus busy
  uint64_t gaps = 0;     // idle intervals between records, per device
  uint64_t records = 0, ops = 0, dropped = 0;
  std::vector<ProfileRow> by_kernel, by_line;  // largest total first
  std::vector<ProfileGap> largest_gaps;        // up to 5
  std::vector<ActivityRecord> rows;            // every record, in device order
  std::vector<ProfiledOp> op_list;             // the operations (rows[i].op indexes it, 1-based)
  std::vector<std::string> site_names;         // the sites rows use (index = SiteTable id)

  std::string line_of(const ActivityRecord& r) const;  // its script line, or ""
  // The tables as text: the largest `top` rows of each (0: all).
  std::string text(size_t top = 15) const;
  std::string json() const;  // everything: summary, both tables, gaps, every record
  std::string csv() const;   // one line per record: its fields and its script line
};

// A place in a recording (cu.profile inside a profiled run reports from there on): the number of
// operations seen, and the time (records that joined no operation count from then on).
struct ProfileMark {
  uint32_t op = 0;
  double t = 0;
};

// Records every operation's device rows while it exists (an OpObserver on the runtime's monitor).
class Profiler final : public OpObserver {
 public:
  // `cupti`: the device rows from CUPTI (the CUDA backend); else from events. Throws when the
  // source is unavailable. `limit`: records kept (later ones are counted as dropped).
  Profiler(Runtime& rt, bool cupti, uint64_t limit = 1000000);
  ~Profiler() override;
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  bool recording() const { return recording_; }
  using Mark = ProfileMark;
  Mark mark();
  // Stops listening; waits for the device; collects.
  void stop();
  // The report of everything since `from` (the whole recording by default); collects first.
  ProfileReport report(const ProfileMark& from = ProfileMark{});

  // Counts what the recording holds against a budget (the sandbox's Lua heap), as the trace does:
  // charge(bytes) may refuse (the operation or record is dropped); all is given back at the end.
  void set_memory_account(std::function<bool(int64_t)> charge) { charge_ = std::move(charge); }

  void begin_op(const OpInfo& op, Stream& s) override;
  void end_op(const OpInfo& op, Stream& s) override;
  void host_wait(const char*, bool, double, double) override {}
  void host_op(const OpInfo&, double, double) override {}

 private:
  void collect();
  Runtime& rt_;
  uint64_t limit_;
  bool recording_ = true;
  std::unique_ptr<DeviceActivity> source_;
  std::vector<ProfiledOp> ops_;
  std::vector<uint32_t> open_;  // operations between begin_op and end_op
  std::vector<ActivityRecord> records_;
  uint64_t dropped_ops_ = 0;
  std::function<bool(int64_t)> charge_;
  int64_t charged_ = 0;
  bool keep(int64_t bytes);
};

}  // namespace culua::detail::measure
