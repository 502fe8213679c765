#include "core/buffer.hpp"

#include <cstdio>

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
  for (size_t i = 0; i < uses_.size(); ++i) {
    if (uses_[i].stream.get() == &s) {
      last_ = &s;
      return;
    }
  }
  if (location_ == Location::Device) {
    if (uses_.size() > 0) {
      auto ev = backend_->create_event(device_, false);
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

bool Buffer::busy() {
  for (size_t i = 0; i < uses_.size(); ++i) {
    Use& u = uses_[i];
    if (location_ == Location::Device ? !u.stream->query() : u.pending && !u.pending->query()) {
      return true;
    }
  }
  return false;
}

void Buffer::release() noexcept {
  if (freed_) return;
  freed_ = true;
  if (!owned_ || !data_) {
    uses_.clear();
    last_ = nullptr;
    return;
  }
  try {
    Stream* free_on = nullptr;
    std::shared_ptr<Stream> release_stream;
    if (uses_.size() == 1) {
      free_on = uses_[0].stream.get();
    } else if (uses_.size() > 1) {
      // Several streams used it: an internal stream waits for all of them, then frees. No user
      // stream gains a dependency it did not ask for.
      release_stream = backend_->release_stream(device_);
      for (size_t i = 0; i < uses_.size(); ++i) {
        auto ev = backend_->create_event(device_, false);
        ev->record(*uses_[i].stream);
        release_stream->wait(*ev);
      }
      free_on = release_stream.get();
    }
    backend_->deallocate(data_, bytes_, location_, device_, free_on);
  } catch (const std::exception& e) {
    // Only a broken runtime gets here (a sticky device error); leak rather than free memory
    // that queued work may still use.
    std::fprintf(stderr, "culua: leaking %zu bytes that could not be freed safely: %s\n", bytes_,
                 e.what());
  }
  uses_.clear();
  last_ = nullptr;
  data_ = nullptr;
}

}  // namespace culua::detail
