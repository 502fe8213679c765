#include "core/runtime/capture.hpp"

#include <atomic>
#include <cstdio>

#include "core/base/error.hpp"
#include "core/model/buffer.hpp"
#include "core/model/stream.hpp"

namespace culua::detail {

namespace {
thread_local Capture* t_active = nullptr;
std::atomic<uint64_t> g_next_id{1};
}  // namespace

Capture::Capture(Stream& origin, std::shared_ptr<GraphTag> tag)
    : origin_(&origin), id_(g_next_id++), tag_(std::move(tag)), previous_(t_active) {
  members_.push_back(Member{&origin, nullptr});
  origin.set_capture(this);
  t_active = this;
}

Capture::~Capture() {
  for (Member& m : members_) m.stream->set_capture(nullptr);
  t_active = previous_;
  for (auto& release : deferred_) release();
}

Capture* Capture::active() {
  return t_active;
}

void Capture::forbid(const char* what) {
  if (const Capture* c = t_active) {
    fail(ErrorKind::Capture,
         "{} cannot be captured into {}: it waits for or queries the device, and nothing runs "
         "while a graph is captured (work is recorded to run at g:launch()); do it outside the "
         "graph's function",
         what, c->label());
  }
}

void Capture::outside(const Stream& s) {
  fail(ErrorKind::Capture,
       "work queued on stream {} while {} is captured: that stream is not part of the capture, "
       "so its work would run now instead of in the graph. Queue graph work on the capturing "
       "stream, or make the other stream join it first (other:wait(e) for an event e recorded on "
       "a capturing stream)",
       s.id(), t_active ? t_active->label() : std::string("a graph"));
}

void Capture::touch(Buffer& b) {
  if (!seen_.insert(&b).second) return;
  buffers_.push_back(b.shared_from_this());
  b.add_graph_user(tag_);
}

std::vector<std::shared_ptr<Buffer>> Capture::take_buffers() {
  seen_.clear();
  return std::move(buffers_);
}

Capture::Member* Capture::member(const Stream& s) {
  for (Member& m : members_) {
    if (m.stream == &s) return &m;
  }
  return nullptr;
}

const Capture::Member* Capture::member(const Stream& s) const {
  for (const Member& m : members_) {
    if (m.stream == &s) return &m;
  }
  return nullptr;
}

void Capture::join(Stream& s) {
  if (member(s)) return;
  members_.push_back(Member{&s, s.shared_from_this()});
  s.set_capture(this);
}

void Capture::note_wait(const Stream& waiter, const Stream& recorded_on, size_t ops_before) {
  Member* m = member(recorded_on);
  if (!m || m->stream == origin_ || &waiter == &recorded_on) return;
  if (ops_before >= m->joined_ops || !m->into) {
    m->joined_ops = ops_before;
    m->into = &waiter;
  }
}

size_t Capture::ops_on(const Stream& s) const {
  const Member* m = member(s);
  return m ? m->ops : 0;
}

std::vector<const Stream*> Capture::unjoined() const {
  std::vector<const Stream*> out;
  for (const Member& m : members_) {
    if (m.stream == origin_) continue;
    // Follow the joins towards the origin; each step must cover all of the stream's work.
    const Member* at = &m;
    bool joined = false;
    for (size_t steps = 0; steps <= members_.size(); ++steps) {
      if (!at->into || at->joined_ops < at->ops) break;
      if (at->into == origin_) {
        joined = true;
        break;
      }
      at = member(*at->into);
      if (!at) break;
    }
    if (!joined) out.push_back(m.stream);
  }
  return out;
}

void Capture::note_op(const Stream& s, const char* name) {
  if (Member* m = member(s)) ++m->ops;
  op_names_.emplace_back(name);
}

void* Capture::scratch(const Stream& s, size_t bytes) {
  for (const Scratch& sc : scratch_) {
    if (sc.stream == &s && sc.buffer->bytes() >= bytes) return sc.buffer->data();
  }
  if (!allocate_scratch) fail(ErrorKind::Unsupported, "no scratch memory during this capture");
  std::shared_ptr<Buffer> b = allocate_scratch(bytes);
  touch(*b);
  scratch_.push_back(Scratch{&s, b});
  return b->data();
}

const uint64_t* Capture::random_counter(uint64_t blocks) {
  if (!random_counter_) {
    if (!allocate_scratch) fail(ErrorKind::Unsupported, "no scratch memory during this capture");
    random_counter_ = allocate_scratch(sizeof(uint64_t));
    touch(*random_counter_);
  }
  random_blocks_ += blocks;
  return static_cast<const uint64_t*>(random_counter_->data());
}

void Capture::defer(std::function<void()> release) noexcept {
  try {
    deferred_.push_back(std::move(release));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "culua: leaking memory freed during a graph capture: %s\n", e.what());
  }
}

}  // namespace culua::detail
