// Streams and events: the backend-independent interface. A stream is a FIFO of device work; an
// event marks a point in a stream. On CUDA they wrap cudaStream_t/cudaEvent_t; on the host
// backend a stream is a worker thread with a queue.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

namespace culua::detail {

enum class StreamPriority : uint8_t { Normal, High, Low };
std::string_view priority_name(StreamPriority p);

class Event;
class Capture;

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(int device, StreamPriority priority, uint64_t id)
      : device_(device), priority_(priority), id_(id) {}
  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  int device() const { return device_; }
  StreamPriority priority() const { return priority_; }
  uint64_t id() const { return id_; }

  // Blocks until all queued work is done. Interruptible (core/base/interrupt.hpp): with a flag in
  // scope it polls and throws Error(Interrupted) when the flag is requested. Raises during a
  // capture on this thread, as query() does.
  void synchronize();
  bool query();  // true when all queued work is done
  // Later work on this stream waits for `e`. An event recorded inside a capture makes a stream
  // that is not capturing join it; a capturing stream cannot wait for an event recorded outside
  // its capture (graph launches are ordered on the launching stream instead).
  void wait(Event& e);
  virtual void* native_handle() const = 0;  // cudaStream_t on CUDA

  // The capture this stream records into (core/runtime/capture.hpp), or null when its work runs.
  Capture* capture() const { return capture_; }
  void set_capture(Capture* c) { capture_ = c; }

 protected:
  virtual bool do_query() = 0;
  virtual void do_wait(Event& e) = 0;
  virtual void do_synchronize() = 0;  // the backend's blocking wait
  // An interruptible wait's step: true when the queued work is done. A backend that can block
  // with a timeout waits up to `timeout` and says so in timed_wait(); the default only queries.
  virtual bool do_wait_for(std::chrono::microseconds timeout);
  virtual bool timed_wait() const { return false; }

 private:
  int device_;
  StreamPriority priority_;
  uint64_t id_;
  Capture* capture_ = nullptr;
};

class Event {
 public:
  Event(int device, bool timing) : device_(device), timing_(timing) {}
  virtual ~Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  int device() const { return device_; }
  bool timing() const { return timing_; }
  bool recorded() const { return recorded_; }
  // The capture in progress that the event was last recorded in, or null (recorded outside a
  // capture, or in one that has ended); how many operations its stream had captured then.
  Capture* captured_in() const;
  size_t captured_ops() const { return captured_ops_; }
  const Stream* recorded_on() const { return recorded_on_; }
  // Last recorded inside a capture that has ended: it marks a point of a graph, not of a stream,
  // and cannot be waited for or timed.
  bool graph_point() const { return captured_id_ != 0 && !captured_in(); }

  void record(Stream& s);
  // Blocks until the event completes (a never-recorded event is complete); interruptible as
  // Stream::synchronize.
  void synchronize();
  bool query();
  // Milliseconds from this event to `later`; waits for both (interruptibly). Both must have been
  // recorded with timing enabled.
  double elapsed_ms(Event& later);
  // Host backend: when the queue reached the event, in steady-clock seconds (waits for it). NaN
  // on CUDA, whose event times are on the device's clock.
  virtual double steady_time() { return std::numeric_limits<double>::quiet_NaN(); }

 protected:
  virtual void do_record(Stream& s) = 0;
  virtual void do_synchronize() = 0;
  virtual bool do_query() = 0;
  virtual double do_elapsed_ms(Event& later) = 0;
  // As Stream's: an interruptible wait's step, blocking up to `timeout` where timed_wait().
  virtual bool do_wait_for(std::chrono::microseconds timeout);
  virtual bool timed_wait() const { return false; }

 private:
  int device_;
  bool timing_;
  bool recorded_ = false;
  uint64_t captured_id_ = 0;  // Capture::id() of the capture of the last record, 0: none
  size_t captured_ops_ = 0;
  const Stream* recorded_on_ = nullptr;
};

}  // namespace culua::detail
