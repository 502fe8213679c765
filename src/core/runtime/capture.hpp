// A stream capture in progress (cu.graph): the work culua queues on a capturing stream is recorded
// into a graph instead of running. The capture is per thread, as CUDA's thread-local capture mode
// is: while one is active on a thread, nothing that thread does may wait for or query the device,
// work may only go to the capturing streams, and memory is freed only once the capture has ended.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/runtime/monitor.hpp"

namespace culua::detail {

class Buffer;
class Stream;

// The name of a graph in messages ("graph 'step' captured at run.lua:12"). Buffers a graph uses
// hold it weakly, so that freeing one can name the graph.
struct GraphTag {
  std::string label;
};

// What a backend keeps of a capture in progress (the host backend's recorded tasks).
class CaptureState {
 public:
  virtual ~CaptureState() = default;
};

class Capture {
 public:
  // Becomes the thread's active capture, with `origin` capturing. The backend begins capturing
  // separately (Graph does both).
  Capture(Stream& origin, std::shared_ptr<GraphTag> tag);
  // Ends the thread's capture: every stream stops capturing; postponed frees run.
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // The capture in progress on this thread, or null.
  static Capture* active();
  // Throws Error(Capture) naming `what` when a capture is active on this thread.
  static void forbid(const char* what);
  // Throws Error(Capture): work on `s`, which is not part of the active capture.
  [[noreturn]] static void outside(const Stream& s);

  Stream& origin() const { return *origin_; }
  uint64_t id() const { return id_; }  // unique in the process, never 0
  const std::shared_ptr<GraphTag>& tag() const { return tag_; }
  const std::string& label() const { return tag_->label; }

  // Captured work touches `b`: the graph keeps it alive and orders its launches after the
  // buffer's allocation (as a launch of the same work would).
  void touch(Buffer& b);
  std::vector<std::shared_ptr<Buffer>> take_buffers();

  // `s` waits for an event recorded inside the capture: it joins (its work is captured too).
  void join(Stream& s);
  // `waiter` (capturing) waits for an event recorded on `recorded_on` after `ops_before` of
  // recorded_on's captured operations: the host backend's check that every joined stream joins
  // back into the origin before the capture ends (CUDA checks it itself).
  void note_wait(const Stream& waiter, const Stream& recorded_on, size_t ops_before);
  size_t ops_on(const Stream& s) const;
  // The joined streams whose captured work the origin stream does not wait for (empty when all
  // joined back).
  std::vector<const Stream*> unjoined() const;

  // One operation was captured on `s` (its name for the host backend's topology and the trace).
  void note_op(const Stream& s, const char* name);
  const std::vector<std::string>& op_names() const { return op_names_; }
  // Transfers and operations of the captured work, added to the ledger at every launch.
  Ledger ledger;

  // Scratch memory that lives as long as the graph, one block per stream (cuBLAS's workspace).
  // Allocated by `allocate_scratch`, which the graph sets.
  void* scratch(const Stream& s, size_t bytes);
  std::function<std::shared_ptr<Buffer>(size_t bytes)> allocate_scratch;

  // Random numbers drawn by captured work: the graph's counter (8 bytes of device memory, allocated
  // by `allocate_scratch` on first use and kept by the graph), to which each launch adds the
  // blocks one launch draws. `blocks` are those of the call being captured.
  const uint64_t* random_counter(uint64_t blocks);
  const std::shared_ptr<Buffer>& random_counter_buffer() const { return random_counter_; }
  uint64_t random_blocks() const { return random_blocks_; }

  // Runs `release` once the capture has ended (frees cannot be queued on capturing streams, and
  // CUDA refuses stream-ordered frees elsewhere during a thread-local capture).
  void defer(std::function<void()> release) noexcept;

  // The backend's state of this capture.
  std::unique_ptr<CaptureState> backend_state;

 private:
  struct Member {
    Stream* stream;
    std::shared_ptr<Stream> keep;  // joined streams are kept until the capture ends
    size_t ops = 0;
    // The joined stream's work up to this many ops is waited for by `into` (or nothing yet).
    size_t joined_ops = 0;
    const Stream* into = nullptr;
  };
  Member* member(const Stream& s);
  const Member* member(const Stream& s) const;

  Stream* origin_;
  uint64_t id_;
  std::shared_ptr<GraphTag> tag_;
  Capture* previous_;
  std::vector<Member> members_;  // members_[0] is the origin
  std::unordered_set<const Buffer*> seen_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
  std::vector<std::string> op_names_;
  struct Scratch {
    const Stream* stream;
    std::shared_ptr<Buffer> buffer;
  };
  std::vector<Scratch> scratch_;
  std::shared_ptr<Buffer> random_counter_;
  uint64_t random_blocks_ = 0;
  std::vector<std::function<void()>> deferred_;
};

}  // namespace culua::detail
