#include "core/model/stream.hpp"

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/runtime/capture.hpp"

namespace culua::detail {

std::string_view priority_name(StreamPriority p) {
  switch (p) {
    case StreamPriority::High:
      return "high";
    case StreamPriority::Low:
      return "low";
    default:
      return "normal";
  }
}

void Stream::synchronize() {
  Capture::forbid("waiting for a stream");
  interruptible_wait([this](std::chrono::microseconds t) { return do_wait_for(t); }, timed_wait(),
                     [this] { do_synchronize(); });
}

bool Stream::do_wait_for(std::chrono::microseconds) {
  return do_query();
}

bool Stream::query() {
  Capture::forbid("querying a stream");
  return do_query();
}

namespace {

[[noreturn]] void graph_point_error(const char* what) {
  fail(ErrorKind::Capture,
       "{}: the event was last recorded while a graph was captured, so it marks a point inside "
       "the graph, not on a stream; record events around g:launch() to order or time a graph",
       what);
}

}  // namespace

void Stream::wait(Event& e) {
  if (Capture* theirs = e.captured_in()) {
    if (!capture_) {
      if (device_ != theirs->origin().device()) {
        fail(ErrorKind::Capture, "a stream of device {} cannot join the capture of {} on device {}",
             device_, theirs->label(), theirs->origin().device());
      }
      theirs->join(*this);
    }
    theirs->note_wait(*this, *e.recorded_on(), e.captured_ops());
    do_wait(e);
    return;
  }
  if (!e.recorded()) return;  // as in CUDA: waiting for a never-recorded event does nothing
  if (e.graph_point()) graph_point_error("waiting for an event");
  if (capture_) {
    fail(ErrorKind::Capture,
         "a stream capturing into {} cannot wait for an event recorded outside the capture: a "
         "graph cannot depend on work outside it. Its launches are ordered after the work queued "
         "before them on the launching stream; make that stream wait instead, outside the "
         "graph's function",
         capture_->label());
  }
  do_wait(e);
}

Capture* Event::captured_in() const {
  if (captured_id_ == 0) return nullptr;
  Capture* c = Capture::active();
  return c && c->id() == captured_id_ ? c : nullptr;
}

void Event::record(Stream& s) {
  if (s.device() != device_) {
    fail(ErrorKind::Value, "event of device {} cannot be recorded on a stream of device {}",
         device_, s.device());
  }
  do_record(s);
  recorded_ = true;
  recorded_on_ = &s;
  if (Capture* c = s.capture()) {
    captured_id_ = c->id();
    captured_ops_ = c->ops_on(s);
  } else {
    captured_id_ = 0;
    captured_ops_ = 0;
  }
}

void Event::synchronize() {
  if (!recorded_) return;
  Capture::forbid("waiting for an event");
  if (graph_point()) graph_point_error("waiting for an event");
  interruptible_wait([this](std::chrono::microseconds t) { return do_wait_for(t); }, timed_wait(),
                     [this] { do_synchronize(); });
}

bool Event::do_wait_for(std::chrono::microseconds) {
  return do_query();
}

bool Event::query() {
  if (!recorded_) return true;
  Capture::forbid("querying an event");
  if (graph_point()) graph_point_error("querying an event");
  return do_query();
}

double Event::elapsed_ms(Event& later) {
  if (!recorded_ || !later.recorded_) {
    fail(ErrorKind::Value, "elapsed time needs two recorded events; {} was never recorded",
         !recorded_ ? "the start event" : "the end event");
  }
  if (!timing_ || !later.timing_) {
    fail(ErrorKind::Value, "elapsed time needs events created with timing=true");
  }
  Capture::forbid("the time between two events");
  if (graph_point() || later.graph_point()) graph_point_error("the time between two events");
  synchronize();
  later.synchronize();
  return do_elapsed_ms(later);
}

}  // namespace culua::detail
