#include "cuda/cuda_backend.hpp"

#include "core/runtime/observed_backend.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/backend/blas_call.hpp"
#include "core/backend/elementwise_call.hpp"
#include "core/backend/fft_call.hpp"
#include "core/backend/gather_call.hpp"
#include "core/backend/random_call.hpp"
#include "core/backend/reduce_call.hpp"
#include "core/backend/scan_call.hpp"
#include "core/backend/sort_call.hpp"
#include "core/base/error.hpp"
#include "core/base/host_memory.hpp"
#include "core/base/interrupt.hpp"
#include "core/base/shared_library.hpp"
#include "core/runtime/capture.hpp"
#include "cuda/cublas.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_stream.hpp"
#include "cuda/cufft.hpp"
#include "cuda/nvlink.hpp"
#include "cuda/nvrtc_api.hpp"
#include "cuda/pageable_copy.hpp"
#include "cuda/pinned_pool.hpp"
#include "cuda/rtc.hpp"
#include "cuda/scoped.hpp"
#include "kernels/kernels.hpp"
#include "rtc/cuda_architectures.hpp"

namespace culua::detail::cuda {

bool device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (!why) return false;
    // Only whether the driver's file is there: bound lazily, asked once per process.
    static const bool driver_installed =
        SharedLibrary::open_optional("the NVIDIA driver (libcuda.so.1)", {"libcuda.so.1"},
                                     SharedLibrary::Binding::Lazy)
            .loaded();
    if (!driver_installed) {
      *why = "no NVIDIA driver is installed (libcuda.so.1 not found)";
    } else {
      *why = fmt::format("{} ({})", cudaGetErrorName(e), cudaGetErrorString(e));
    }
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA devices";
    return false;
  }
  return true;
}

namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend() {
    int n = 0;
    CULUA_CUDA_CHECK(*health_, cudaGetDeviceCount(&n));
    devices_.resize(static_cast<size_t>(n));
  }

  // cuBLAS's handles go first, then each device's modules and streams, then its pool (the order of
  // the members).
  ~CudaBackend() override {
    if (compiler_warmup_.joinable()) compiler_warmup_.join();
  }

  BackendKind kind() const override { return BackendKind::Cuda; }
  int device_count() override { return static_cast<int>(devices_.size()); }

  // Reads the properties without creating the device's context (cu.devices() on a machine with
  // eight GPUs must not create eight contexts).
  DeviceInfo device_info(int device) override {
    health_->check_usable();
    if (device < 0 || device >= device_count()) {
      fail(ErrorKind::Index, "CUDA device {} does not exist ({} devices)", device, device_count());
    }
    DeviceState& d = devices_[static_cast<size_t>(device)];
    std::lock_guard lock(init_mutex_);
    if (d.info.sm_count == 0) {
      cudaDeviceProp prop{};
      CULUA_CUDA_CHECK(*health_, cudaGetDeviceProperties(&prop, device));
      d.info.index = device;
      d.info.name = prop.name;
      d.info.sm_count = prop.multiProcessorCount;
      d.info.memory = prop.totalGlobalMem;
      d.info.cc_major = prop.major;
      d.info.cc_minor = prop.minor;
      d.info.l2 = static_cast<uint64_t>(prop.l2CacheSize);
      d.info.max_threads_per_block = prop.maxThreadsPerBlock;
      for (int i = 0; i < 3; ++i) {
        d.info.max_block[i] = prop.maxThreadsDim[i];
        d.info.max_grid[i] = prop.maxGridSize[i];
      }
      d.info.shared_per_block = prop.sharedMemPerBlock;
      d.info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
      d.info.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
      d.info.warp_size = prop.warpSize;
      char bus_id[32] = {};
      if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) == cudaSuccess) {
        d.info.pci_bus_id = bus_id;
      } else {
        cudaGetLastError();
      }
    }
    return d.info;
  }

  BackendVersions versions() override {
    BackendVersions v;
    if (cudaDriverGetVersion(&v.driver) != cudaSuccess) {
      cudaGetLastError();
      v.driver = 0;
    }
    if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) {
      cudaGetLastError();
      v.runtime = 0;
    }
    return v;
  }

  std::shared_ptr<Stream> default_stream(int device) override {
    DeviceState& d = state(device);
    if (!d.default_stream) d.default_stream = new_stream(device, StreamPriority::Normal);
    return d.default_stream;
  }

  std::shared_ptr<Stream> release_stream(int device) override {
    DeviceState& d = state(device);
    if (!d.release_stream) d.release_stream = new_stream(device, StreamPriority::Normal);
    return d.release_stream;
  }

  std::shared_ptr<Stream> create_stream(int device, StreamPriority p) override {
    state(device);
    return new_stream(device, p);
  }

  std::shared_ptr<Event> create_event(int device, bool timing) override {
    state(device);
    return std::make_shared<CudaEvent>(device, timing, health_);
  }

  // Queued CUDA work cannot be recalled: it ends with the process (the driver tears the context
  // down at exit). The runtime does not tear this backend down after this (its teardown
  // synchronizes: cublasDestroy, cudaFreeHost).
  int abandon_queued_work() noexcept override { return streams_->busy_streams(); }

  // cudaDeviceSynchronize cannot be interrupted: with an interrupt flag in scope the streams
  // culua made are polled until idle first, so that only work queued elsewhere (streams of an
  // embedding application) can keep the final call waiting.
  void synchronize_device(int device) override {
    state(device);
    const DeviceScope scope(device, *health_);
    interruptible_wait(
        [&](std::chrono::microseconds) { return streams_->device_idle(device, *health_); }, false,
        [] {});
    CULUA_CUDA_CHECK(*health_, cudaDeviceSynchronize());
    streams_->device_idle(device, *health_);  // destroys dropped streams that are done
  }

  std::shared_ptr<Stream> wrap_stream(void* native, int device) override {
    state(device);
    const DeviceScope scope(device, *health_);
    auto* s = static_cast<cudaStream_t>(native);
    int stream_device = device;
    CULUA_CUDA_CHECK(*health_, cudaStreamGetDevice(s, &stream_device));
    if (stream_device != device) {
      fail(ErrorKind::Value, "the stream belongs to device {}, not to device {}", stream_device,
           device);
    }
    return std::make_shared<CudaStream>(s, false, device, StreamPriority::Normal, next_stream_id_++,
                                        health_, streams_);
  }

  PointerInfo locate(const void* p) override {
    health_->check_usable();
    const DeviceScope scope(any_device(), *health_);
    cudaPointerAttributes a{};
    CULUA_CUDA_CHECK(*health_, cudaPointerGetAttributes(&a, p));
    switch (a.type) {
      case cudaMemoryTypeDevice:
      case cudaMemoryTypeManaged:
        return {Location::Device, a.device};
      case cudaMemoryTypeHost:
        return {Location::Pinned, a.device < 0 ? 0 : a.device};
      default:
        return {Location::Pageable, 0};
    }
  }

  void* allocate(size_t bytes, Location loc, int device, Stream* stream) override {
    health_->check_usable();
    // The arrays of a graph being captured are allocated outside the capture
    // (core/runtime/runtime.cpp).
    RelaxedCaptureMode relaxed;
    switch (loc) {
      case Location::Device: {
        // The hot path of every allocation: no device switch is needed to allocate from a pool.
        DeviceState& d = ready_state(device);
        cudaStream_t s = stream ? cu(*stream) : cu(*default_stream(device));
        const DeviceScope scope(device, *health_);  // before any call: the caller's context stays
        if (CudaStream* small = small_blocks_of(stream, bytes, device)) {
          if (void* kept = small->take_small(bytes)) return kept;
        }
        // Every small block has its class's size, whichever stream frees it (and keeps it).
        if (bytes > 0 && bytes <= CudaStream::kSmallMax) bytes = CudaStream::small_size(bytes);
        void* p = nullptr;
        CULUA_CUDA_CHECK(*health_, cudaMallocFromPoolAsync(&p, bytes, d.pool.get(), s));
        return p;
      }
      case Location::Pinned: {
        state(device);
        const DeviceScope scope(device, *health_);  // pinned memory needs the context
        return pinned_.allocate(bytes, device);
      }
      case Location::Pageable: {
        void* p = allocate_host_memory(bytes);
        if (!p) fail(ErrorKind::OutOfMemory, "host allocation failed");
        return p;
      }
    }
    return nullptr;
  }

  void deallocate(void* p, size_t bytes, Location loc, int device,
                  Stream* stream) noexcept override {
    switch (loc) {
      case Location::Device: {
        if (health_->poisoned.load()) return;  // the context is gone; nothing can be freed
        cudaStream_t s = stream ? cu(*stream) : nullptr;
        if (!s) {
          try {
            s = cu(*default_stream(device));
          } catch (const std::exception&) {
            return;
          }
        }
        const DeviceScope scope(device, std::nothrow);  // before any call (small_blocks_of's too)
        if (!scope.ok()) return;
        if (CudaStream* small = small_blocks_of(stream, bytes, device)) {
          if (small->keep_small(p, bytes)) return;
        }
        if (cudaFreeAsync(p, s) != cudaSuccess) cudaGetLastError();
        return;
      }
      case Location::Pinned: {
        const int on = stream ? stream->device() : device;
        const DeviceScope scope(on, std::nothrow);
        if (scope.ok()) pinned_.release(p, stream ? cu(*stream) : nullptr);
        return;
      }
      case Location::Pageable:
        free_host_memory(p, bytes);  // pageable copies are synchronous: no queued work uses it
        return;
    }
  }

  MemoryInfo memory_info(Location loc, int device) override {
    if (loc == Location::Device) {
      state(device);
      const DeviceScope scope(device, *health_);
      size_t free = 0, total = 0;
      CULUA_CUDA_CHECK(*health_, cudaMemGetInfo(&free, &total));
      return MemoryInfo{free, total};
    }
    return MemoryInfo{host_memory_bytes(true), host_memory_bytes(false)};
  }

  void trim(int device) noexcept override {
    pinned_.trim();
    if (device >= 0 && device < device_count() && devices_[static_cast<size_t>(device)].pool) {
      const DeviceScope scope(device, std::nothrow);
      if (scope.ok()) cudaMemPoolTrimTo(devices_[static_cast<size_t>(device)].pool.get(), 0);
    }
  }

  // Copies from or to pageable memory are synchronous (the caller waits for the stream before
  // them); large ones are staged through pinned slots by several threads (cuda/pageable_copy.hpp).
  static constexpr size_t kStagedCopyMin = size_t{512} << 10;

  void memcpy(void* dst, const void* src, size_t bytes, Stream& s, CopyRoute r) override {
    health_->check_usable();
    health_->note_op("memcpy");
    const bool h2d = r.dst == Location::Device && r.src == Location::Pageable;
    const bool d2h = r.dst == Location::Pageable && r.src == Location::Device;
    const DeviceScope scope(s.device(), *health_);
    if ((h2d || d2h) && bytes >= kStagedCopyMin) {
      pageable_.copy(dst, src, bytes, h2d, s.device(), cu(s));
      return;
    }
    CULUA_CUDA_CHECK(*health_, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cu(s)));
  }

  // cudaMemcpyPeerAsync copies directly over NVLink or PCIe where peer access is enabled (done
  // once per pair, with the pools opened to each other), and is staged through host memory by the
  // driver otherwise.
  void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                   Stream& s) override {
    health_->check_usable();
    health_->note_op("memcpy_peer");
    state(dst_device);
    state(src_device);
    enable_peer_access(dst_device, src_device);
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, cu(s)));
  }

  PeerLink peer_link(int from, int to) override {
    health_->check_usable();
    if (from < 0 || from >= device_count() || to < 0 || to >= device_count()) {
      fail(ErrorKind::Index, "CUDA device {} or {} does not exist ({} devices)", from, to,
           device_count());
    }
    PeerLink l;
    if (from == to) {
      l.access = true;
      l.link = "self";
      return l;
    }
    int can = 0;
    CULUA_CUDA_CHECK(*health_, cudaDeviceCanAccessPeer(&can, from, to));
    l.access = can != 0;
    std::optional<bool> nvlink = nvlink_between(from, to);
    if (!nvlink && l.access) {
      // No NVML: native atomics between peers come with NVLink, not with PCIe.
      int atomics = 0;
      if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, from, to) !=
          cudaSuccess) {
        cudaGetLastError();
      }
      nvlink = atomics != 0;
    }
    l.link = nvlink.value_or(false) ? "nvlink" : "pcie";
    return l;
  }

  void fill(const StridedView& dst, const void* value, Stream& s) override {
    health_->check_usable();
    health_->note_op("fill");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_,
                     static_cast<cudaError_t>(kernels::cuda::fill(dst, value, launch(s))));
  }

  void copy_cast(const StridedView& dst, const StridedView& src, Stream& s) override {
    health_->check_usable();
    health_->note_op("copy");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_,
                     static_cast<cudaError_t>(kernels::cuda::copy_cast(dst, src, launch(s))));
  }

  void sequence(const StridedView& dst, const SequenceSpec& spec, Stream& s) override {
    health_->check_usable();
    health_->note_op("sequence");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_,
                     static_cast<cudaError_t>(kernels::cuda::sequence(dst, spec, launch(s))));
  }

  void sleep(double seconds, Stream& s) override {
    health_->check_usable();
    health_->note_op("sleep");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::sleep(seconds, launch(s))));
  }

  void elementwise(const ElementwiseCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::elementwise(c, launch(s))));
  }

  void reduce(const ReduceCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    kernels::cuda::Launch l = launch(s);
    // The stream's scratch spares each reduction an allocation and a memset of its block
    // counters; a captured graph's kernels may run beside the stream's later work: none there.
    // (A capture begun outside culua, through the embedding API's stream, counts too.)
    if (auto* cs = dynamic_cast<CudaStream*>(&s); cs && !s.capture()) {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(cs->get(), &status) == cudaSuccess &&
          status == cudaStreamCaptureStatusNone) {
        l.scratch = cs->scratch(static_cast<cudaMemPool_t>(l.pool));
      } else {
        cudaGetLastError();
      }
    }
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::reduce(c, l)));
  }

  void gather(const GatherCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::gather(c, launch(s))));
  }

  void sort(const SortCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::sort(c, launch(s))));
  }

  void scan(const ScanCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::scan(c, launch(s))));
  }

  void random(const RandomCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::random(c, launch(s))));
  }

  // Under capture cuBLAS gets a workspace that lives as long as the graph (one per capturing
  // stream), so that it allocates nothing inside the capture; its handle is created (and the
  // library loaded) in relaxed capture mode.
  static constexpr size_t kCaptureWorkspace = size_t{32} << 20;  // cuBLAS's advice for Hopper

  void matmul(const MatmulCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op("matmul");
    const DeviceScope scope(s.device(), *health_);
    void* workspace = s.capture() ? s.capture()->scratch(s, kCaptureWorkspace) : nullptr;
    RelaxedCaptureMode relaxed;
    blas().matmul(c, s, workspace, workspace ? kCaptureWorkspace : 0);
  }

  // cuFFT's plans may be created under capture (relaxed mode: they allocate and copy their
  // twiddle factors); the transform's work area is the stream's own, kept by cuda/cufft (the
  // capture's scratch under capture).
  void fft(const FftCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op(c.name());
    const DeviceScope scope(s.device(), *health_);
    RelaxedCaptureMode relaxed;
    ffts().execute(c, s, devices_[static_cast<size_t>(s.device())].pool.get());
  }

  void dot(const DotCall& c, Stream& s) override {
    health_->check_usable();
    health_->note_op("dot");
    const DeviceScope scope(s.device(), *health_);
    void* workspace = s.capture() ? s.capture()->scratch(s, kCaptureWorkspace) : nullptr;
    RelaxedCaptureMode relaxed;
    blas().dot(c, s, workspace, workspace ? kCaptureWorkspace : 0);
  }

  void fault(Stream& s) {
    health_->check_usable();
    health_->note_op("fault (test kernel)");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, static_cast<cudaError_t>(kernels::cuda::fault(launch(s))));
  }

  // NVRTC is a large library (loading it took 2.5 to 10 ms, most of a fused kernel's disk-cache
  // hit): load it on a thread of its own while the script goes on.
  void warm_compiler() noexcept override {
    std::lock_guard lock(init_mutex_);
    if (compiler_warmup_.joinable()) return;
    try {
      compiler_warmup_ = std::thread([] {
        try {
          (void)cuda::nvrtc_api();
        } catch (const std::exception&) {
          // No NVRTC: the first compile says so.
        }
      });
    } catch (const std::exception&) {
      // No thread: the first compile loads it.
    }
  }

  // A cache hit is loaded here, on its device: an image the driver refuses is compiled afresh
  // instead of failing at the first launch. The module is kept for the kernels' launches.
  RtcBinary compile(const RtcRequest& request, int device) override {
    state(device);
    return cuda::compile(request, device_info(device), [&](const RtcBinary& cached) {
      const DeviceScope scope(device, *health_);
      RelaxedCaptureMode relaxed;
      std::lock_guard lock(init_mutex_);
      auto& m = devices_[static_cast<size_t>(device)].modules[cached.key];
      if (!m) m = cuda::load_cached_module(cached, device, health_);
      return m != nullptr;
    });
  }

  std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device) override {
    state(device);
    const DeviceScope scope(device, *health_);
    RelaxedCaptureMode relaxed;
    std::lock_guard lock(init_mutex_);
    auto& m = devices_[static_cast<size_t>(device)].modules[binary.key];
    if (!m) m = cuda::load_module(binary, device, health_);
    return m;
  }

  // --- Graphs: stream capture in CUDA's thread-local mode, executable graphs ---

  // The device is the capturing stream's: the graph is instantiated, updated and launched there.
  class Recording final : public GraphRecording {
   public:
    explicit Recording(UniqueGraph g) : graph(std::move(g)) {
      if (cudaGraphGetNodes(graph.get(), nullptr, &count) != cudaSuccess) cudaGetLastError();
    }
    size_t nodes() const override { return count; }
    int device() const { return graph.releaser().device; }
    UniqueGraph graph;
    size_t count = 0;
  };

  // Destroyed while launches are still queued, they complete: CUDA frees the executable graph
  // after them.
  class Exec final : public GraphExec {
   public:
    Exec(UniqueGraphExec e, size_t n) : exec(std::move(e)), count(n) {}
    size_t nodes() const override { return count; }
    int device() const { return exec.releaser().device; }
    UniqueGraphExec exec;
    size_t count;
  };

  void begin_capture(Stream& s) override {
    health_->check_usable();
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, cudaStreamBeginCapture(cu(s), cudaStreamCaptureModeThreadLocal));
  }

  std::unique_ptr<GraphRecording> end_capture(Stream& s) override {
    const DeviceScope scope(s.device(), *health_);
    cudaGraph_t raw = nullptr;
    const cudaError_t e = cudaStreamEndCapture(cu(s), &raw);
    UniqueGraph g(raw, DestroyGraph{s.device()});
    if (e != cudaSuccess) {
      cudaGetLastError();
      if (e == cudaErrorStreamCaptureUnjoined) {
        fail(ErrorKind::Capture,
             "the capture failed: a stream that joined it did not join back into the capturing "
             "stream (end the graph's function with s:wait(e) for an event recorded after the "
             "other stream's last operation)");
      }
      fail(ErrorKind::Capture, "the capture failed: CUDA error {} ({})", cudaGetErrorName(e),
           cudaGetErrorString(e));
    }
    return std::make_unique<Recording>(std::move(g));
  }

  void abort_capture(Stream& s) noexcept override {
    const DeviceScope scope(s.device(), std::nothrow);
    if (!scope.ok()) return;
    cudaGraph_t raw = nullptr;
    cudaStreamEndCapture(cu(s), &raw);
    cudaGetLastError();
    const UniqueGraph g(raw, DestroyGraph{s.device()});
  }

  std::unique_ptr<GraphExec> instantiate(GraphRecording& rec) override {
    health_->check_usable();
    auto& r = dynamic_cast<Recording&>(rec);
    const DeviceScope scope(r.device(), *health_);
    cudaGraphExec_t e = nullptr;
    CULUA_CUDA_CHECK(*health_, cudaGraphInstantiateWithFlags(&e, r.graph.get(), 0));
    return std::make_unique<Exec>(UniqueGraphExec(e, DestroyGraphExec{r.device()}), r.count);
  }

  // cudaGraphExecUpdate; a topology (or node type) change is not an error: the caller
  // instantiates anew.
  bool update_graph(GraphExec& exec, GraphRecording& rec) override {
    health_->check_usable();
    auto& x = dynamic_cast<Exec&>(exec);
    auto& r = dynamic_cast<Recording&>(rec);
    const DeviceScope scope(x.device(), *health_);
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t e = cudaGraphExecUpdate(x.exec.get(), r.graph.get(), &info);
    if (e == cudaSuccess) {
      x.count = r.count;
      return true;
    }
    cudaGetLastError();
    if (e != cudaErrorGraphExecUpdateFailure) CULUA_CUDA_CHECK(*health_, e);
    return false;
  }

  void launch_graph(GraphExec& exec, Stream& s, const char*) override {
    health_->check_usable();
    health_->note_op("graph launch");
    const DeviceScope scope(s.device(), *health_);
    CULUA_CUDA_CHECK(*health_, cudaGraphLaunch(static_cast<Exec&>(exec).exec.get(), cu(s)));
  }

  bool poisoned() const override { return health_->poisoned.load(); }
  std::string poison_message() const override { return health_->poison_message(); }

 private:
  // Members are destroyed bottom-up: modules and streams before the pool.
  struct DeviceState {
    bool ready = false;
    UniqueMemPool pool;
    std::shared_ptr<Stream> default_stream;
    std::shared_ptr<Stream> release_stream;
    int priority_least = 0;
    int priority_greatest = 0;
    DeviceInfo info;
    // Run-time compiled modules by binary key, kept until the backend goes (queued launches need
    // their code, and compiling the same source again reuses the loaded module).
    std::map<std::string, std::shared_ptr<RtcModule>> modules;
  };

  static cudaStream_t cu(Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }
  // The stream whose kept small blocks serve (or take back) a device block of `bytes` on
  // `device`: one of this backend's streams of that device, not capturing (a capture records
  // its allocations and frees as graph nodes; one begun outside culua, through the embedding
  // API's stream, counts too); else null. The caller holds a DeviceScope for `device`.
  static CudaStream* small_blocks_of(Stream* stream, size_t bytes, int device) {
    if (!stream || bytes == 0 || bytes > CudaStream::kSmallMax || stream->device() != device ||
        stream->capture()) {
      return nullptr;
    }
    auto* cs = dynamic_cast<CudaStream*>(stream);
    if (!cs) return nullptr;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(cs->get(), &status) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return status == cudaStreamCaptureStatusNone ? cs : nullptr;
  }

  // A GPU that none of the built-in kernels' images can run (no machine code for its architecture,
  // no PTX of a compute capability at or below its own) fails when it is opened, before anything
  // is queued there, rather than at some later launch with CUDA's "no kernel image is available".
  static void check_architectures(const DeviceInfo& info) {
    const auto& built = rtc::built_cuda_architectures();
    if (rtc::cuda_architectures_cover(built, info.cc_major, info.cc_minor)) return;
    fail(ErrorKind::Device,
         "CUDA device {} ({}, compute capability {}.{}) cannot run culua's built-in kernels: this "
         "build holds device code for {} only. Rebuild culua for this GPU: "
         "-DCMAKE_CUDA_ARCHITECTURES={}{} (or configure on this machine without "
         "CMAKE_CUDA_ARCHITECTURES); --backend host runs on the CPU meanwhile",
         info.index, info.name, info.cc_major, info.cc_minor,
         rtc::describe_cuda_architectures(built), info.cc_major, info.cc_minor);
  }

  static uint64_t host_memory_bytes(bool available);

  // The caller holds a DeviceScope for the stream's device.
  kernels::cuda::Launch launch(Stream& s) {
    const DeviceState& d = devices_[static_cast<size_t>(s.device())];
    return kernels::cuda::Launch{s.native_handle(), d.info.sm_count, d.pool.get()};
  }

  // A device for calls that need some context but none in particular: the first one culua has
  // initialized (device 0 when none is).
  int any_device() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].ready) return static_cast<int>(i);
    }
    return 0;
  }

  DeviceState& ready_state(int device) {
    if (device >= 0 && device < device_count() && devices_[static_cast<size_t>(device)].ready) {
      return devices_[static_cast<size_t>(device)];
    }
    return state(device);
  }

  // The device's state, initialized on first use (this creates the context). It leaves the
  // caller's current device as it was: a call that needs the device current opens a DeviceScope.
  DeviceState& state(int device) {
    health_->check_usable();
    if (device < 0 || device >= device_count()) {
      fail(ErrorKind::Index, "CUDA device {} does not exist ({} devices)", device, device_count());
    }
    DeviceState& d = devices_[static_cast<size_t>(device)];
    if (d.ready) return d;
    device_info(device);
    check_architectures(d.info);
    std::lock_guard lock(init_mutex_);
    if (d.ready) return d;
    const DeviceScope scope(device, *health_);
    CULUA_CUDA_CHECK(*health_,
                     cudaDeviceGetStreamPriorityRange(&d.priority_least, &d.priority_greatest));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    CULUA_CUDA_CHECK(*health_, cudaMemPoolCreate(&pool, &props));
    d.pool = UniqueMemPool(pool, DestroyMemPool{device});
    uint64_t threshold = std::numeric_limits<uint64_t>::max();
    CULUA_CUDA_CHECK(*health_, cudaMemPoolSetAttribute(
                                   d.pool.get(), cudaMemPoolAttrReleaseThreshold, &threshold));
    d.ready = true;
    return d;
  }

  std::shared_ptr<Stream> new_stream(int device, StreamPriority p) {
    RelaxedCaptureMode relaxed;
    const DeviceState& d = devices_[static_cast<size_t>(device)];
    const int priority = p == StreamPriority::High  ? d.priority_greatest
                         : p == StreamPriority::Low ? d.priority_least
                                                    : 0;
    const DeviceScope scope(device, *health_);
    cudaStream_t raw = nullptr;
    CULUA_CUDA_CHECK(*health_, cudaStreamCreateWithPriority(&raw, cudaStreamNonBlocking, priority));
    // Owned here until the handle exists: a throw in between (out of memory, the registry) does
    // not leak the stream.
    UniqueStream s(raw, DestroyStream{device});
    auto stream = std::make_shared<CudaStream>(s.get(), true, device, p, next_stream_id_++, health_,
                                               streams_);
    static_cast<void>(s.release());
    return stream;
  }

  // Peer access both ways between two devices, when the hardware allows it: each device may then
  // read and write the other's memory, pool allocations included (cudaDeviceEnablePeerAccess does
  // not cover memory pools: cudaMemPoolSetAccess does). Asked once per pair.
  void enable_peer_access(int a, int b) {
    if (a == b) return;
    const size_t n = devices_.size();
    std::lock_guard lock(init_mutex_);
    if (peer_checked_.size() != n * n) peer_checked_.assign(n * n, false);
    const size_t key =
        static_cast<size_t>(std::min(a, b)) * n + static_cast<size_t>(std::max(a, b));
    if (peer_checked_[key]) return;
    peer_checked_[key] = true;
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      int can = 0;
      CULUA_CUDA_CHECK(*health_, cudaDeviceCanAccessPeer(&can, from, to));
      if (!can) continue;
      const DeviceScope scope(from, *health_);
      const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else {
        CULUA_CUDA_CHECK(*health_, e);
      }
      cudaMemAccessDesc desc{};
      desc.location.type = cudaMemLocationTypeDevice;
      desc.location.id = from;
      desc.flags = cudaMemAccessFlagsProtReadWrite;
      CULUA_CUDA_CHECK(
          *health_, cudaMemPoolSetAccess(devices_[static_cast<size_t>(to)].pool.get(), &desc, 1));
    }
  }

  Cufft& ffts() {
    std::lock_guard lock(init_mutex_);
    if (!fft_) fft_ = std::make_unique<Cufft>(health_);
    return *fft_;
  }

 public:
  FftPlanStats fft_plan_stats() { return ffts().stats(); }

 private:
  Cublas& blas() {
    std::lock_guard lock(init_mutex_);
    if (!blas_) blas_ = std::make_unique<Cublas>(health_);
    return *blas_;
  }

  std::shared_ptr<Health> health_ = std::make_shared<Health>();
  std::shared_ptr<StreamRegistry> streams_ = std::make_shared<StreamRegistry>();
  std::vector<DeviceState> devices_;
  std::mutex init_mutex_;
  std::vector<bool> peer_checked_;  // by (lower, higher) device pair: enable_peer_access ran
  PinnedPool pinned_{health_};
  PageableCopier pageable_{health_};
  std::unique_ptr<Cublas> blas_;  // created on first use; destroyed first
  std::unique_ptr<Cufft> fft_;    // created on first use; destroyed before cuBLAS
  uint64_t next_stream_id_ = 0;
  std::thread compiler_warmup_;  // warm_compiler's (joined by the destructor)
};

uint64_t CudaBackend::host_memory_bytes(bool available) {
  const long page = sysconf(_SC_PAGE_SIZE);
  const long pages = sysconf(available ? _SC_AVPHYS_PAGES : _SC_PHYS_PAGES);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

}  // namespace

std::shared_ptr<Backend> make_backend() {
  return std::make_shared<CudaBackend>();
}

FftPlanStats fft_plan_stats(Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&unwrap_backend(backend));
  if (!cuda) fail(ErrorKind::Unsupported, "fft_plan_stats needs the CUDA backend");
  return cuda->fft_plan_stats();
}

void launch_fault(Backend& backend, Stream& s) {
  auto* cuda = dynamic_cast<CudaBackend*>(&unwrap_backend(backend));
  if (!cuda) fail(ErrorKind::Unsupported, "launch_fault needs the CUDA backend");
  cuda->fault(s);
}

}  // namespace culua::detail::cuda
