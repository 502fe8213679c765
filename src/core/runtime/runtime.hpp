// The runtime: picks and lazily creates the backend, tracks the current device and stream, and
// owns the allocation policy (garbage-collection pressure, out-of-memory retry).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/base/scratch.hpp"
#include "core/model/buffer.hpp"
#include "core/runtime/monitor.hpp"

namespace culua::detail {

struct RuntimeOptions;
// Makes the backend `options` ask for (Auto resolved there). Core knows no backend: the front
// ends (CLI, embedding API, stock-Lua module) pass the factory of src/backends.
using BackendFactory = std::function<std::shared_ptr<Backend>(const RuntimeOptions&)>;

struct RuntimeOptions {
  // Auto: the CULUA_BACKEND environment variable, else CUDA when a device is present, else host.
  BackendKind backend = BackendKind::Auto;
  int device = 0;
  // Host backend only: cap on its "device" memory in bytes (0: $CULUA_HOST_MEMORY_LIMIT, else
  // physical memory).
  uint64_t host_memory_limit = 0;
  // The engines (backends::engines() fills both): how the backend is made on first use, and what
  // runs math on host arrays.
  BackendFactory make_backend;
  // The program owns the threads culua runs on (the CLI): the CUDA backend may leave its device
  // current instead of giving the caller its own back after every call (src/cuda/scoped.hpp).
  bool owns_threads = false;
  std::shared_ptr<HostExecutor> host_executor;
};

// "512M", "2G", "1048576": bytes (suffixes K, M, G are powers of 1024). Sizes past 4 EiB are
// refused rather than wrapped around.
uint64_t parse_byte_size(std::string_view s);

// $CULUA_HOST_MEMORY_LIMIT in bytes (0 when unset); a bad value throws naming the variable.
uint64_t host_memory_limit_from_environment();

// Parses "auto", "cuda" or "host"; throws Error(Value) otherwise.
BackendKind parse_backend(std::string_view s);

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  // A runtime on a backend made elsewhere (tests and measurement tools wrap the real ones).
  Runtime(RuntimeOptions options, std::shared_ptr<Backend> backend);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const RuntimeOptions& options() const { return options_; }
  // The backend, created on first use (this creates the CUDA context).
  Backend& backend() {
    if (!backend_) create_backend();
    return *backend_;
  }
  const std::shared_ptr<Backend>& backend_ptr() {
    if (!backend_) create_backend();
    return backend_;
  }
  BackendKind kind() { return backend().kind(); }
  // Math on host arrays, on the calling thread (reported to the monitor: the trace shows it).
  HostExecutor& host_math();
  // The ledger, strict mode and the trace's hook (core/runtime/monitor.hpp). The backend reports to
  // it.
  Monitor& monitor() { return *monitor_; }

  int device() { return backend_ ? device_ : (backend(), device_); }
  void set_device(int device);
  // Selects a device that set_device accepted before (cu.use_device's restore); never throws.
  void restore_device(int device) noexcept {
    if (device >= 0 && static_cast<size_t>(device) < current_streams_.size()) device_ = device;
  }
  // The stream that work without an explicit stream goes to, per device.
  Stream& stream_for_device(int device);
  Stream& current_stream() { return stream_for_device(device()); }
  std::shared_ptr<Stream> current_stream_ptr();
  // Makes `s` the current stream of its device and selects that device.
  void set_current_stream(std::shared_ptr<Stream> s);

  // Allocates through the backend. Out of memory: runs collect_garbage, waits for the device,
  // trims the pools and retries once, then throws naming the requested and free bytes.
  std::shared_ptr<Buffer> allocate(size_t bytes, Location loc, int device, Stream* stream);
  // The sandbox's quota on the bytes of the arrays this runtime allocates (device memory and host
  // arrays; 0: none). An allocation past it collects garbage once, then throws
  // Error(OutOfMemory) naming the quota. Wrapped memory of the application does not count.
  void set_memory_quota(uint64_t bytes);
  const MemoryQuota* memory_quota() const { return quota_.get(); }
  // Host temporaries that work keeps while it runs (core/base/scratch.hpp), counted against the
  // quota like arrays until the token is dropped; past it, after one collection, Error(OutOfMemory)
  // naming `what`. No quota: nothing counted (null token).
  ScratchToken reserve_scratch(size_t bytes, const char* what);
  // An array's memory was freed explicitly (not by the collector): it no longer counts as debt.
  void note_explicit_free(size_t bytes, Location loc);
  // Set by the Lua layer: a full garbage collection, so unreachable arrays release their memory.
  std::function<void()> collect_garbage;
  // Set where the Lua state collects generationally (the CLI, the embedding library): a young
  // collection, which frees the arrays made since the last one that are already unreachable (the
  // temporaries of a loop) at a cost that does not grow with the rest of the heap. The debt
  // threshold runs it, and collect_garbage every kYoungPerFull-th time (old garbage).
  std::function<void()> collect_young;
  static constexpr int kYoungPerFull = 8;

  // cu.seed / cu.rand: the seed and the counter offset of the next random array (counter-based
  // generator: the same seed gives the same numbers on every backend and launch configuration).
  struct RandomState {
    uint64_t seed = 0;
    uint64_t offset = 0;
  };
  RandomState& random_state() { return random_state_; }

  // Pinned host memory of at least `bytes` for reading small results of `device` (element reads):
  // one copy queued behind the work, one wait. Replaced by a new one after an interrupted read
  // (its copy may still land).
  std::shared_ptr<Buffer>& read_staging(int device, size_t bytes);

  void synchronize();  // all work of the current device (an explicit wait)
  // All work of every device, when there is a backend (none made yet: nothing to wait for).
  void synchronize_all_devices();
  // Leaving early (an error exit, os.exit): queued work is dropped where the backend can (host),
  // and neither this runtime's teardown nor the backend's waits for it. Returns the number of
  // streams that still had work (CUDA work cannot be recalled: it ends with the process).
  int abandon_queued_work() noexcept;
  bool abandoned() const { return abandoned_; }
  // An entry ended by a sandbox limit or an interrupt: Backend::cut_short_queued_work (the host
  // backend drops or stops the work queued so far; CUDA's runs on). No backend yet: nothing.
  void cut_short_queued_work() noexcept {
    if (backend_) backend_->cut_short_queued_work();
  }
  // Sticky errors: where the first one surfaced (file:line of the script), for later messages.
  const std::string& fatal_location() const { return fatal_location_; }
  void set_fatal_location(std::string where) { fatal_location_ = std::move(where); }

 private:
  void create_backend();
  void collect_if_indebted(size_t bytes);
  void check_quota(size_t bytes);

  RuntimeOptions options_;
  std::shared_ptr<Monitor> monitor_ = std::make_shared<Monitor>();
  std::shared_ptr<Backend> backend_;                   // the real backend inside an observed one
  std::vector<std::shared_ptr<Buffer>> read_staging_;  // per device (read_staging)
  std::unique_ptr<HostExecutor> host_math_;  // options_.host_executor inside an observed one
  int device_ = 0;
  std::vector<std::shared_ptr<Stream>> current_streams_;  // per device; null: default stream
  // Device bytes allocated since the last collection that were not freed explicitly. The Lua
  // collector does not see device memory, so past a threshold we collect ourselves.
  uint64_t gc_debt_ = 0;
  uint64_t gc_threshold_ = uint64_t{256} << 20;
  int young_collections_ = 0;  // since the last full collection
  std::string fatal_location_;
  std::shared_ptr<MemoryQuota> quota_;
  RandomState random_state_;
  bool abandoned_ = false;
};

// Selects `device` for a scope (the device must exist), and the previous device again when the
// scope ends, also by an error.
class DeviceSelection {
 public:
  DeviceSelection(Runtime& rt, int device) : rt_(rt), previous_(rt.device()) {
    rt.set_device(device);
  }
  ~DeviceSelection() { rt_.restore_device(previous_); }
  DeviceSelection(const DeviceSelection&) = delete;
  DeviceSelection& operator=(const DeviceSelection&) = delete;

 private:
  Runtime& rt_;
  int previous_;
};

// Makes `s` the current stream of its device for a scope (cu.bench, cu.graph: work without
// stream= goes there); restores the previous one when the scope ends, also by an error.
class CurrentStreamScope {
 public:
  CurrentStreamScope(Runtime& rt, Stream& s);
  ~CurrentStreamScope();
  CurrentStreamScope(const CurrentStreamScope&) = delete;
  CurrentStreamScope& operator=(const CurrentStreamScope&) = delete;

 private:
  Runtime& rt_;
  std::shared_ptr<Stream> previous_;
};

}  // namespace culua::detail
