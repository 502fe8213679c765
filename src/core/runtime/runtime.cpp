#include "core/runtime/runtime.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/backend/elementwise_call.hpp"
#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/observed_backend.hpp"
#include "core/runtime/sandbox.hpp"

namespace culua::detail {

std::string_view backend_name(BackendKind k) {
  switch (k) {
    case BackendKind::Cuda:
      return "cuda";
    case BackendKind::Host:
      return "host";
    default:
      return "auto";
  }
}

std::string_view location_name(Location l) {
  switch (l) {
    case Location::Pinned:
      return "pinned";
    case Location::Pageable:
      return "pageable";
    default:
      return "device";
  }
}

std::shared_ptr<Stream> Backend::wrap_stream(void*, int) {
  fail(ErrorKind::Unsupported, "the {} backend has no CUDA streams to share", backend_name(kind()));
}

PointerInfo Backend::locate(const void*) {
  return {};
}

namespace {
[[noreturn]] void no_graphs(const Backend& b) {
  fail(ErrorKind::Unsupported, "the {} backend cannot capture graphs", backend_name(b.kind()));
}
}  // namespace

void Backend::elementwise_group(const ElementwiseCall* calls, size_t count, Stream& s) {
  for (size_t i = 0; i < count; ++i) elementwise(calls[i], s);
}

void Backend::fft(const FftCall&, Stream&) {
  fail(ErrorKind::Unsupported, "this backend has no FFTs");
}

void Backend::begin_capture(Stream&) {
  no_graphs(*this);
}
std::unique_ptr<GraphRecording> Backend::end_capture(Stream&) {
  no_graphs(*this);
}
void Backend::abort_capture(Stream&) noexcept {}
std::unique_ptr<GraphExec> Backend::instantiate(GraphRecording&) {
  no_graphs(*this);
}
bool Backend::update_graph(GraphExec&, GraphRecording&) {
  no_graphs(*this);
}
void Backend::launch_graph(GraphExec&, Stream&, const char*) {
  no_graphs(*this);
}

BackendKind parse_backend(std::string_view s) {
  if (s == "auto") return BackendKind::Auto;
  if (s == "cuda") return BackendKind::Cuda;
  if (s == "host") return BackendKind::Host;
  fail(ErrorKind::Value, "unknown backend '{}' (expected auto, cuda or host)", s);
}

uint64_t parse_byte_size(std::string_view s) {
  constexpr uint64_t kMax = uint64_t{1} << 62;  // 4 EiB: far above any memory, below int64 range
  uint64_t value = 0;
  bool too_large = false;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    value = value * 10 + static_cast<uint64_t>(s[i] - '0');
    if (value > kMax) {
      too_large = true;
      value = kMax;
    }
  }
  const std::string_view suffix = s.substr(i);
  int shift = -1;
  if (suffix.empty() || suffix == "B") shift = 0;
  if (suffix == "K" || suffix == "KiB") shift = 10;
  if (suffix == "M" || suffix == "MiB") shift = 20;
  if (suffix == "G" || suffix == "GiB") shift = 30;
  if (i == 0 || shift < 0)
    fail(ErrorKind::Value, "cannot read '{}' as a byte size (like 512M or 2G)", s);
  if (too_large || value > (kMax >> shift))
    fail(ErrorKind::Value, "byte size '{}' is too large (at most 4 EiB)", s);
  return value << shift;
}

uint64_t host_memory_limit_from_environment() {
  const char* env = std::getenv("CULUA_HOST_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  try {
    return parse_byte_size(env);
  } catch (const Error& e) {
    fail(ErrorKind::Value, "CULUA_HOST_MEMORY_LIMIT: {}", e.what());
  }
}

Runtime::Runtime(RuntimeOptions options) : options_(options), device_(options.device) {}

Runtime::Runtime(RuntimeOptions options, std::shared_ptr<Backend> backend)
    : options_(options),
      backend_(make_observed_backend(
          std::move(backend), monitor_,
          [this](size_t bytes, const char* what) { return reserve_scratch(bytes, what); })),
      device_(options.device) {
  current_streams_.assign(static_cast<size_t>(backend_->device_count()), nullptr);
}

Runtime::~Runtime() {
  InterruptScope uninterruptible(nullptr);  // the queued work must finish before teardown
  current_streams_.clear();
  if (backend_ && !backend_->poisoned() && !abandoned_) {
    try {
      for (int d = 0; d < backend_->device_count(); ++d) backend_->synchronize_device(d);
    } catch (const std::exception&) {
      // Tearing down after a device error: nothing left to wait for.
    }
  }
  if (abandoned_ && backend_ && backend_->kind() == BackendKind::Cuda) {
    // The process is leaving with work still on the GPU, and the CUDA backend's teardown would
    // wait for it (cublasDestroy and cudaFreeHost synchronize the device). It is left to the
    // driver, which reclaims the context at exit: a deliberate leak, never freed.
    [[maybe_unused]] auto* left = new std::shared_ptr<Backend>(std::move(backend_));
  }
}

int Runtime::abandon_queued_work() noexcept {
  abandoned_ = true;
  return backend_ ? backend_->abandon_queued_work() : 0;
}

void Runtime::create_backend() {
  if (!options_.make_backend) {
    fail(ErrorKind::Unsupported,
         "this runtime has no backend factory (RuntimeOptions::make_backend; the front ends pass "
         "backends::engines())");
  }
  backend_ = options_.make_backend(options_);
  backend_ = make_observed_backend(
      std::move(backend_), monitor_,
      [this](size_t bytes, const char* what) { return reserve_scratch(bytes, what); });
  const int count = backend_->device_count();
  current_streams_.assign(static_cast<size_t>(count), nullptr);
  if (options_.device < 0 || options_.device >= count) {
    const int requested = options_.device;
    backend_.reset();
    fail(ErrorKind::Value, "device {} does not exist ({} device{})", requested, count,
         count == 1 ? "" : "s");
  }
  device_ = options_.device;
}

HostExecutor& Runtime::host_math() {
  if (!host_math_) {
    if (!options_.host_executor) {
      fail(ErrorKind::Unsupported,
           "this runtime has no host executor for host-array math (RuntimeOptions::host_executor)");
    }
    host_math_ = make_observed_host_executor(
        options_.host_executor, *monitor_,
        [this](size_t bytes, const char* what) { return reserve_scratch(bytes, what); });
  }
  return *host_math_;
}

void Runtime::set_device(int device) {
  const int count = backend().device_count();
  if (device < 0 || device >= count) {
    fail(ErrorKind::Index, "device {} does not exist ({} device{}, numbered from 0)", device, count,
         count == 1 ? "" : "s");
  }
  device_ = device;
}

Stream& Runtime::stream_for_device(int device) {
  Backend& b = backend();
  auto& s = current_streams_[static_cast<size_t>(device)];
  if (!s) s = b.default_stream(device);
  return *s;
}

std::shared_ptr<Stream> Runtime::current_stream_ptr() {
  stream_for_device(device());
  return current_streams_[static_cast<size_t>(device_)];
}

void Runtime::set_current_stream(std::shared_ptr<Stream> s) {
  backend();
  const int d = s->device();
  set_device(d);
  current_streams_[static_cast<size_t>(d)] = std::move(s);
}

std::shared_ptr<Buffer> Runtime::allocate(size_t bytes, Location loc, int device, Stream* stream) {
  Backend& b = backend();
  const Capture* capture = Capture::active();
  std::shared_ptr<Stream> owner;
  if (capture && stream && stream->capture()) {
    // An array created by work inside a graph: its memory is allocated now, outside the capture
    // (on an internal stream), and kept by the graph, so that it keeps its address and contents
    // from one launch to the next and is usable before the first (a private pool, as PyTorch's
    // graphs have). Launches order themselves after this allocation.
    owner = b.release_stream(device);
  } else if (stream) {
    owner = stream->shared_from_this();
  }
  stream = owner.get();
  if (bytes == 0) return std::make_shared<Buffer>(backend_, nullptr, 0, loc, device, owner, true);
  if (quota_) check_quota(bytes);
  if (loc == Location::Device && !capture) collect_if_indebted(bytes);
  void* p = nullptr;
  bool out_of_memory = false;
  try {
    p = b.allocate(bytes, loc, device, stream);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) throw;
    out_of_memory = true;
  }
  if (out_of_memory && capture) {
    // No waiting for the device during a capture: no collection and retry either.
    const MemoryInfo mi = b.memory_info(loc, device);
    fail(ErrorKind::OutOfMemory, "out of memory while capturing {}: requested {}, {} free of {}",
         capture->label(), format_bytes(static_cast<double>(bytes)),
         format_bytes(static_cast<double>(mi.free)), format_bytes(static_cast<double>(mi.total)));
  }
  if (out_of_memory) {
    // Unreachable arrays may hold the memory: collect them, let their stream-ordered frees
    // complete, give cached blocks back, and try once more.
    if (collect_garbage) collect_garbage();
    gc_debt_ = 0;
    b.synchronize_device(device);
    b.trim(device);
    try {
      p = b.allocate(bytes, loc, device, stream);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::OutOfMemory) throw;
      const MemoryInfo mi = b.memory_info(loc, device);
      const std::string where =
          loc == Location::Device
              ? fmt::format("{} memory of device {}",
                            b.kind() == BackendKind::Cuda ? "device" : "host-backend", device)
              : fmt::format("{} host memory", location_name(loc));
      fail(ErrorKind::OutOfMemory, "out of {}: requested {}, {} free of {}", where,
           format_bytes(static_cast<double>(bytes)), format_bytes(static_cast<double>(mi.free)),
           format_bytes(static_cast<double>(mi.total)));
    }
  }
  auto buffer = std::make_shared<Buffer>(backend_, p, bytes, loc, device, std::move(owner), true);
  if (capture) buffer->set_made_in_capture();
  if (quota_) buffer->charge(quota_);
  return buffer;
}

void Runtime::set_memory_quota(uint64_t bytes) {
  if (bytes == 0) {
    quota_.reset();
    return;
  }
  quota_ = std::make_shared<MemoryQuota>(bytes);
}

// Unreachable arrays may hold the quota: they are collected once before the request is refused.
void Runtime::check_quota(size_t bytes) {
  const auto fits = [&] {
    const uint64_t used = quota_->used.load(std::memory_order_relaxed);
    return bytes <= quota_->limit && used <= quota_->limit - bytes;
  };
  if (fits()) return;
  if (collect_garbage && !Capture::active()) {
    collect_garbage();
    gc_debt_ = 0;
  }
  if (fits()) return;
  fail(ErrorKind::OutOfMemory,
       "the sandbox's memory quota is exhausted: requested {}, {} of the quota of {} in use",
       format_bytes(static_cast<double>(bytes)),
       format_bytes(static_cast<double>(quota_->used.load(std::memory_order_relaxed))),
       format_limit_bytes(quota_->limit));
}

ScratchToken Runtime::reserve_scratch(size_t bytes, const char* what) {
  if (!quota_ || bytes == 0) return nullptr;
  const auto fits = [&] {
    const uint64_t used = quota_->used.load(std::memory_order_relaxed);
    return bytes <= quota_->limit && used <= quota_->limit - bytes;
  };
  if (!fits() && !Capture::active()) {
    // Unreachable arrays, and queued work that still holds its temporaries (a loop of reductions
    // runs ahead of the host backend's workers), may hold the room: collect, wait, try once more.
    if (collect_garbage) collect_garbage();
    gc_debt_ = 0;
    if (!fits() && backend_) {
      for (int d = 0; d < backend_->device_count(); ++d) backend_->synchronize_device(d);
    }
  }
  if (!fits()) {
    fail(ErrorKind::OutOfMemory,
         "the sandbox's memory quota is exhausted: {} needs {} of host temporaries, {} of the "
         "quota of {} in use",
         what, format_bytes(static_cast<double>(bytes)),
         format_bytes(static_cast<double>(quota_->used.load(std::memory_order_relaxed))),
         format_limit_bytes(quota_->limit));
  }
  // The token gives the bytes back to this quota (the runtime may set another meanwhile).
  class Charge {
   public:
    Charge(std::shared_ptr<MemoryQuota> quota, size_t bytes)
        : quota_(std::move(quota)), bytes_(bytes) {
      quota_->used.fetch_add(bytes_, std::memory_order_relaxed);
    }
    ~Charge() { quota_->used.fetch_sub(bytes_, std::memory_order_relaxed); }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;

   private:
    std::shared_ptr<MemoryQuota> quota_;
    size_t bytes_;
  };
  return std::make_shared<const Charge>(quota_, bytes);
}

// The debt is device memory allocated since the last collection and not freed explicitly: a
// collection runs once it reaches the threshold, before the next allocation (not because of the
// current one, so that allocating and freeing one large array never collects). A young collection
// where the state has them, a full one every kYoungPerFull-th time: a full collection costs time
// in proportion to the whole heap (3 ms per 128 MiB array allocated in a loop beside 100000 small
// tables, measured on the host backend), a young one in proportion to what is new.
void Runtime::collect_if_indebted(size_t bytes) {
  if (gc_debt_ >= gc_threshold_ && collect_garbage) {
    gc_debt_ = 0;
    if (collect_young && ++young_collections_ < kYoungPerFull) {
      collect_young();
    } else {
      young_collections_ = 0;
      collect_garbage();
    }
  }
  gc_debt_ += bytes;
}

void Runtime::note_explicit_free(size_t bytes, Location loc) {
  if (loc != Location::Device) return;
  gc_debt_ = gc_debt_ > bytes ? gc_debt_ - bytes : 0;
}

void Runtime::synchronize_all_devices() {
  if (!backend_) return;
  for (int d = 0; d < backend_->device_count(); ++d) backend_->synchronize_device(d);
}

std::shared_ptr<Buffer>& Runtime::read_staging(int device, size_t bytes) {
  if (read_staging_.size() <= static_cast<size_t>(device))
    read_staging_.resize(static_cast<size_t>(device) + 1);
  std::shared_ptr<Buffer>& b = read_staging_[static_cast<size_t>(device)];
  if (!b || b->freed() || b->bytes() < bytes) {
    const size_t size = std::max<size_t>(bytes, 64);
    b = allocate(size, Location::Pinned, device, nullptr);
    // The runtime's memory, not the script's: not in the ledger's allocations.
    --monitor_->ledger.allocs;
    monitor_->ledger.alloc_bytes -= size;
  }
  return b;
}

void Runtime::synchronize() {
  Backend& b = backend();
  {
    Monitor::Wait wait(*monitor_, "cu.sync", false);
    b.synchronize_device(device());
  }
  monitor_->idle_device(device());
}

CurrentStreamScope::CurrentStreamScope(Runtime& rt, Stream& s) : rt_(rt) {
  if (&rt.current_stream() == &s) return;
  previous_ = rt.current_stream_ptr();
  rt.set_current_stream(s.shared_from_this());
}

CurrentStreamScope::~CurrentStreamScope() {
  if (previous_) rt_.set_current_stream(std::move(previous_));
}

}  // namespace culua::detail
