#include "core/runtime/graph.hpp"

#include <unordered_set>

#include "core/base/error.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/ops.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail {

std::string_view graph_update_name(GraphUpdate u) {
  return u == GraphUpdate::Updated ? "updated" : "reinstantiated";
}

namespace {

std::string label_of(const std::string& name, const std::string& site) {
  if (site.empty()) return fmt::format("graph '{}'", name);
  if (name == site) return fmt::format("the graph captured at {}", site);
  return fmt::format("graph '{}' (captured at {})", name, site);
}

// Stops the backend's capture unless disarmed: an error in the graph's function (a Lua error
// unwinding, in culua's C++ build of Lua) or a failed check leaves every stream usable.
class AbortCapture {
 public:
  AbortCapture(Backend& b, Stream& s) : b_(b), s_(s) {}
  ~AbortCapture() {
    if (armed_) b_.abort_capture(s_);
  }
  AbortCapture(const AbortCapture&) = delete;
  AbortCapture& operator=(const AbortCapture&) = delete;
  void disarm() { armed_ = false; }

 private:
  Backend& b_;
  Stream& s_;
  bool armed_ = true;
};

}  // namespace

Graph::Graph(Runtime& rt, Stream& s, std::string name, std::string site)
    : rt_(rt),
      backend_(rt.backend_ptr()),
      stream_(s.shared_from_this()),
      name_(std::move(name)),
      site_(std::move(site)),
      tag_(std::make_shared<GraphTag>(GraphTag{label_of(name_, site_)})),
      device_(s.device()) {}

Graph::~Graph() {
  release();
}

std::shared_ptr<Graph> Graph::capture(Runtime& rt, Stream& s, std::string name, std::string site,
                                      const std::function<void()>& fn) {
  std::shared_ptr<Graph> g(new Graph(rt, s, std::move(name), std::move(site)));
  Captured c = g->record(fn);
  g->instantiate(c);
  g->adopt(c);
  return g;
}

Graph::Captured Graph::record(const std::function<void()>& fn) {
  if (const Capture* outer = Capture::active()) {
    fail(ErrorKind::Capture, "graphs cannot be captured inside the capture of {}", outer->label());
  }
  Stream& s = *stream_;
  Backend& b = *backend_;
  if (b.poisoned()) fail(ErrorKind::Fatal, "{}", b.poison_message());
  const double t0 = steady_seconds();
  const uint64_t random_start = rt_.random_state().offset;
  Captured out;
  std::shared_ptr<Buffer> random_counter;
  {
    Capture capture(s, tag_);
    capture.allocate_scratch = [this](size_t bytes) {
      return rt_.allocate(bytes, Location::Device, device_, stream_.get());
    };
    b.begin_capture(s);
    AbortCapture guard(b, s);
    fn();
    if (const auto unjoined = capture.unjoined(); !unjoined.empty()) {
      fail(ErrorKind::Capture,
           "stream {} joined the capture of {} (it waited for an event recorded inside it) but "
           "the capturing stream never waited for its work: end the graph's function with "
           "s:wait(e) for an event e recorded on stream {} after its last operation",
           unjoined.front()->id(), tag_->label, unjoined.front()->id());
    }
    if (capture.random_blocks() > 0) {
      // The last node of the graph: the next launch draws the numbers after this one's.
      random_counter = capture.random_counter_buffer();
      const Array counter(random_counter, DType::I64, Layout::contiguous(Shape{}));
      binary(rt_, BinaryOp::Add, counter,
             Scalar::integer(static_cast<int64_t>(capture.random_blocks())), &counter, &s);
    }
    guard.disarm();
    out.recording = b.end_capture(s);
    out.buffers = capture.take_buffers();
    out.ledger = capture.ledger;
    out.op_names = capture.op_names();
  }  // the capture ends: every stream stops capturing, and frees postponed during it run
  if (random_counter) {
    // Zeroed before the first launch (on the stream that allocated it, which every launch waits
    // for), and the numbers of 2^40 blocks of launches reserved: eager draws after the capture
    // start beyond them.
    const Array counter(random_counter, DType::I64, Layout::contiguous(Shape{}));
    fill(rt_, counter, Scalar::integer(0), backend_->release_stream(device_).get());
    Runtime::RandomState& state = rt_.random_state();
    if (state.offset >= random_start) state.offset = random_start + kRandomReserve;
  }
  out.ms = (steady_seconds() - t0) * 1e3;
  return out;
}

void Graph::instantiate(Captured& c) {
  const double t0 = steady_seconds();
  std::unique_ptr<GraphExec> exec = backend_->instantiate(*c.recording);
  instantiate_ms_ = (steady_seconds() - t0) * 1e3;
  exec_ = std::move(exec);  // a previous executable graph completes its queued launches
  nodes_ = exec_->nodes();
}

void Graph::adopt(Captured& c) {
  // Buffers the new capture no longer uses stop naming this graph when freed.
  std::unordered_set<const Buffer*> kept;
  for (const auto& b : c.buffers) kept.insert(b.get());
  for (const auto& b : buffers_) {
    if (!kept.count(b.get())) b->remove_graph_user(tag_);
  }
  buffers_ = std::move(c.buffers);
  per_launch_ = c.ledger;
  op_names_ = std::move(c.op_names);
  capture_ms_ = c.ms;
  trace_name_ = fmt::format("graph {} ({} node{})", name_, nodes_, nodes_ == 1 ? "" : "s");
}

GraphUpdate Graph::update(const std::function<void()>& fn) {
  check_alive();
  Captured c = record(fn);
  GraphUpdate result;
  if (backend_->update_graph(*exec_, *c.recording)) {
    nodes_ = c.recording->nodes();
    result = GraphUpdate::Updated;
    ++updates_;
  } else {
    instantiate(c);
    result = GraphUpdate::Reinstantiated;
    ++reinstantiations_;
  }
  adopt(c);
  return result;
}

void Graph::check_alive() const {
  if (exec_) return;
  // "graph ('step', captured at x.lua:12)": the name and the capture site, as label_of has them.
  std::string place = site_.empty() || name_ != site_ ? fmt::format("'{}'", name_) : std::string();
  if (!site_.empty()) place += fmt::format("{}captured at {}", place.empty() ? "" : ", ", site_);
  fail_released(fmt::format("graph ({})", place));
}

void Graph::launch(Stream& s, int64_t n) {
  check_alive();
  if (n < 0) fail(ErrorKind::Value, "the number of launches must be >= 0, got {}", n);
  if (s.device() != device_) {
    fail(ErrorKind::Value,
         "{} belongs to device {}; it cannot be launched on a stream of device {}", tag_->label,
         device_, s.device());
  }
  if (s.capture() || Capture::active()) {
    fail(ErrorKind::Capture, "{} cannot be launched while a graph is captured", tag_->label);
  }
  if (n == 0) return;
  // Ordered as a launch of the same work would be: after the allocation of every buffer it uses.
  for (const auto& b : buffers_) b->record_use(s);
  int64_t done = 0;
  struct Count {
    Graph& g;
    int64_t& done;
    ~Count() {
      if (done == 0) return;
      g.launches_ += done;
      Ledger& l = g.rt_.monitor().ledger;
      l += g.per_launch_.times(static_cast<uint64_t>(done));
      l.graph_launches += static_cast<uint64_t>(done);
    }
  } count{*this, done};
  for (; done < n; ++done) backend_->launch_graph(*exec_, s, trace_name_.c_str());
  for (const auto& b : buffers_) {
    if (is_host(b->location())) b->mark_pending(s);
  }
}

uint64_t Graph::buffer_bytes() const {
  uint64_t n = 0;
  for (const auto& b : buffers_) n += b->bytes();
  return n;
}

void Graph::release() noexcept {
  if (!exec_) return;
  exec_.reset();
  for (const auto& b : buffers_) b->remove_graph_user(tag_);
  buffers_.clear();
}

}  // namespace culua::detail
