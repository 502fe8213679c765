// Device events as steady-clock times: per device, an origin event recorded on an idle device,
// whose device time is the host time of its recording; any later event's time is the origin's plus
// the elapsed time between them. The host backend's events know their own steady time (used as is).
// The trace and the profiler's host-backend rows place device work on the host's time line so.
#pragma once

#include <memory>
#include <vector>

#include "core/runtime/runtime.hpp"

namespace culua::detail::measure {

class EventClock {
 public:
  explicit EventClock(Runtime& rt);
  // The steady time of `device`'s origin, made on first use (waits for the device then).
  double origin(int device);
  bool has_origin(int device) const;
  // The steady time at which the device reached the recorded event `e` (e complete).
  double time_of(Event& e, int device);

 private:
  struct Origin {
    std::shared_ptr<Event> event;
    double host = 0;
  };
  Runtime& rt_;
  std::vector<Origin> origins_;
};

}  // namespace culua::detail::measure
