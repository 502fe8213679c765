// The interface both backends implement. The core's array operations are written against it;
// it knows nothing of Lua.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/backend/rtc_types.hpp"
#include "core/model/layout.hpp"
#include "core/model/stream.hpp"

namespace culua::detail {

// Descriptions of the built-in math kernels (core/backend/elementwise_call.hpp,
// core/backend/reduce_call.hpp, core/backend/random_call.hpp, core/backend/blas_call.hpp).
struct ElementwiseCall;
struct ReduceCall;
struct ScanCall;
struct RandomCall;
struct MatmulCall;
struct DotCall;
struct FftCall;
struct GatherCall;
struct SortCall;  // core/backend/sort_call.hpp

enum class BackendKind : uint8_t { Auto, Cuda, Host };
std::string_view backend_name(BackendKind k);

enum class Location : uint8_t { Device, Pinned, Pageable };
std::string_view location_name(Location l);
inline bool is_host(Location l) {
  return l != Location::Device;
}

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  uint64_t memory = 0;  // bytes
  int cc_major = 0;     // 0 on the host backend
  int cc_minor = 0;
  uint64_t l2 = 0;  // bytes
  // Launch limits (run-time kernels check configurations against them).
  int max_threads_per_block = 1024;
  int max_block[3] = {1024, 1024, 64};
  int max_grid[3] = {2147483647, 65535, 65535};
  size_t shared_per_block = 48 << 10;        // without opting in
  size_t shared_per_block_optin = 48 << 10;  // the most one block may ask for
  int max_threads_per_sm = 2048;
  int warp_size = 32;
  std::string pci_bus_id;  // "0000:1b:00.0" (NVML finds the device by it); empty on the host
};

// The versions of the driver and runtime a backend runs on, for result files (CUDA's encoding:
// 13000 for 13.0; 0 where there is none).
struct BackendVersions {
  int driver = 0;
  int runtime = 0;
};

// Where the two sides of a copy live (the ledger and the trace classify copies by it).
struct CopyRoute {
  Location dst = Location::Device;
  Location src = Location::Device;
};

struct MemoryInfo {
  uint64_t free = 0;
  uint64_t total = 0;
};

// arange/linspace: element i is start + i*step, computed in double (or in int64 when `integral`),
// then converted to the element type; linspace pins the last element to `stop`.
struct SequenceSpec {
  bool integral = false;
  double start = 0;
  double step = 1;
  int64_t istart = 0;
  int64_t istep = 1;
  bool pin_last = false;
  double stop = 0;
};

// How device `from` reaches device `to` (cu.devices()' peers): `access` is true when kernels and
// copies on `from` can read and write `to`'s memory directly (CUDA peer access, enabled by the
// backend on first use); `link` is "nvlink", "pcie", or "host" (the host backend's simulated
// devices: plain memory copies).
struct PeerLink {
  bool access = false;
  std::string link = "host";
};

struct PointerInfo {
  Location location = Location::Device;
  int device = 0;
};

// A captured graph, as the backend recorded it (a cudaGraph_t; the host backend's task list).
class GraphRecording {
 public:
  virtual ~GraphRecording() = default;
  virtual size_t nodes() const = 0;
};

// An instantiated graph, ready to launch (a cudaGraphExec_t). Destroying it while launches are
// queued is safe: they complete.
class GraphExec {
 public:
  virtual ~GraphExec() = default;
  virtual size_t nodes() const = 0;
};

// Math on host arrays (pinned or pageable memory), run on the calling thread after the arrays'
// queued work is done: the same element functors as the backends' kernels (src/kernels). Core
// reaches it through the runtime (Runtime::host_math), which reports each call to the monitor.
class HostExecutor {
 public:
  virtual ~HostExecutor() = default;
  virtual void fill(const StridedView& dst, const void* value) = 0;
  virtual void copy_cast(const StridedView& dst, const StridedView& src) = 0;
  virtual void sequence(const StridedView& dst, const SequenceSpec& spec) = 0;
  virtual void elementwise(const ElementwiseCall& c) = 0;
  virtual void reduce(const ReduceCall& c) = 0;
  virtual void scan(const ScanCall& c) = 0;
  virtual void random(const RandomCall& c) = 0;
  virtual void gather(const GatherCall& c) = 0;
  virtual void sort(const SortCall& c) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;

  virtual int device_count() = 0;
  virtual DeviceInfo device_info(int device) = 0;
  virtual BackendVersions versions() { return {}; }
  virtual std::shared_ptr<Stream> default_stream(int device) = 0;
  // Internal stream on which buffers used by several streams are freed.
  virtual std::shared_ptr<Stream> release_stream(int device) = 0;
  virtual std::shared_ptr<Stream> create_stream(int device, StreamPriority p) = 0;
  virtual std::shared_ptr<Event> create_event(int device, bool timing) = 0;
  virtual void synchronize_device(int device) = 0;
  // Leaving early (an error exit, os.exit): from now on queued work is not waited for. A backend
  // drops what it can (the host backend: everything not yet started, and a running sleep) and
  // skips waits in its teardown. Returns how many streams still have work queued or running.
  virtual int abandon_queued_work() noexcept { return 0; }
  // An entry into Lua ended by a sandbox limit or an interrupt: the work queued so far is cut
  // short where the backend can (the host backend: tasks not yet started are dropped, a running
  // one stops at its next check; their outputs are left as far as they got), and the backend
  // stays usable for work queued later. CUDA work cannot be recalled: it runs on.
  virtual void cut_short_queued_work() noexcept {}
  // Embedding: a stream of the application (a cudaStream_t) that culua queues work on but never
  // destroys. Backends without native streams throw Error(Unsupported).
  virtual std::shared_ptr<Stream> wrap_stream(void* native, int device);
  // Where memory of the application lives (for wrapping it without a copy). The host backend's
  // device memory is host memory: everything is Device there.
  virtual PointerInfo locate(const void* p);

  // Memory. `allocate` throws Error(OutOfMemory) and does not retry (the Runtime does). Device
  // memory is allocated stream-ordered on `stream`. `deallocate` frees after the work queued on
  // `stream` (at once when null) and never throws.
  virtual void* allocate(size_t bytes, Location loc, int device, Stream* stream) = 0;
  virtual void deallocate(void* p, size_t bytes, Location loc, int device,
                          Stream* stream) noexcept = 0;
  virtual MemoryInfo memory_info(Location loc, int device) = 0;
  virtual void trim(int device) noexcept = 0;  // gives cached memory back

  // Work queued on a stream. Pointers may be device or host memory (host memory must stay alive
  // until the work is done). A memcpy from or to pageable memory may complete before it returns
  // (the CUDA backend stages large ones through pinned memory); callers wait for the stream before
  // such copies and after them.
  virtual void memcpy(void* dst, const void* src, size_t bytes, Stream& s, CopyRoute route) = 0;
  // Several devices: `bytes` from device memory of `src_device` to device memory of `dst_device`,
  // queued on `s` (a stream of `dst_device`; the caller orders it after the source's work). Peer
  // access is used where peer_link says so, else the copy is staged through host memory.
  virtual void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                           Stream& s) = 0;
  virtual PeerLink peer_link(int from, int to) = 0;
  virtual void fill(const StridedView& dst, const void* value, Stream& s) = 0;
  virtual void copy_cast(const StridedView& dst, const StridedView& src, Stream& s) = 0;
  virtual void sequence(const StridedView& dst, const SequenceSpec& spec, Stream& s) = 0;
  virtual void sleep(double seconds, Stream& s) = 0;  // keeps the stream busy

  // Built-in math. Each call describes its operands completely (views with dtypes); the memory
  // must stay alive until the work is done (the caller records the stream on every buffer).
  virtual void elementwise(const ElementwiseCall& c, Stream& s) = 0;
  // A group of elementwise calls over one iteration space that may run tile by tile
  // (core/backend/elementwise_group.hpp; cu.fuse decides when). The default queues them one by one.
  virtual void elementwise_group(const ElementwiseCall* calls, size_t count, Stream& s);
  virtual void reduce(const ReduceCall& c, Stream& s) = 0;
  virtual void scan(const ScanCall& c, Stream& s) = 0;  // cumulative sums/products
  virtual void random(const RandomCall& c, Stream& s) = 0;
  virtual void matmul(const MatmulCall& c, Stream& s) = 0;
  virtual void dot(const DotCall& c, Stream& s) = 0;
  // A batch of 1-D FFTs (core/backend/fft_call.hpp). The default throws Error(Unsupported).
  virtual void fft(const FftCall& c, Stream& s);
  // Gathers, scatters and index checks (core/backend/gather_call.hpp; take, integer and mask
  // indexing).
  virtual void gather(const GatherCall& c, Stream& s) = 0;
  // Sorting, searching and sets (sort, argsort, nonzero, unique, searchsorted): CUB on CUDA.
  virtual void sort(const SortCall& c, Stream& s) = 0;

  // Run-time compiled kernels (core/backend/rtc_types.hpp). `compile` builds for `device`'s
  // architecture (a compile error throws Error(Value) with the compiler's log); `load_module` loads
  // a binary on `device`, once per binary and device (later calls return the same module). The host
  // backend throws Error(Unsupported) from both.
  virtual RtcBinary compile(const RtcRequest& request, int device) = 0;
  // Starts loading the run-time compiler in the background (once), so that the first compile or
  // disk-cache hit does not wait for the library to load (cu.fuse calls it when it makes a
  // function). Errors are left for the first compile to report.
  virtual void warm_compiler() noexcept {}
  virtual std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int device) = 0;

  // Graphs (cu.graph, core/runtime/graph.hpp). begin_capture starts recording what is queued on `s`
  // (which already carries its core/runtime/capture.hpp Capture); end_capture stops and returns the
  // recording, or throws Error(Capture) saying why the capture failed; abort_capture stops
  // without a result and leaves every stream usable. update_graph changes `exec` in place to
  // `rec`'s parameters when the topology is the same, else returns false. Backends without
  // graphs throw Error(Unsupported).
  virtual void begin_capture(Stream& s);
  virtual std::unique_ptr<GraphRecording> end_capture(Stream& s);
  virtual void abort_capture(Stream& s) noexcept;
  virtual std::unique_ptr<GraphExec> instantiate(GraphRecording& rec);
  virtual bool update_graph(GraphExec& exec, GraphRecording& rec);
  // One launch of `exec` on `s`; `name` is for the trace ("graph 'step' (12 nodes)").
  virtual void launch_graph(GraphExec& exec, Stream& s, const char* name);

  // A sticky error poisons the backend: every later call fails fast with this message.
  virtual bool poisoned() const = 0;
  virtual std::string poison_message() const = 0;
};

}  // namespace culua::detail
