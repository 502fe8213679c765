#include "measure/event_clock.hpp"

#include <cmath>

#include "core/runtime/monitor.hpp"

namespace culua::detail::measure {

EventClock::EventClock(Runtime& rt) : rt_(rt) {
  origins_.resize(static_cast<size_t>(rt.backend().device_count()));
}

bool EventClock::has_origin(int device) const {
  return static_cast<size_t>(device) < origins_.size() &&
         origins_[static_cast<size_t>(device)].event != nullptr;
}

double EventClock::origin(int device) {
  Origin& o = origins_[static_cast<size_t>(device)];
  if (!o.event) {
    // The origin is an event on an idle device: its device time is the host time of recording.
    // The host backend knows the host time of the event exactly; on CUDA it lies between the
    // record call and the completed wait (a few microseconds apart): take the middle.
    Backend& b = rt_.backend();
    b.synchronize_device(device);
    o.event = b.create_event(device, true);
    const double before = steady_seconds();
    o.event->record(*b.default_stream(device));
    o.event->synchronize();
    const double after = steady_seconds();
    const double exact = o.event->steady_time();
    o.host = std::isnan(exact) ? 0.5 * (before + after) : exact;
  }
  return o.host;
}

double EventClock::time_of(Event& e, int device) {
  const double exact = e.steady_time();
  if (!std::isnan(exact)) return exact;
  const double host = origin(device);
  return host + origins_[static_cast<size_t>(device)].event->elapsed_ms(e) * 1e-3;
}

}  // namespace culua::detail::measure
