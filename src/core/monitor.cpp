#include "core/monitor.hpp"

#include <chrono>

#include "core/capture.hpp"
#include "core/error.hpp"

namespace culua::detail {

namespace {
template <class F>
void each_count(Ledger& a, const Ledger& b, F f) {
  for (uint64_t Ledger::*m : {&Ledger::h2d_bytes,
                              &Ledger::d2h_bytes,
                              &Ledger::d2d_bytes,
                              &Ledger::h2d_calls,
                              &Ledger::d2h_calls,
                              &Ledger::d2d_calls,
                              &Ledger::pageable_bytes,
                              &Ledger::pageable_calls,
                              &Ledger::pinned_bytes,
                              &Ledger::pinned_calls,
                              &Ledger::p2p_bytes,
                              &Ledger::p2p_calls,
                              &Ledger::syncs,
                              &Ledger::implicit_syncs,
                              &Ledger::allocs,
                              &Ledger::alloc_bytes,
                              &Ledger::launches,
                              &Ledger::graph_launches,
                              &Ledger::nccl_calls,
                              &Ledger::nccl_bytes,
                              &Ledger::fused_ops,
                              &Ledger::fused_groups,
                              &Ledger::fused_kernels,
                              &Ledger::fused_compiles,
                              &Ledger::fused_compile_us,
                              &Ledger::fused_disk_hits,
                              &Ledger::fused_memory_hits,
                              &Ledger::fused_early_flushes}) {
    f(a.*m, b.*m);
  }
}
}  // namespace

Ledger& Ledger::operator+=(const Ledger& o) {
  each_count(*this, o, [](uint64_t& x, uint64_t y) { x += y; });
  return *this;
}

Ledger Ledger::times(uint64_t n) const {
  Ledger r = *this;
  each_count(r, r, [n](uint64_t& x, uint64_t) { x *= n; });
  return r;
}

OpRecorder*& thread_recorder() {
  thread_local OpRecorder* recorder = nullptr;
  return recorder;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Monitor::queued_slow(Stream& s) {
  last_queued_ = &s;
  last_queued_ref_ = s.weak_from_this();
  for (const auto& w : busy_) {
    if (!w.owner_before(last_queued_ref_) && !last_queued_ref_.owner_before(w)) return;
  }
  busy_.push_back(last_queued_ref_);
}

bool Monitor::work_pending() {
  bool pending = false;
  size_t keep = 0;
  for (size_t i = 0; i < busy_.size(); ++i) {
    std::shared_ptr<Stream> s = busy_[i].lock();
    if (!s || s->query()) continue;
    pending = true;
    if (keep != i) busy_[keep] = std::move(busy_[i]);
    ++keep;
  }
  busy_.resize(keep);
  if (busy_.empty()) {
    last_queued_ = nullptr;
    last_queued_ref_.reset();
  }
  return pending;
}

void Monitor::idle(Stream& s) {
  std::erase_if(busy_, [&](const std::weak_ptr<Stream>& w) {
    const auto p = w.lock();
    return !p || p.get() == &s;
  });
  if (last_queued_ == &s) {
    last_queued_ = nullptr;
    last_queued_ref_.reset();
  }
}

void Monitor::idle_device(int device) {
  std::erase_if(busy_, [&](const std::weak_ptr<Stream>& w) {
    const auto p = w.lock();
    return !p || p->device() == device;
  });
  last_queued_ = nullptr;
  last_queued_ref_.reset();
}

Monitor::Wait::Wait(Monitor& m, const char* what, bool implicit)
    : m_(m), what_(what), implicit_(implicit) {
  m.flush_recorded();  // the wait is for the operations written before it
  Capture::forbid(what);
  if (implicit && m.strict > 0) {
    fail(ErrorKind::Strict,
         "{} waits for the device inside cu.strict (an implicit synchronization); use pinned "
         "host memory and stream= for asynchronous copies, keep results on the device, or "
         "synchronize explicitly outside cu.strict",
         what);
  }
  ++m.ledger.syncs;
  if (implicit) ++m.ledger.implicit_syncs;
  if (m.observer) t0_ = steady_seconds();
}

Monitor::Wait::~Wait() {
  if (m_.observer && t0_ > 0) m_.observer->host_wait(what_, implicit_, t0_, steady_seconds());
}

}  // namespace culua::detail
