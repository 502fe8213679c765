#include "core/stream.hpp"

#include "core/error.hpp"
#include "core/interrupt.hpp"

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
  interruptible_wait([this](std::chrono::microseconds t) { return do_wait_for(t); }, timed_wait(),
                     [this] { do_synchronize(); });
}

bool Stream::do_wait_for(std::chrono::microseconds) {
  return query();
}

void Event::record(Stream& s) {
  if (s.device() != device_) {
    fail(ErrorKind::Value, "event of device {} cannot be recorded on a stream of device {}",
         device_, s.device());
  }
  do_record(s);
  recorded_ = true;
}

void Event::synchronize() {
  if (!recorded_) return;
  interruptible_wait([this](std::chrono::microseconds t) { return do_wait_for(t); }, timed_wait(),
                     [this] { do_synchronize(); });
}

bool Event::do_wait_for(std::chrono::microseconds) {
  return do_query();
}

bool Event::query() {
  return !recorded_ || do_query();
}

double Event::elapsed_ms(Event& later) {
  if (!recorded_ || !later.recorded_) {
    fail(ErrorKind::Value, "elapsed time needs two recorded events; {} was never recorded",
         !recorded_ ? "the start event" : "the end event");
  }
  if (!timing_ || !later.timing_) {
    fail(ErrorKind::Value, "elapsed time needs events created with timing=true");
  }
  synchronize();
  later.synchronize();
  return do_elapsed_ms(later);
}

}  // namespace culua::detail
