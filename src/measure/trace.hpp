// The timeline trace (cu.trace): every operation queued on every stream, timed on the device with a
// pair of events, with its bytes and the script line that issued it; the host's waits and named
// ranges on a host track. Written as Chrome trace JSON (Perfetto and chrome://tracing open it);
// summarized as busy time per stream and the fraction of time streams overlapped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/base/json.hpp"
#include "core/runtime/monitor.hpp"
#include "core/runtime/runtime.hpp"
#include "measure/event_clock.hpp"

namespace culua::detail::measure {

struct ProfileReport;

struct StreamSummary {
  int device = 0;
  uint64_t stream = 0;  // Stream::id()
  std::string name;     // "device 0 stream 3"
  double busy_ms = 0;   // union of the stream's operation intervals
  uint64_t ops = 0;
  uint64_t bytes = 0;
};

struct TraceSummary {
  double span_ms = 0;     // first operation start to last operation end
  double busy_ms = 0;     // time at least one stream was busy
  double overlap_ms = 0;  // time at least two streams were busy
  double overlap = 0;     // overlap_ms / busy_ms (0 when nothing ran)
  uint64_t ops = 0;
  uint64_t dropped = 0;  // operations past the limit (or the sandbox's heap), not recorded
  std::vector<StreamSummary> streams;
  std::string text() const;  // a readable table
};

class TraceRecorder final : public OpObserver {
 public:
  // Starts recording on `rt` (installs itself as the monitor's observer). Waits for the current
  // device first, so that the timeline starts from an idle device.
  TraceRecorder(Runtime& rt, uint64_t limit);
  ~TraceRecorder() override;
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  bool recording() const { return recording_; }
  // Stops recording (uninstalls the observer); waits for the recorded operations to finish.
  void stop();
  // Summary of what was recorded (stops first when still recording).
  TraceSummary summary();
  // Writes Chrome trace JSON; throws Error(Value) naming the path when it cannot.
  void write_chrome_json(const std::string& path);

  // Counts what the recording holds against a budget (the sandbox's Lua heap): charge(bytes) is
  // called before each record is kept and may refuse it (false: the record is dropped, counted as
  // past the limit); charge(-bytes) gives it all back when the recorder goes.
  void set_memory_account(std::function<bool(int64_t)> charge) { charge_ = std::move(charge); }

  // The profiler's device rows (measure/profile.hpp: CUPTI's kernels, copies and fills, or the
  // host streams' tasks), shown as device tracks of their own with an arrow from the host slice
  // of the operation that queued each.
  void add_device_rows(const ProfileReport& rep);

  // A named host range (cu.range), from t0 to t1 (steady seconds).
  void host_range(const std::string& name, double t0, double t1, const std::string& site);

  void begin_op(const OpInfo& op, Stream& s) override;
  void end_op(const OpInfo& op, Stream& s) override;
  void host_wait(const char* what, bool implicit, double t0, double t1) override;
  void host_op(const OpInfo& op, double t0, double t1) override;

 private:
  struct DeviceOp {
    std::string name;
    OpCategory category;
    uint64_t bytes;
    int device;
    uint64_t stream;
    bool default_stream;
    std::string site;
    double host_t0, host_t1;  // steady seconds: the host's enqueue call
    std::shared_ptr<Event> start, end;
    double t0_us = 0, t1_us = 0;  // resolved device times, relative to the trace origin
    std::string covers = {};      // a fused group's script lines
  };
  struct HostSpan {
    std::string name;
    std::string category;  // "wait", "implicit wait", "range", "host math"
    std::string site;
    double t0, t1;
  };
  void resolve();

  Runtime& rt_;
  uint64_t limit_;
  bool recording_ = true;
  bool resolved_ = false;
  uint64_t dropped_ = 0;
  std::function<bool(int64_t)> charge_;
  int64_t charged_ = 0;
  bool keep(int64_t bytes);  // charges a record of about `bytes` (true: keep it)
  double start_host_ = 0;
  EventClock clock_;  // device events on the steady clock
  std::vector<DeviceOp> ops_;
  std::vector<HostSpan> host_;
  struct ProfiledRow {
    std::string name, category, site;
    int device;
    uint64_t stream;
    double t0, t1;    // steady seconds
    double host = 0;  // the middle of the queueing call (0: not joined)
    json::Value::Object args;
  };
  std::vector<ProfiledRow> profiled_;
  std::vector<size_t> open_;  // ops between begin_op and end_op (SIZE_MAX: not recorded)
};

}  // namespace culua::detail::measure
