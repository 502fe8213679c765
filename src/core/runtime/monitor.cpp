#include "core/runtime/monitor.hpp"

#include <algorithm>
#include <chrono>

#include "core/base/error.hpp"
#include "core/runtime/capture.hpp"
#include "fmt/format.h"

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

class Monitor::Tee final : public OpObserver {
 public:
  explicit Tee(const std::vector<OpObserver*>& list) : list_(list) {}
  void begin_op(const OpInfo& op, Stream& s) override {
    for (OpObserver* o : list_) o->begin_op(op, s);
  }
  void end_op(const OpInfo& op, Stream& s) override {
    for (auto it = list_.rbegin(); it != list_.rend(); ++it) (*it)->end_op(op, s);
  }
  void host_wait(const char* what, bool implicit, double t0, double t1) override {
    for (OpObserver* o : list_) o->host_wait(what, implicit, t0, t1);
  }
  void host_op(const OpInfo& op, double t0, double t1) override {
    for (OpObserver* o : list_) o->host_op(op, t0, t1);
  }

 private:
  const std::vector<OpObserver*>& list_;
};

void Monitor::add_observer(OpObserver* o) {
  if (!o || std::find(observers_.begin(), observers_.end(), o) != observers_.end()) return;
  observers_.push_back(o);
  if (!tee_) tee_ = std::make_unique<Tee>(observers_);
  observer = observers_.size() == 1 ? observers_[0] : tee_.get();
}

void Monitor::remove_observer(OpObserver* o) {
  std::erase(observers_, o);
  observer = observers_.empty() ? nullptr : observers_.size() == 1 ? observers_[0] : tee_.get();
}

namespace {

size_t site_hash(const void* key, int line) {
  return std::hash<const void*>()(key) * 31 + static_cast<size_t>(line) * 0x9E3779B97F4A7C15ull;
}

}  // namespace

uint32_t SiteTable::intern(const void* key, const char* source, int line, const char* short_src) {
  if (slots_.empty()) slots_.resize(64);
  const size_t mask = slots_.size() - 1;
  for (size_t i = site_hash(key, line) & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.id == 0) break;
    // The key (the chunk's source string) is compared as text too: after a collection another
    // chunk may sit at the same address.
    if (slot.key == key && slot.line == line && slot.source == source) return slot.id;
  }
  if (2 * (names_.size() + 1) > slots_.size()) {  // grow, then insert into the new table
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    for (Slot& o : old) {
      if (o.id == 0) continue;
      for (size_t i = site_hash(o.key, o.line) & (slots_.size() - 1);;
           i = (i + 1) & (slots_.size() - 1)) {
        if (slots_[i].id == 0) {
          slots_[i] = std::move(o);
          break;
        }
      }
    }
  }
  const uint32_t id = static_cast<uint32_t>(names_.size());
  names_.push_back(fmt::format("{}:{}", short_src, line));
  for (size_t i = site_hash(key, line) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i].id == 0) {
      slots_[i] = Slot{key, line, id, source};
      break;
    }
  }
  return id;
}

const std::string& SiteTable::name(uint32_t id) const {
  return id < names_.size() ? names_[id] : names_[0];
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
