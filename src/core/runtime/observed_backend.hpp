// A backend that reports to the runtime's Monitor (core/runtime/monitor.hpp): it counts transfers,
// allocations and queued operations for the ledger, remembers which streams got work (the
// host-clock tripwire), and hands every operation to the observer (the trace) when one is set.
// The runtime wraps every backend in one; it forwards everything else unchanged.
#pragma once

#include <memory>

#include "core/backend/backend.hpp"
#include "core/base/scratch.hpp"
#include "core/runtime/monitor.hpp"

namespace culua::detail {

// `reserve`, when set, is in scope (core/base/scratch.hpp) around the calls that may keep host
// temporaries (reductions, scans, sorts, products, transforms): the runtime's memory quota.
std::shared_ptr<Backend> make_observed_backend(std::shared_ptr<Backend> inner,
                                               std::shared_ptr<Monitor> monitor,
                                               ScratchReserve reserve = {});
// A host executor that reports each call (its name, bytes and time on the calling thread) to
// the monitor's observer.
std::unique_ptr<HostExecutor> make_observed_host_executor(std::shared_ptr<HostExecutor> inner,
                                                          Monitor& monitor,
                                                          ScratchReserve reserve = {});
// The backend inside an observed one (or `b` itself).
Backend& unwrap_backend(Backend& b);

}  // namespace culua::detail
