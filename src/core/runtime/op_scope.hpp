// OpScope: how one operation queued on a stream is reported to the Monitor
// (core/runtime/monitor.hpp). The observed backend (core/runtime/observed_backend.cpp) puts one
// around every backend call that queues work, the NCCL communicator (src/dist) around every
// collective. Header-only: on the elementwise path it costs what the hand-written reports did.
#pragma once

#include <cstdint>

#include "core/model/stream.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/monitor.hpp"

namespace culua::detail {

// What an OpScope does besides reporting the operation.
struct OpScopeOptions {
  // Queue the elementwise operations cu.fuse recorded first, so that everything runs in the order
  // written.
  bool flush_recorded = true;
  // Count the operation as a launch in the monitor's ledger; false for a graph launch (its
  // operations count instead, at each launch).
  bool counted = true;
};

// Adds nothing: the counts of an operation that has none of its own.
struct NoExtraCounts {
  void operator()(Ledger&) const {}
};

// Reports one operation to the monitor: counted and remembered always, observed when a trace runs.
// Captured operations are only noted by their capture (they run at the graph's launches); during a
// capture, an operation on a stream outside it raises (it would run now, not in the graph). Put
// the scope around the call that queues the operation: the trace's interval is the scope's life.
class OpScope {
 public:
  // `extra(ledger)` adds what else the operation counts (a collective's calls and bytes) to the
  // ledger that counts it: its capture's (counted at every launch of the graph) or the monitor's.
  // `op` must outlive the scope.
  template <class Extra = NoExtraCounts>
  OpScope(Monitor& m, Stream& s, const OpInfo& op, OpScopeOptions options = {},
          const Extra& extra = {})
      : m_(m), s_(s), op_(op) {
    if (options.flush_recorded) m.flush_recorded();
    if (Capture* c = s.capture()) {
      captured_ = true;
      c->note_op(s, op.name);
      ++c->ledger.launches;
      extra(c->ledger);
      return;
    }
    if (Capture::active()) Capture::outside(s);
    if (options.counted) {
      m.queued(s);
    } else {
      m.queued_uncounted(s);
    }
    extra(m.ledger);
    if (m.observer) m.observer->begin_op(op, s);
  }
  ~OpScope() {
    if (!captured_ && m_.observer) m_.observer->end_op(op_, s_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  Monitor& m_;
  Stream& s_;
  const OpInfo& op_;
  bool captured_ = false;
};

}  // namespace culua::detail
