// A block of memory that arrays view. It remembers the streams whose queued work touches it, so
// that it is freed stream-ordered: dropping the last reference never frees memory that queued
// work still reads or writes, and never blocks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend/backend.hpp"

namespace culua::detail {

struct GraphTag;

// A cap on the bytes of the buffers a runtime allocates (the sandbox's memory quota): each
// buffer charged to it counts from its allocation to its release.
struct MemoryQuota {
  explicit MemoryQuota(uint64_t limit_bytes) : limit(limit_bytes) {}
  const uint64_t limit;
  std::atomic<uint64_t> used{0};
};

class Buffer : public std::enable_shared_from_this<Buffer> {
 public:
  // `alloc_stream` is the stream a device allocation was made on (null for host memory).
  // A buffer that does not own its memory (wrapped pointers) never frees it.
  Buffer(std::shared_ptr<Backend> backend, void* data, size_t bytes, Location loc, int device,
         std::shared_ptr<Stream> alloc_stream, bool owned);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Location location() const { return location_; }
  int device() const { return device_; }
  bool freed() const { return freed_; }
  bool owned() const { return owned_; }  // false for wrapped memory of the application
  Backend& backend() const { return *backend_; }

  // Call before queueing work on `s` that touches this buffer. The first use on a stream other
  // than the allocating one is ordered after that stream's work (the allocation, and the fills
  // that created the contents); host memory is ordered after pending asynchronous copies. On a
  // capturing stream the buffer joins the capture instead (the graph keeps it and orders its
  // launches); during a capture, work on a stream outside it raises.
  void record_use(Stream& s) {
    if (&s == last_ && !s.capture()) return;
    record_use_slow(s);
  }
  // Host memory only: call after queueing asynchronous work on `s` touching it, so that host
  // reads and writes of the memory wait for that work.
  void mark_pending(Stream& s);
  // Blocks until all queued work touching the buffer is done (before host access or a read).
  void wait_idle();
  // ... on every stream that used it but `s` (device memory).
  void wait_idle_except(const Stream& s);
  // The stream of the latest record_use, or null (device memory: the work a read must follow).
  Stream* last_use() const { return last_; }
  // True when queued work touching the buffer may still run (host memory: pending asynchronous
  // copies; device memory: work on the streams that used it).
  bool busy();
  // Frees now, stream-ordered after all queued work that used the buffer; idempotent; never
  // throws or blocks. During a capture on this thread the free waits for the capture's end.
  void release() noexcept;

  // Graphs (cu.graph) that keep the buffer: freeing an array that one of them uses is an error
  // naming it (the first live one; null when none).
  void add_graph_user(const std::shared_ptr<GraphTag>& tag);
  void remove_graph_user(const std::shared_ptr<GraphTag>& tag) noexcept;
  const GraphTag* graph_user();
  // Allocated while a graph was captured (by the work inside it): its arrays' free() drops only
  // the handle, the memory stays with the graph.
  bool made_in_capture() const { return made_in_capture_; }
  void set_made_in_capture() { made_in_capture_ = true; }
  // Counts the buffer's bytes against `quota` until release() (the caller checked the room).
  void charge(std::shared_ptr<MemoryQuota> quota) {
    quota->used.fetch_add(bytes_, std::memory_order_relaxed);
    quota_ = std::move(quota);
  }

 private:
  struct Use {
    std::shared_ptr<Stream> stream;
    std::shared_ptr<Event> pending;  // host memory: recorded after the last async op
  };
  // Most buffers are used by one stream: the first use is kept inline (no allocation).
  class UseList {
   public:
    size_t size() const { return first_.stream ? 1 + rest_.size() : 0; }
    Use& operator[](size_t i) { return i == 0 ? first_ : rest_[i - 1]; }
    void push_back(Use u) {
      if (first_.stream) {
        rest_.push_back(std::move(u));
      } else {
        first_ = std::move(u);
      }
    }
    void clear() {
      first_ = Use{};
      rest_.clear();
    }

   private:
    Use first_;
    std::vector<Use> rest_;
  };
  void record_use_slow(Stream& s);
  // The stream-ordered free of release() (called at once, or when a capture ends).
  static void free_after_uses(Backend& backend, void* data, size_t bytes, Location loc, int device,
                              UseList& uses) noexcept;

  std::shared_ptr<Backend> backend_;
  void* data_;
  size_t bytes_;
  Location location_;
  int device_;
  bool owned_;
  bool freed_ = false;
  bool made_in_capture_ = false;
  std::vector<std::weak_ptr<GraphTag>> graph_users_;
  std::shared_ptr<MemoryQuota> quota_;  // charged with bytes_ until release
  Stream* last_ = nullptr;              // the stream of the latest record_use, for the fast path
  UseList uses_;                        // uses_[0] is the allocating stream of device memory
};

}  // namespace culua::detail
