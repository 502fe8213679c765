#include "fuse/recorder.hpp"

#include "core/runtime.hpp"
#include "core/stream.hpp"

namespace culua::detail::fuse {

Recorder::Recorder(Runtime& rt, bool explain)
    : rt_(rt),
      monitor_(rt.monitor()),
      previous_thread_recorder_(thread_recorder()),
      explain_(explain) {
  monitor_.recorder = this;
  thread_recorder() = this;
}

Recorder::~Recorder() {
  monitor_.recorder = nullptr;
  thread_recorder() = previous_thread_recorder_;
}

bool Recorder::record(const ElementwiseCall& c, Stream& s) {
  if (flushing_) return false;
  tape_.push_back(Entry{c, &s});
  if (streams_.empty() || streams_.back().get() != &s) streams_.push_back(s.shared_from_this());
  return true;
}

void Recorder::flush() {
  if (failed_) {
    const std::exception_ptr e = failed_;
    failed_ = nullptr;
    tape_.clear();
    streams_.clear();
    std::rethrow_exception(e);
  }
  if (flushing_ || tape_.empty()) return;
  flushing_ = true;
  // The groups are queued through the observed backend (the ledger, the trace, a capture see
  // them); it hands elementwise calls back to this recorder, which declines them while flushing.
  struct Done {
    Recorder& r;
    ~Done() {
      r.flushing_ = false;
      r.tape_.clear();
      r.streams_.clear();
    }
  } done{*this};
  const std::vector<Group> groups = plan_groups(tape_);
  if (explain_) explained_ += explain(tape_, groups);
  Backend& backend = rt_.backend();
  for (const Group& g : groups) {
    run_group(backend, tape_, g);
    ++monitor_.ledger.fused_groups;
    monitor_.ledger.fused_ops += g.count;
  }
}

void Recorder::flush_before_free() noexcept {
  try {
    flush();
  } catch (...) {
    if (!failed_) failed_ = std::current_exception();
  }
}

}  // namespace culua::detail::fuse
