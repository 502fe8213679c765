// The observing wrappers of the backend, its run-time kernels and the host math: each operation
// reported to the monitor (an OpScope around every call that queues work), with its name and bytes.
#include "core/runtime/observed_backend.hpp"

#include "core/backend/elementwise_group.hpp"

#include "core/backend/blas_call.hpp"
#include "core/backend/elementwise_call.hpp"
#include "core/backend/fft_call.hpp"
#include "core/backend/gather_call.hpp"
#include "core/backend/random_call.hpp"
#include "core/backend/reduce_call.hpp"
#include "core/backend/scan_call.hpp"
#include "core/backend/sort_call.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/op_scope.hpp"
#include "core/runtime/sandbox.hpp"

namespace culua::detail {

namespace {

uint64_t view_bytes(const StridedView& v) {
  return static_cast<uint64_t>(v.size) * itemsize(v.dtype);
}

// The memory a sorting call reads and writes at least (its input and its results).
uint64_t sort_bytes(const SortCall& c) {
  const auto item = static_cast<uint64_t>(itemsize(c.dtype));
  const auto n = static_cast<uint64_t>(c.n);
  switch (c.op) {
    case SortOp::Sort:
      return static_cast<uint64_t>(c.rows) * n *
             (item + (c.out ? item : 0) + (c.out_index ? sizeof(int64_t) : 0));
    case SortOp::Nonzero:
      return n * item + static_cast<uint64_t>(c.count) * static_cast<uint64_t>(c.ndim) * 8;
    case SortOp::Unique:
      return n * (2 * item + (c.perm ? 8 : 0) + (c.out_inverse ? 8 : 0));
    case SortOp::Searchsorted:
      return n * item + static_cast<uint64_t>(c.rows) * (item + sizeof(int64_t));
  }
  return 0;
}

const char* copy_name(CopyRoute r) {
  const bool to_device = r.dst == Location::Device, from_device = r.src == Location::Device;
  if (to_device && from_device) return "copy DtoD";
  if (to_device) return r.src == Location::Pinned ? "copy HtoD (pinned)" : "copy HtoD (pageable)";
  if (from_device) return r.dst == Location::Pinned ? "copy DtoH (pinned)" : "copy DtoH (pageable)";
  return "copy HtoH";
}

// The ledger that counts an operation on `s`: a capturing stream's work counts at each launch of
// its graph, not now.
Ledger& ledger_for(Monitor& m, Stream& s) {
  if (Capture* c = s.capture()) return c->ledger;
  return m.ledger;
}

// The bytes an elementwise call reads and writes (its output and array inputs).
uint64_t elementwise_bytes(const ElementwiseCall& c) {
  uint64_t bytes = view_bytes(c.out);
  for (int i = 0; i < elementwise_inputs(c); ++i) {
    if (!c.in[i].is_scalar()) bytes += view_bytes(c.in[i].view);
  }
  return bytes;
}

class ObservedFunction final : public RtcFunction {
 public:
  ObservedFunction(std::shared_ptr<RtcFunction> inner, std::string name, std::shared_ptr<Monitor> m)
      : inner_(std::move(inner)), name_("kernel " + std::move(name)), m_(std::move(m)) {}
  int device() const override { return inner_->device(); }
  KernelAttributes attributes() override { return inner_->attributes(); }
  bool parameter_layout(size_t count, std::vector<ParamLayout>& out) override {
    return inner_->parameter_layout(count, out);
  }
  void reserve_dynamic_shared(size_t bytes) override { inner_->reserve_dynamic_shared(bytes); }
  int max_active_blocks(int block_threads, size_t dynamic_shared) override {
    return inner_->max_active_blocks(block_threads, dynamic_shared);
  }
  void launch(const LaunchDims& dims, Stream& s, void** params, const LaunchSite& site) override {
    const OpInfo op{name_.c_str(), OpCategory::Kernel, 0, m_->fused_covers};
    OpScope scope(*m_, s, op);
    inner_->launch(dims, s, params, site);
  }

 private:
  std::shared_ptr<RtcFunction> inner_;
  std::string name_;
  std::shared_ptr<Monitor> m_;
};

class ObservedModule final : public RtcModule {
 public:
  ObservedModule(std::shared_ptr<RtcModule> inner, std::shared_ptr<Monitor> m)
      : inner_(std::move(inner)), m_(std::move(m)) {}
  int device() const override { return inner_->device(); }
  std::shared_ptr<RtcFunction> function(const std::string& symbol) override {
    return std::make_shared<ObservedFunction>(inner_->function(symbol), symbol, m_);
  }

 private:
  std::shared_ptr<RtcModule> inner_;
  std::shared_ptr<Monitor> m_;
};

class ObservedBackend final : public Backend {
 public:
  ObservedBackend(std::shared_ptr<Backend> inner, std::shared_ptr<Monitor> m,
                  ScratchReserve reserve)
      : inner_(std::move(inner)), m_(std::move(m)), reserve_(std::move(reserve)) {}
  Backend& inner() { return *inner_; }

  BackendKind kind() const override { return inner_->kind(); }
  int device_count() override { return inner_->device_count(); }
  DeviceInfo device_info(int d) override { return inner_->device_info(d); }
  BackendVersions versions() override { return inner_->versions(); }
  std::shared_ptr<Stream> default_stream(int d) override { return inner_->default_stream(d); }
  std::shared_ptr<Stream> release_stream(int d) override { return inner_->release_stream(d); }
  std::shared_ptr<Stream> create_stream(int d, StreamPriority p) override {
    return inner_->create_stream(d, p);
  }
  std::shared_ptr<Event> create_event(int d, bool timing) override {
    return inner_->create_event(d, timing);
  }
  void synchronize_device(int d) override {
    m_->flush_recorded();
    inner_->synchronize_device(d);
  }
  int abandon_queued_work() noexcept override { return inner_->abandon_queued_work(); }
  void cut_short_queued_work() noexcept override { inner_->cut_short_queued_work(); }
  std::shared_ptr<Stream> wrap_stream(void* native, int d) override {
    return inner_->wrap_stream(native, d);
  }
  PointerInfo locate(const void* p) override { return inner_->locate(p); }

  void* allocate(size_t bytes, Location loc, int d, Stream* s) override {
    void* p = inner_->allocate(bytes, loc, d, s);
    ++m_->ledger.allocs;
    m_->ledger.alloc_bytes += bytes;
    return p;
  }
  void deallocate(void* p, size_t bytes, Location loc, int d, Stream* s) noexcept override {
    if (m_->recorder) m_->recorder->flush_before_free();  // the recorded work may use `p`
    inner_->deallocate(p, bytes, loc, d, s);
  }
  MemoryInfo memory_info(Location loc, int d) override { return inner_->memory_info(loc, d); }
  void trim(int d) noexcept override { inner_->trim(d); }

  void memcpy(void* dst, const void* src, size_t bytes, Stream& s, CopyRoute r) override {
    Ledger& l = ledger_for(*m_, s);
    const bool to_device = r.dst == Location::Device, from_device = r.src == Location::Device;
    if (to_device && from_device) {
      l.d2d_bytes += bytes;
      ++l.d2d_calls;
    } else if (to_device || from_device) {
      (to_device ? l.h2d_bytes : l.d2h_bytes) += bytes;
      ++(to_device ? l.h2d_calls : l.d2h_calls);
      const Location host = to_device ? r.src : r.dst;
      (host == Location::Pinned ? l.pinned_bytes : l.pageable_bytes) += bytes;
      ++(host == Location::Pinned ? l.pinned_calls : l.pageable_calls);
    }
    const OpInfo op{copy_name(r), OpCategory::Copy, to_device || from_device ? bytes : 2 * bytes};
    OpScope scope(*m_, s, op);
    inner_->memcpy(dst, src, bytes, s, r);
  }
  void memcpy_peer(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                   Stream& s) override {
    Ledger& l = ledger_for(*m_, s);
    l.p2p_bytes += bytes;
    ++l.p2p_calls;
    const OpInfo op{"copy PtoP", OpCategory::Copy, 2 * bytes};
    OpScope scope(*m_, s, op);
    inner_->memcpy_peer(dst, dst_device, src, src_device, bytes, s);
  }
  PeerLink peer_link(int from, int to) override { return inner_->peer_link(from, to); }
  void fill(const StridedView& dst, const void* value, Stream& s) override {
    const OpInfo op{"fill", OpCategory::Kernel, view_bytes(dst)};
    OpScope scope(*m_, s, op);
    inner_->fill(dst, value, s);
  }
  void copy_cast(const StridedView& dst, const StridedView& src, Stream& s) override {
    // A strided or converting copy on the device counts as a device-to-device transfer.
    Ledger& l = ledger_for(*m_, s);
    l.d2d_bytes += view_bytes(dst);
    ++l.d2d_calls;
    const OpInfo op{"copy (strided/cast)", OpCategory::Kernel, view_bytes(dst) + view_bytes(src)};
    OpScope scope(*m_, s, op);
    inner_->copy_cast(dst, src, s);
  }
  void sequence(const StridedView& dst, const SequenceSpec& spec, Stream& s) override {
    const OpInfo op{"sequence", OpCategory::Kernel, view_bytes(dst)};
    OpScope scope(*m_, s, op);
    inner_->sequence(dst, spec, s);
  }
  void sleep(double seconds, Stream& s) override {
    const OpInfo op{"sleep", OpCategory::Other, 0};
    OpScope scope(*m_, s, op);
    inner_->sleep(seconds, s);
  }
  void elementwise(const ElementwiseCall& c, Stream& s) override {
    if (m_->recorder && m_->recorder->record(c, s)) return;  // cu.fuse: runs at the flush
    const OpInfo op{c.name(), OpCategory::Kernel, elementwise_bytes(c)};
    OpScope scope(*m_, s, op);
    inner_->elementwise(c, s);
  }
  // One operation in the ledger and the trace (the group's calls run as one pass).
  void elementwise_group(const ElementwiseCall* calls, size_t count, Stream& s) override {
    uint64_t bytes = 0;
    for (size_t k = 0; k < count; ++k) bytes += elementwise_bytes(calls[k]);
    const OpInfo op{"fused group", OpCategory::Kernel, bytes, m_->fused_covers};
    OpScope scope(*m_, s, op);
    inner_->elementwise_group(calls, count, s);
  }
  void reduce(const ReduceCall& c, Stream& s) override {
    if (m_->recorder && m_->recorder->record_reduce(c, s)) return;  // cu.fuse: a group's epilogue
    const OpInfo op{c.name(), OpCategory::Kernel, view_bytes(c.in) + view_bytes(c.out)};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->reduce(c, s);
  }
  void sort(const SortCall& c, Stream& s) override {
    const OpInfo op{c.name(), OpCategory::Kernel, sort_bytes(c)};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->sort(c, s);
  }
  void scan(const ScanCall& c, Stream& s) override {
    const OpInfo op{c.name(), OpCategory::Kernel, view_bytes(c.in) + view_bytes(c.out)};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->scan(c, s);
  }
  void random(const RandomCall& c, Stream& s) override {
    const OpInfo op{c.name(), OpCategory::Kernel, view_bytes(c.out)};
    OpScope scope(*m_, s, op);
    inner_->random(c, s);
  }
  void gather(const GatherCall& c, Stream& s) override {
    const OpInfo op{c.name(), OpCategory::Kernel, view_bytes(c.other) + view_bytes(c.index)};
    OpScope scope(*m_, s, op);
    inner_->gather(c, s);
  }
  void matmul(const MatmulCall& c, Stream& s) override {
    uint64_t batch = 1;
    for (int i = 0; i < c.batch_ndim; ++i) batch *= static_cast<uint64_t>(c.batch_shape[i]);
    const auto m = static_cast<uint64_t>(c.m), n = static_cast<uint64_t>(c.n),
               k = static_cast<uint64_t>(c.k);
    const OpInfo op{"matmul", OpCategory::Library,
                    batch * (m * k + k * n + m * n) * itemsize(c.dtype)};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->matmul(c, s);
  }
  void dot(const DotCall& c, Stream& s) override {
    const OpInfo op{"dot", OpCategory::Library, 2 * static_cast<uint64_t>(c.n) * itemsize(c.dtype)};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->dot(c, s);
  }
  void fft(const FftCall& c, Stream& s) override {
    const auto rows = static_cast<uint64_t>(c.batch);
    const uint64_t bytes = rows * (static_cast<uint64_t>(c.in_row()) * itemsize(c.in_dtype()) +
                                   static_cast<uint64_t>(c.out_row()) * itemsize(c.out_dtype()));
    const OpInfo op{c.name(), OpCategory::Library, bytes};
    OpScope scope(*m_, s, op);
    const ScratchScope scratch(&reserve_);
    inner_->fft(c, s);
  }

  void begin_capture(Stream& s) override {
    m_->flush_recorded();
    inner_->begin_capture(s);
  }
  std::unique_ptr<GraphRecording> end_capture(Stream& s) override {
    m_->flush_recorded();  // what fn recorded belongs to the graph
    return inner_->end_capture(s);
  }
  void abort_capture(Stream& s) noexcept override { inner_->abort_capture(s); }
  std::unique_ptr<GraphExec> instantiate(GraphRecording& rec) override {
    return inner_->instantiate(rec);
  }
  bool update_graph(GraphExec& exec, GraphRecording& rec) override {
    return inner_->update_graph(exec, rec);
  }
  // A graph launch is one slice of the trace; its operations count in the ledger through the
  // graph (core/runtime/graph.cpp), not as one more operation.
  void launch_graph(GraphExec& exec, Stream& s, const char* name) override {
    const OpInfo op{name, OpCategory::Other, 0};
    OpScope scope(*m_, s, op, {.counted = false});
    inner_->launch_graph(exec, s, name);
  }

  void warm_compiler() noexcept override { inner_->warm_compiler(); }
  RtcBinary compile(const RtcRequest& request, int d) override {
    if (sandboxed()) {
      RtcRequest checked = request;
      check_sandboxed_compile(checked);
      return inner_->compile(checked, d);
    }
    return inner_->compile(request, d);
  }
  std::shared_ptr<RtcModule> load_module(const RtcBinary& binary, int d) override {
    return std::make_shared<ObservedModule>(inner_->load_module(binary, d), m_);
  }
  bool poisoned() const override { return inner_->poisoned(); }
  std::string poison_message() const override { return inner_->poison_message(); }

 private:
  std::shared_ptr<Backend> inner_;
  std::shared_ptr<Monitor> m_;
  const ScratchReserve reserve_;
};

class ObservedHostExecutor final : public HostExecutor {
 public:
  ObservedHostExecutor(std::shared_ptr<HostExecutor> inner, Monitor& m, ScratchReserve reserve)
      : inner_(std::move(inner)), m_(m), reserve_(std::move(reserve)) {}

  void fill(const StridedView& dst, const void* value) override {
    run({"fill (host)", OpCategory::Kernel, view_bytes(dst)}, [&] { inner_->fill(dst, value); });
  }
  void copy_cast(const StridedView& dst, const StridedView& src) override {
    run({"copy HtoH", OpCategory::Copy, view_bytes(dst) + view_bytes(src)},
        [&] { inner_->copy_cast(dst, src); });
  }
  void sequence(const StridedView& dst, const SequenceSpec& spec) override {
    run({"sequence (host)", OpCategory::Kernel, view_bytes(dst)},
        [&] { inner_->sequence(dst, spec); });
  }
  void elementwise(const ElementwiseCall& c) override {
    run({c.name(), OpCategory::Kernel, elementwise_bytes(c)}, [&] { inner_->elementwise(c); });
  }
  void reduce(const ReduceCall& c) override {
    run({c.name(), OpCategory::Kernel, view_bytes(c.in) + view_bytes(c.out)}, [&] {
      const ScratchScope scratch(&reserve_);
      inner_->reduce(c);
    });
  }
  void sort(const SortCall& c) override {
    run({c.name(), OpCategory::Kernel, sort_bytes(c)}, [&] {
      const ScratchScope scratch(&reserve_);
      inner_->sort(c);
    });
  }
  void scan(const ScanCall& c) override {
    run({c.name(), OpCategory::Kernel, view_bytes(c.in) + view_bytes(c.out)}, [&] {
      const ScratchScope scratch(&reserve_);
      inner_->scan(c);
    });
  }
  void random(const RandomCall& c) override {
    run({c.name(), OpCategory::Kernel, view_bytes(c.out)}, [&] { inner_->random(c); });
  }
  void gather(const GatherCall& c) override {
    run({c.name(), OpCategory::Kernel, view_bytes(c.other) + view_bytes(c.index)},
        [&] { inner_->gather(c); });
  }

 private:
  template <class F>
  void run(const OpInfo& op, const F& f) {
    if (!m_.observer) return f();
    const double t0 = steady_seconds();
    f();
    if (m_.observer) m_.observer->host_op(op, t0, steady_seconds());
  }

  std::shared_ptr<HostExecutor> inner_;
  Monitor& m_;
  const ScratchReserve reserve_;
};

}  // namespace

std::unique_ptr<HostExecutor> make_observed_host_executor(std::shared_ptr<HostExecutor> inner,
                                                          Monitor& monitor,
                                                          ScratchReserve reserve) {
  return std::make_unique<ObservedHostExecutor>(std::move(inner), monitor, std::move(reserve));
}

std::shared_ptr<Backend> make_observed_backend(std::shared_ptr<Backend> inner,
                                               std::shared_ptr<Monitor> monitor,
                                               ScratchReserve reserve) {
  return std::make_shared<ObservedBackend>(std::move(inner), std::move(monitor),
                                           std::move(reserve));
}

Backend& unwrap_backend(Backend& b) {
  if (auto* o = dynamic_cast<ObservedBackend*>(&b)) return o->inner();
  return b;
}

}  // namespace culua::detail
