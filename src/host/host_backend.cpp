#include "host/host_backend.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/backend/blas_call.hpp"
#include "core/backend/elementwise_call.hpp"
#include "core/backend/elementwise_group.hpp"
#include "core/backend/fft_call.hpp"
#include "core/backend/gather_call.hpp"
#include "core/backend/random_call.hpp"
#include "core/backend/reduce_call.hpp"
#include "core/backend/scan_call.hpp"
#include "core/backend/sort_call.hpp"
#include "core/base/error.hpp"
#include "core/base/host_memory.hpp"
#include "core/base/interrupt.hpp"
#include "core/base/scratch.hpp"
#include "host/host_blas.hpp"
#include "host/host_fft.hpp"
#include "kernels/host_pool.hpp"
#include "kernels/host_scratch.hpp"
#include "kernels/kernels.hpp"
#include "rtc/rtc_kernel.hpp"

namespace culua::detail::host {

namespace {

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  return pages > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE))
                   : 0;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "CPU";
}

// Starts a stream's worker with every signal blocked: asynchronous signals (Ctrl-C) go to the
// application's own threads, whose handlers act on them at once.
std::thread start_worker(std::shared_ptr<WorkQueue> q) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  struct RestoreMask {
    sigset_t mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{previous};
  return std::thread(run_worker, std::move(q));
}

}  // namespace

std::shared_ptr<Backend> make_backend(const HostOptions& options) {
  return std::make_shared<HostBackend>(options);
}

int host_devices_from_environment() {
  const char* env = std::getenv("CULUA_HOST_DEVICES");
  if (!env || !*env) return 1;
  constexpr int kMax = 64;
  int n = 0;
  const std::string_view s = env;
  bool ok = s.size() <= 2;
  for (const char c : s) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) n = n * 10 + (c - '0');
  }
  if (!ok || n < 1 || n > kMax) {
    fail(ErrorKind::Value,
         "CULUA_HOST_DEVICES: cannot use '{}' as the number of simulated host devices (an integer "
         "from 1 to {})",
         s, kMax);
  }
  return n;
}

HostBackend::HostBackend(const HostOptions& options)
    : options_(options), physical_memory_(physical_memory()) {
  kernels::host::pool_threads();  // checks $CULUA_HOST_THREADS now, naming it, rather than in a
                                  // task
  if (options_.devices < 1) options_.devices = 1;
  devices_.reserve(static_cast<size_t>(options_.devices));
  for (int i = 0; i < options_.devices; ++i) devices_.push_back(std::make_unique<DeviceState>());
}

HostBackend::~HostBackend() {
  for (auto& d : devices_) {
    d->default_stream.reset();
    d->release_stream.reset();
  }
  std::lock_guard lock(mutex_);
  for (auto& w : workers_) {
    {
      std::lock_guard qlock(w.queue->m);
      w.queue->closing = true;
    }
    w.queue->work_ready.notify_one();
  }
  for (auto& w : workers_) w.thread.join();
}

void HostBackend::check_usable() const {
  if (health_->poisoned.load()) fail(ErrorKind::Fatal, "{}", poison_message());
}

HostBackend::DeviceState& HostBackend::state(int device) {
  if (device < 0 || device >= options_.devices) {
    fail(ErrorKind::Index, "host device {} does not exist ({} device{})", device, options_.devices,
         options_.devices == 1 ? "" : "s");
  }
  return *devices_[static_cast<size_t>(device)];
}

std::string HostBackend::poison_message() const {
  std::lock_guard lock(health_->m);
  return health_->message;
}

DeviceInfo HostBackend::device_info(int device) {
  state(device);
  DeviceInfo d;
  d.index = device;
  // The threads operations run on: the host pool's (CULUA_HOST_THREADS, else the hardware's).
  const int threads = kernels::host::pool_threads();
  d.name =
      fmt::format("host backend: {} ({} thread{})", cpu_name(), threads, threads == 1 ? "" : "s");
  d.sm_count = threads;
  d.memory = options_.memory_limit ? options_.memory_limit : physical_memory_;
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  d.l2 = l2 > 0 ? static_cast<uint64_t>(l2) : 0;
  return d;
}

std::shared_ptr<HostStream> HostBackend::new_stream(int device, StreamPriority p) {
  auto q = std::make_shared<WorkQueue>();
  q->health = health_;
  // The handle first: should anything below throw, its destructor closes the queue, and a worker
  // that was started drains it and exits (joined later, like any dropped stream's).
  auto stream = std::make_shared<HostStream>(q, device, p, next_stream_id_++);
  std::lock_guard lock(mutex_);
  // Join the workers of streams that were dropped and have drained.
  for (size_t i = 0; i < workers_.size();) {
    bool finished;
    {
      std::lock_guard qlock(workers_[i].queue->m);
      finished = workers_[i].queue->finished;
    }
    if (finished) {
      workers_[i].thread.join();
      workers_[i] = std::move(workers_.back());
      workers_.pop_back();
    } else {
      ++i;
    }
  }
  // Room first, so that the started thread always lands in workers_ (a std::thread destroyed
  // while joinable would terminate the process).
  workers_.reserve(workers_.size() + 1);
  workers_.push_back(Worker{start_worker(q), q, device});
  return stream;
}

int HostBackend::abandon_queued_work() noexcept {
  int busy = 0;
  {
    std::lock_guard lock(mutex_);
    for (auto& w : workers_) {
      std::lock_guard qlock(w.queue->m);
      if (w.queue->completed < w.queue->enqueued) ++busy;
    }
  }
  health_->abandon();  // after counting: the workers drain at once
  return busy;
}

std::shared_ptr<Stream> HostBackend::default_stream(int device) {
  check_usable();
  DeviceState& d = state(device);
  if (!d.default_stream) d.default_stream = new_stream(device, StreamPriority::Normal);
  return d.default_stream;
}

std::shared_ptr<Stream> HostBackend::release_stream(int device) {
  DeviceState& d = state(device);
  if (!d.release_stream) d.release_stream = new_stream(device, StreamPriority::Normal);
  return d.release_stream;
}

std::shared_ptr<Stream> HostBackend::create_stream(int device, StreamPriority p) {
  check_usable();
  state(device);
  return new_stream(device, p);
}

std::shared_ptr<Event> HostBackend::create_event(int device, bool timing) {
  state(device);
  return std::make_shared<HostEvent>(device, timing);
}

void HostBackend::synchronize_device(int device) {
  state(device);
  std::vector<std::shared_ptr<WorkQueue>> queues;
  {
    std::lock_guard lock(mutex_);
    for (auto& w : workers_) {
      if (w.device == device) queues.push_back(w.queue);
    }
  }
  std::vector<uint64_t> targets;
  targets.reserve(queues.size());
  for (auto& q : queues) {
    std::lock_guard lock(q->m);
    targets.push_back(q->enqueued);
  }
  const auto reached = [&](size_t i) {
    return queues[i]->completed >= targets[i] || queues[i]->finished;
  };
  size_t idle = 0;  // queues[0, idle) have reached their targets (they stay there)
  interruptible_wait(
      [&](std::chrono::microseconds timeout) {
        for (; idle < queues.size(); ++idle) {
          std::unique_lock lock(queues[idle]->m);
          if (!queues[idle]->work_done.wait_for(lock, timeout, [&] { return reached(idle); })) {
            return false;
          }
        }
        return true;
      },
      true,
      [&] {
        for (size_t i = 0; i < queues.size(); ++i) {
          std::unique_lock lock(queues[i]->m);
          queues[i]->work_done.wait(lock, [&] { return reached(i); });
        }
      });
  check_usable();
}

HostStream& HostBackend::host_stream(Stream& s) {
  return dynamic_cast<HostStream&>(s);
}

void* HostBackend::allocate(size_t bytes, Location loc, int device, Stream*) {
  check_usable();
  if (loc == Location::Device) {
    const uint64_t limit = options_.memory_limit ? options_.memory_limit : physical_memory_;
    if (state(device).live_bytes.load() + bytes > limit) {
      fail(ErrorKind::OutOfMemory, "host backend memory limit reached");
    }
  }
  void* p = allocate_host_memory(bytes);
  if (!p) fail(ErrorKind::OutOfMemory, "host allocation failed");
  if (loc == Location::Device) state(device).live_bytes += bytes;
  return p;
}

void HostBackend::deallocate(void* p, size_t bytes, Location loc, int device,
                             Stream* stream) noexcept {
  const size_t index =
      device >= 0 && device < options_.devices ? static_cast<size_t>(device) : size_t{0};
  auto release = [p, bytes, loc, live = &devices_[index]->live_bytes] {
    free_host_memory(p, bytes);
    if (loc == Location::Device) *live -= bytes;
  };
  if (!stream) {
    release();
    return;
  }
  try {
    host_stream(*stream).enqueue(release, true);
  } catch (const std::exception&) {
    // Could not queue the free (out of host memory): leak rather than free memory in use.
  }
}

MemoryInfo HostBackend::memory_info(Location loc, int device) {
  if (loc == Location::Device) {
    const uint64_t limit = options_.memory_limit ? options_.memory_limit : physical_memory_;
    const uint64_t live = state(device).live_bytes.load();
    return MemoryInfo{live < limit ? limit - live : 0, limit};
  }
  return MemoryInfo{available_memory(), physical_memory_};
}

void HostBackend::memcpy(void* dst, const void* src, size_t bytes, Stream& s, CopyRoute) {
  check_usable();
  host_stream(s).enqueue([dst, src, bytes] { kernels::host::copy_bytes(dst, src, bytes); });
}

void HostBackend::memcpy_peer(void* dst, int dst_device, const void* src, int src_device,
                              size_t bytes, Stream& s) {
  check_usable();
  state(dst_device);
  state(src_device);
  host_stream(s).enqueue([dst, src, bytes] { kernels::host::copy_bytes(dst, src, bytes); });
}

PeerLink HostBackend::peer_link(int from, int to) {
  state(from);
  state(to);
  return PeerLink{false, "host"};
}

void HostBackend::fill(const StridedView& dst, const void* value, Stream& s) {
  check_usable();
  std::array<unsigned char, 16> v{};
  std::memcpy(v.data(), value, itemsize(dst.dtype));
  host_stream(s).enqueue([dst, v] { kernels::host::fill(dst, v.data()); });
}

void HostBackend::copy_cast(const StridedView& dst, const StridedView& src, Stream& s) {
  check_usable();
  host_stream(s).enqueue([dst, src] { kernels::host::copy_cast(dst, src); });
}

void HostBackend::sequence(const StridedView& dst, const SequenceSpec& spec, Stream& s) {
  check_usable();
  host_stream(s).enqueue([dst, spec] { kernels::host::sequence(dst, spec); });
}

void HostBackend::sleep(double seconds, Stream& s) {
  check_usable();
  host_stream(s).enqueue([seconds, health = health_] { health->sleep(seconds); });
}

void HostBackend::elementwise(const ElementwiseCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue([c] { kernels::host::elementwise(c); });
}

void HostBackend::elementwise_group(const ElementwiseCall* calls, size_t count, Stream& s) {
  check_usable();
  host_stream(s).enqueue([group = std::vector<ElementwiseCall>(calls, calls + count)] {
    // Tiles of 2^14 elements: a tile's operands stay in a core's cache from one call to the next.
    const GroupTiles tiles(group.data(), group.size(), int64_t{1} << 14);
    kernels::host::parallel_for(tiles.tiles(), 1, [&](int64_t lo, int64_t hi) {
      std::vector<ElementwiseCall> tile;
      for (int64_t t = lo; t < hi; ++t) {
        tiles.tile(t, tile);
        // Inside a range of parallel_for: each call runs on this thread.
        for (const ElementwiseCall& c : tile) kernels::host::elementwise(c);
      }
    });
  });
}

void HostBackend::reduce(const ReduceCall& c, Stream& s) {
  check_usable();
  // Each task holds the reservation of its temporaries until it has run (core/base/scratch.hpp).
  host_stream(s).enqueue([c, scratch = reserve_scratch(kernels::host::reduce_scratch_bytes(c),
                                                       c.name())] { kernels::host::reduce(c); });
}

void HostBackend::gather(const GatherCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue([c] { kernels::host::gather(c); });
}

void HostBackend::sort(const SortCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue([c, scratch = reserve_scratch(kernels::host::sort_scratch_bytes(c),
                                                       c.name())] { kernels::host::sort(c); });
}

void HostBackend::scan(const ScanCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue([c, scratch = reserve_scratch(kernels::host::scan_scratch_bytes(c),
                                                       c.name())] { kernels::host::scan(c); });
}

void HostBackend::random(const RandomCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue([c] { kernels::host::random(c); });
}

void HostBackend::matmul(const MatmulCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue(
      [c, scratch = reserve_scratch(blas_scratch_bytes(c), "matmul")] { blas_matmul(c); });
}

void HostBackend::dot(const DotCall& c, Stream& s) {
  check_usable();
  host_stream(s).enqueue(
      [c, scratch = reserve_scratch(blas_scratch_bytes(c), "dot")] { blas_dot(c); });
}

void HostBackend::fft(const FftCall& c, Stream& s) {
  check_usable();
  check_host_fft();  // a build without kissfft raises here, not in the stream's task
  host_stream(s).enqueue(
      [c, scratch = reserve_scratch(host_fft_scratch_bytes(c), c.name())] { host_fft(c); });
}

namespace {

using TaskList = std::vector<std::function<void()>>;

// A graph of the host backend: the captured tasks and their operations' names (the topology an
// update must keep).
class HostRecording final : public GraphRecording {
 public:
  HostRecording(TaskList recorded, std::vector<std::string> op_names)
      : tasks(std::make_shared<const TaskList>(std::move(recorded))), names(std::move(op_names)) {}
  size_t nodes() const override { return tasks->size(); }
  std::shared_ptr<const TaskList> tasks;
  std::vector<std::string> names;
};

class HostExec final : public GraphExec {
 public:
  explicit HostExec(const HostRecording& r) : tasks(r.tasks), names(r.names) {}
  size_t nodes() const override { return tasks->size(); }
  std::shared_ptr<const TaskList> tasks;  // a queued launch holds them until it has run
  std::vector<std::string> names;
};

}  // namespace

void HostBackend::begin_capture(Stream& s) {
  check_usable();
  host_stream(s);
  s.capture()->backend_state = std::make_unique<HostCapture>();
}

std::unique_ptr<GraphRecording> HostBackend::end_capture(Stream& s) {
  Capture& c = *s.capture();
  auto& state = static_cast<HostCapture&>(*c.backend_state);
  return std::make_unique<HostRecording>(std::move(state.tasks), c.op_names());
}

void HostBackend::abort_capture(Stream&) noexcept {}

std::unique_ptr<GraphExec> HostBackend::instantiate(GraphRecording& rec) {
  check_usable();
  return std::make_unique<HostExec>(dynamic_cast<HostRecording&>(rec));
}

bool HostBackend::update_graph(GraphExec& exec, GraphRecording& rec) {
  check_usable();
  auto& e = dynamic_cast<HostExec&>(exec);
  auto& r = dynamic_cast<HostRecording&>(rec);
  if (e.names != r.names) return false;
  e.tasks = r.tasks;
  return true;
}

void HostBackend::launch_graph(GraphExec& exec, Stream& s, const char*) {
  check_usable();
  host_stream(s).enqueue([tasks = dynamic_cast<HostExec&>(exec).tasks, health = health_] {
    for (const auto& t : *tasks) {
      if (health->abandoned.load()) return;
      t();
    }
  });
}

RtcBinary HostBackend::compile(const RtcRequest&, int) {
  rtc::require_run_time_kernels(*this);
  return {};
}

std::shared_ptr<RtcModule> HostBackend::load_module(const RtcBinary&, int) {
  rtc::require_run_time_kernels(*this);
  return nullptr;
}

}  // namespace culua::detail::host
