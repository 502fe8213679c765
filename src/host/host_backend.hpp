// The host backend: the same semantics as the CUDA backend, run on the CPU.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/backend/backend.hpp"
#include "host/host_stream.hpp"

namespace culua::detail::host {

struct HostOptions {
  uint64_t memory_limit = 0;  // cap on each device's memory in bytes; 0: physical memory
  // Simulated devices (CULUA_HOST_DEVICES), each with its own streams and memory accounting, so
  // that the several-device paths run without GPUs. Copies between them are plain memcpy.
  int devices = 1;
};

std::shared_ptr<Backend> make_backend(const HostOptions& options);

// $CULUA_HOST_DEVICES (1 when unset); a bad value throws naming the variable.
int host_devices_from_environment();

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const HostOptions& options);
  ~HostBackend() override;

  BackendKind kind() const override { return BackendKind::Host; }
  int device_count() override { return options_.devices; }
  DeviceInfo device_info(int device) override;
  std::shared_ptr<Stream> default_stream(int device) override;
  std::shared_ptr<Stream> release_stream(int device) override;
  std::shared_ptr<Stream> create_stream(int device, StreamPriority p) override;
  std::shared_ptr<Event> create_event(int device, bool timing) override;
  void synchronize_device(int device) override;
  int abandon_queued_work() noexcept override;
  void cut_short_queued_work() noexcept override { health_->cut_short(); }

  void* allocate(size_t bytes, Location loc, int device, Stream* stream) override;
  void deallocate(void* p, size_t bytes, Location loc, int device,
                  Stream* stream) noexcept override;
  MemoryInfo memory_info(Location loc, int device) override;
  void trim(int) noexcept override {}

  void memcpy(void* dst, const void* src, size_t bytes, Stream& s, CopyRoute route) override;
  void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                   Stream& s) override;
  PeerLink peer_link(int from, int to) override;
  void fill(const StridedView& dst, const void* value, Stream& s) override;
  void copy_cast(const StridedView& dst, const StridedView& src, Stream& s) override;
  void sequence(const StridedView& dst, const SequenceSpec& spec, Stream& s) override;
  void sleep(double seconds, Stream& s) override;
  void elementwise(const ElementwiseCall& c, Stream& s) override;
  // One task: the group's tiles split across the host pool, each tile through every call.
  void elementwise_group(const ElementwiseCall* calls, size_t count, Stream& s) override;
  void reduce(const ReduceCall& c, Stream& s) override;
  void gather(const GatherCall& c, Stream& s) override;
  void sort(const SortCall& c, Stream& s) override;
  void scan(const ScanCall& c, Stream& s) override;
  void random(const RandomCall& c, Stream& s) override;
  void matmul(const MatmulCall& c, Stream& s) override;
  void fft(const FftCall& c, Stream& s) override;
  void dot(const DotCall& c, Stream& s) override;

  void begin_capture(Stream& s) override;
  std::unique_ptr<GraphRecording> end_capture(Stream& s) override;
  void abort_capture(Stream& s) noexcept override;
  std::unique_ptr<GraphExec> instantiate(GraphRecording& rec) override;
  bool update_graph(GraphExec& exec, GraphRecording& rec) override;
  void launch_graph(GraphExec& exec, Stream& s, const char* name) override;

  RtcBinary compile(const RtcRequest& request, int device) override;
  std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device) override;

  bool poisoned() const override { return health_->poisoned.load(); }
  std::string poison_message() const override;

  uint64_t live_device_bytes(int device = 0) const {
    return devices_[static_cast<size_t>(device)]->live_bytes.load();
  }

 private:
  // One simulated device: its memory accounting and its internal streams.
  struct DeviceState {
    std::atomic<uint64_t> live_bytes{0};
    std::shared_ptr<Stream> default_stream;
    std::shared_ptr<Stream> release_stream;
  };
  void check_usable() const;
  DeviceState& state(int device);
  HostStream& host_stream(Stream& s);
  std::shared_ptr<HostStream> new_stream(int device, StreamPriority p);

  HostOptions options_;
  uint64_t physical_memory_;
  std::atomic<uint64_t> next_stream_id_{0};
  std::shared_ptr<Health> health_ = std::make_shared<Health>();
  std::mutex mutex_;  // guards the members below
  struct Worker {
    std::thread thread;
    std::shared_ptr<WorkQueue> queue;
    int device = 0;
  };
  std::vector<Worker> workers_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
};

}  // namespace culua::detail::host
