#include "core/model/buffer.hpp"

#include <cstdio>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/monitor.hpp"

namespace culua::detail {

Buffer::Buffer(std::shared_ptr<Backend> backend, void* data, size_t bytes, Location loc, int device,
               std::shared_ptr<Stream> alloc_stream, bool owned)
    : backend_(std::move(backend)),
      data_(data),
      bytes_(bytes),
      location_(loc),
      device_(device),
      owned_(owned) {
  if (alloc_stream) {
    last_ = alloc_stream.get();
    uses_.push_back(Use{std::move(alloc_stream), nullptr});
  }
}

Buffer::~Buffer() {
  release();
}

void Buffer::record_use_slow(Stream& s) {
  if (Capture* c = s.capture()) {
    // Captured work: nothing is ordered now (a capturing stream cannot wait for work outside the
    // capture); each launch of the graph orders itself after the buffer's uses.
    c->touch(*this);
    return;
  }
  if (Capture::active()) Capture::outside(s);
  for (size_t i = 0; i < uses_.size(); ++i) {
    if (uses_[i].stream.get() == &s) {
      last_ = &s;
      return;
    }
  }
  // Inside cu.fuse, the events below order streams after the operations recorded so far.
  if (OpRecorder* r = thread_recorder()) r->flush();
  if (location_ == Location::Device) {
    if (uses_.size() > 0) {
      auto ev = backend_->create_event(uses_[0].stream->device(), false);
      ev->record(*uses_[0].stream);
      s.wait(*ev);
    }
  } else {
    for (size_t i = 0; i < uses_.size(); ++i) {
      Use& u = uses_[i];
      if (u.pending && !u.pending->query()) s.wait(*u.pending);
    }
  }
  uses_.push_back(Use{s.shared_from_this(), nullptr});
  last_ = &s;
}

void Buffer::mark_pending(Stream& s) {
  record_use(s);
  if (s.capture()) return;  // the graph's launches mark it
  Use* u = nullptr;
  for (size_t i = 0; i < uses_.size(); ++i) {
    if (uses_[i].stream.get() == &s) u = &uses_[i];
  }
  if (!u->pending) u->pending = backend_->create_event(s.device(), false);
  u->pending->record(s);
}

void Buffer::wait_idle() {
  for (size_t i = 0; i < uses_.size(); ++i) {
    Use& u = uses_[i];
    if (location_ == Location::Device) {
      u.stream->synchronize();
    } else if (u.pending) {
      u.pending->synchronize();
    }
  }
}

void Buffer::wait_idle_except(const Stream& s) {
  for (size_t i = 0; i < uses_.size(); ++i) {
    if (uses_[i].stream.get() != &s) uses_[i].stream->synchronize();
  }
}

bool Buffer::busy() {
  for (size_t i = 0; i < uses_.size(); ++i) {
    Use& u = uses_[i];
    if (location_ == Location::Device ? !u.stream->query() : u.pending && !u.pending->query()) {
      return true;
    }
  }
  return false;
}

void Buffer::free_after_uses(Backend& backend, void* data, size_t bytes, Location loc, int device,
                             UseList& uses) noexcept {
  try {
    Stream* free_on = nullptr;
    std::shared_ptr<Stream> release_stream;
    if (uses.size() == 1) {
      free_on = uses[0].stream.get();
    } else if (uses.size() > 1) {
      // Several streams used it: an internal stream waits for all of them, then frees. No user
      // stream gains a dependency it did not ask for.
      release_stream = backend.release_stream(device);
      for (size_t i = 0; i < uses.size(); ++i) {
        // The event belongs to the device of the stream it is recorded on (a copy between
        // devices puts a stream of the other device among the uses).
        auto ev = backend.create_event(uses[i].stream->device(), false);
        ev->record(*uses[i].stream);
        release_stream->wait(*ev);
      }
      free_on = release_stream.get();
    }
    backend.deallocate(data, bytes, loc, device, free_on);
  } catch (const std::exception& e) {
    // Only a broken runtime gets here (a sticky device error); leak rather than free memory
    // that queued work may still use.
    std::fprintf(stderr, "culua: leaking %zu bytes that could not be freed safely: %s\n", bytes,
                 e.what());
  }
  uses.clear();
}

void Buffer::release() noexcept {
  if (freed_) return;
  freed_ = true;
  last_ = nullptr;
  if (quota_) {
    quota_->used.fetch_sub(bytes_, std::memory_order_relaxed);
    quota_.reset();
  }
  if (!owned_ || !data_) {
    uses_.clear();
    return;
  }
  if (Capture* c = Capture::active()) {
    // Nothing may be freed on (or beside) capturing streams: free once the capture has ended.
    try {
      auto uses = std::make_shared<UseList>(std::move(uses_));
      c->defer([backend = backend_, data = data_, bytes = bytes_, loc = location_, device = device_,
                uses] { free_after_uses(*backend, data, bytes, loc, device, *uses); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "culua: leaking %zu bytes freed during a graph capture: %s\n", bytes_,
                   e.what());
    }
    uses_.clear();
    data_ = nullptr;
    return;
  }
  free_after_uses(*backend_, data_, bytes_, location_, device_, uses_);
  data_ = nullptr;
}

void Buffer::add_graph_user(const std::shared_ptr<GraphTag>& tag) {
  std::erase_if(graph_users_, [](const std::weak_ptr<GraphTag>& w) { return w.expired(); });
  graph_users_.push_back(tag);
}

void Buffer::remove_graph_user(const std::shared_ptr<GraphTag>& tag) noexcept {
  std::erase_if(graph_users_, [&](const std::weak_ptr<GraphTag>& w) {
    return w.expired() || (!w.owner_before(tag) && !tag.owner_before(w));
  });
}

const GraphTag* Buffer::graph_user() {
  for (const auto& w : graph_users_) {
    if (auto t = w.lock()) return t.get();  // the graph holds the tag while it lives
  }
  return nullptr;
}

}  // namespace culua::detail
