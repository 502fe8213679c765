// CUPTI's activity records as the profiler's device rows (measure/profile.hpp).
//
// The join: while culua queues an operation, the calling thread's current operation number is
// set; CUPTI's callback on every runtime and driver API call made meanwhile (culua's own launch,
// or the dozen calls of a cuBLAS product) notes the call's correlation id against that number.
// Each kernel, copy and fill record carries the correlation id of the call that queued it (for a
// graph's nodes: the graph launch), so every record finds its operation and the operation its
// script line. Records come in buffers that CUPTI hands back on its own thread: they are parsed
// there, off the launch path; the launch path pays one thread-local store and the callbacks.
#include <memory>

#include "measure/profile.hpp"

#if defined(CULUA_HAVE_CUPTI)

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "core/base/error.hpp"
#include "fmt/format.h"
#include "measure/cupti_library.hpp"

namespace culua::detail::measure {

namespace {

struct Api {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks;
  decltype(&cuptiActivityEnable) enable;
  decltype(&cuptiActivityDisable) disable;
  decltype(&cuptiActivityFlushAll) flush_all;
  decltype(&cuptiActivityGetNextRecord) next_record;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped;
  decltype(&cuptiGetTimestamp) timestamp;
  decltype(&cuptiSubscribe) subscribe;
  decltype(&cuptiUnsubscribe) unsubscribe;
  decltype(&cuptiEnableDomain) enable_domain;
  decltype(&cuptiGetVersion) version;
  decltype(&cuptiActivityEnableHWTrace) hw_trace;  // null in CUPTIs before 12.8
};

constexpr const char* kPurpose = "cu.profile and --profile are unavailable: they need";

const Api& api() {
  static const Api a = [] {
    const SharedLibrary& lib = cupti_library(kPurpose);
    Api x{};
    lib.resolve("cuptiActivityRegisterCallbacks", x.register_callbacks);
    lib.resolve("cuptiActivityEnable", x.enable);
    lib.resolve("cuptiActivityDisable", x.disable);
    lib.resolve("cuptiActivityFlushAll", x.flush_all);
    lib.resolve("cuptiActivityGetNextRecord", x.next_record);
    lib.resolve("cuptiActivityGetNumDroppedRecords", x.dropped);
    lib.resolve("cuptiGetTimestamp", x.timestamp);
    lib.resolve("cuptiSubscribe", x.subscribe);
    lib.resolve("cuptiUnsubscribe", x.unsubscribe);
    lib.resolve("cuptiEnableDomain", x.enable_domain);
    lib.resolve("cuptiGetVersion", x.version);
    x.hw_trace = reinterpret_cast<decltype(x.hw_trace)>(lib.find("cuptiActivityEnableHWTrace"));
    return x;
  }();
  return a;
}

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    fail(ErrorKind::Unsupported,
         "profiling is unavailable: another tool holds CUPTI's callbacks in this process (Nsight "
         "Systems or Nsight Compute, or a profiler of the embedding application); {}: {}",
         what, cupti_result_text(r));
  }
  fail(ErrorKind::Unsupported, "profiling is unavailable: {}: {}", what, cupti_result_text(r));
}

// A record as it came, before the join (the correlation map may still be filling).
struct RawRecord {
  ActivityRecord r;
  uint32_t correlation = 0;
  const char* mangled = nullptr;  // a kernel's name, owned by CUPTI for the process's life
};

// The one tracer of the process (CUPTI's callbacks are process-wide).
struct Tracer {
  std::mutex m;
  bool active = false;
  std::vector<RawRecord> done;                              // parsed records not yet collected
  std::vector<std::pair<uint32_t, uint32_t>> correlations;  // (CUPTI correlation, operation)
  uint64_t dropped = 0;
  double offset = 0;  // steady seconds = CUPTI ns * 1e-9 + offset
};

Tracer& tracer() {
  static Tracer t;
  return t;
}

thread_local uint32_t t_current_op = 0;

constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

const char* copy_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "copy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "copy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "copy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "copy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "copy PtoP";
    default:
      return "copy";
  }
}

// On CUPTI's thread: parses a full buffer into the tracer's list and frees it.
void CUPTIAPI buffer_completed(CUcontext, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  std::vector<RawRecord> parsed;
  CUpti_Activity* rec = nullptr;
  const Api& a = api();
  while (valid > 0 && a.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
    RawRecord raw;
    ActivityRecord& r = raw.r;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        r.kind = ActivityKind::Kernel;
        r.device = static_cast<int>(k->deviceId);
        r.stream = k->streamId;
        r.t0 = static_cast<double>(k->start);
        r.t1 = static_cast<double>(k->end);
        r.grid[0] = static_cast<uint32_t>(k->gridX);
        r.grid[1] = static_cast<uint32_t>(k->gridY);
        r.grid[2] = static_cast<uint32_t>(k->gridZ);
        r.block[0] = static_cast<uint32_t>(k->blockX);
        r.block[1] = static_cast<uint32_t>(k->blockY);
        r.block[2] = static_cast<uint32_t>(k->blockZ);
        r.registers = k->registersPerThread;
        r.static_shared = k->staticSharedMemory;
        r.dynamic_shared = k->dynamicSharedMemory;
        r.graph = k->graphId;
        raw.correlation = k->correlationId;
        raw.mangled = k->name;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        r.kind = ActivityKind::Copy;
        r.name = copy_name(c->copyKind);
        r.device = static_cast<int>(c->deviceId);
        r.stream = c->streamId;
        r.t0 = static_cast<double>(c->start);
        r.t1 = static_cast<double>(c->end);
        r.bytes = c->bytes;
        r.graph = c->graphId;
        raw.correlation = c->correlationId;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* f = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
        r.kind = ActivityKind::Memset;
        r.name = "memset";
        r.device = static_cast<int>(f->deviceId);
        r.stream = f->streamId;
        r.t0 = static_cast<double>(f->start);
        r.t1 = static_cast<double>(f->end);
        r.bytes = f->bytes;
        r.graph = f->graphId;
        raw.correlation = f->correlationId;
        break;
      }
      default:
        continue;
    }
    parsed.push_back(std::move(raw));
  }
  size_t lost = 0;
  a.dropped(nullptr, stream, &lost);
  std::free(buffer);
  Tracer& t = tracer();
  std::lock_guard lock(t.m);
  t.dropped += lost;
  for (RawRecord& p : parsed) t.done.push_back(std::move(p));
}

// On the thread calling the API: the call's correlation id against the operation being queued.
void CUPTIAPI api_called(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  const uint32_t op = t_current_op;
  if (op == 0) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite != CUPTI_API_ENTER) return;
  Tracer& t = tracer();
  std::lock_guard lock(t.m);
  t.correlations.emplace_back(cb->correlationId, op);
}

std::string demangle(const char* mangled) {
  if (!mangled) return "kernel";
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || !d) return mangled;
  std::string s(d);
  std::free(d);
  return s;
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};

class CuptiActivity final : public DeviceActivity {
 public:
  explicit CuptiActivity(Runtime& rt) : rt_(rt) {
    const Api& a = api();
    Tracer& t = tracer();
    {
      std::lock_guard lock(t.m);
      if (t.active) {
        fail(ErrorKind::Unsupported,
             "a profile is already recording in this process (one CUPTI session at a time)");
      }
    }
    uint32_t v = 0;
    if (a.version(&v) == CUPTI_SUCCESS) version_ = v;
    static bool registered = false;
    if (!registered) {
      check(a.register_callbacks(buffer_requested, buffer_completed),
            "cuptiActivityRegisterCallbacks");
      registered = true;
    }
    check(a.subscribe(&subscriber_, api_called, nullptr), "cuptiSubscribe");
    try {
      check(a.enable_domain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API), "cuptiEnableDomain");
      check(a.enable_domain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API), "cuptiEnableDomain");
      // Kernel timestamps from the hardware's event system where there is one (Blackwell): no
      // instrumentation between kernels. Elsewhere CUPTI says it is not supported: ignored.
      if (a.hw_trace) hw_trace_ = a.hw_trace(1) == CUPTI_SUCCESS;
      for (CUpti_ActivityKind k : kKinds) check(a.enable(k), "cuptiActivityEnable");
    } catch (const Error&) {
      release();
      throw;
    }
    // CUPTI's clock against the steady clock, read together (a few hundred ns apart).
    uint64_t ns = 0;
    const double before = steady_seconds();
    a.timestamp(&ns);
    const double after = steady_seconds();
    std::lock_guard lock(t.m);
    t.active = true;
    t.done.clear();
    t.correlations.clear();
    t.dropped = 0;
    t.offset = 0.5 * (before + after) - static_cast<double>(ns) * 1e-9;
  }

  ~CuptiActivity() override { stop(); }

  void begin_op(uint32_t op, const OpInfo&, Stream& s) override {
    const auto d = static_cast<size_t>(s.device());
    if (d >= used_.size()) used_.resize(d + 1, false);
    used_[d] = true;
    stack_.push_back(t_current_op);
    t_current_op = op;
  }
  void end_op(uint32_t, Stream&) override {
    t_current_op = stack_.empty() ? 0 : stack_.back();
    if (!stack_.empty()) stack_.pop_back();
  }

  void collect(std::vector<ActivityRecord>& out) override {
    if (stopped_) return;
    // Records are complete once the device has run the work: wait for every device, then have
    // CUPTI hand back every buffer (forced: partly filled ones too).
    Backend& b = rt_.backend();
    for (size_t d = 0; d < used_.size(); ++d) {
      if (used_[d]) b.synchronize_device(static_cast<int>(d));
    }
    api().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    take(out);
  }

  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    release();
    std::lock_guard lock(tracer().m);
    tracer().active = false;
  }

  std::string source() const override {
    return fmt::format("CUPTI activity records (API {}{}), {}", version_,
                       hw_trace_ ? ", hardware kernel timestamps" : "",
                       cupti_library(kPurpose).path());
  }
  uint64_t dropped() const override { return dropped_; }

 private:
  void take(std::vector<ActivityRecord>& out) {
    Tracer& t = tracer();
    std::vector<RawRecord> done;
    std::vector<std::pair<uint32_t, uint32_t>> corr;
    double offset = 0;
    {
      std::lock_guard lock(t.m);
      done.swap(t.done);
      corr.swap(t.correlations);
      dropped_ += t.dropped;
      t.dropped = 0;
      offset = t.offset;
    }
    for (const auto& [c, op] : corr) op_of_.emplace(c, op);
    for (RawRecord& raw : done) {
      ActivityRecord& r = raw.r;
      if (raw.mangled) {
        auto [it, fresh] = names_.try_emplace(raw.mangled);
        if (fresh) it->second = demangle(raw.mangled);
        r.name = it->second;
      }
      r.t0 = r.t0 * 1e-9 + offset;
      r.t1 = r.t1 * 1e-9 + offset;
      if (auto it = op_of_.find(raw.correlation); it != op_of_.end()) r.op = it->second;
      out.push_back(std::move(r));
    }
  }

  void release() {
    const Api& a = api();
    for (CUpti_ActivityKind k : kKinds) a.disable(k);
    if (hw_trace_) a.hw_trace(0);
    hw_trace_ = false;
    if (subscriber_) {
      a.enable_domain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
      a.enable_domain(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
      a.unsubscribe(subscriber_);
      subscriber_ = nullptr;
    }
  }

  Runtime& rt_;
  bool stopped_ = false;
  bool hw_trace_ = false;
  uint32_t version_ = 0;
  uint64_t dropped_ = 0;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::vector<uint32_t> stack_;
  std::vector<bool> used_;  // devices operations were queued on
  std::unordered_map<uint32_t, uint32_t> op_of_;
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace

std::unique_ptr<DeviceActivity> make_cupti_activity(Runtime& rt) {
  return std::make_unique<CuptiActivity>(rt);
}

}  // namespace culua::detail::measure

#else

#include "core/base/error.hpp"

namespace culua::detail::measure {

std::unique_ptr<DeviceActivity> make_cupti_activity(Runtime&) {
  fail(ErrorKind::Unsupported,
       "profiling the CUDA device is unavailable: culua was built without the CUDA toolkit "
       "(CUPTI)");
}

}  // namespace culua::detail::measure

#endif
