#include "fuse/recorder.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/runtime.hpp"
#include "core/stream.hpp"

namespace culua::detail::fuse {

namespace {

// Tapes keep their capacity from one fused call to the next on a thread (a step's tape holds
// dozens of entries of several hundred bytes: grown afresh, it was copied over and over on every
// call). At most kSpareTapes are kept (nested recorders, graphs captured while recording).
constexpr size_t kSpareTapes = 4;
std::vector<std::vector<Entry>>& spare_tapes() {
  thread_local std::vector<std::vector<Entry>> spare;
  return spare;
}

}  // namespace

Recorder::Recorder(Runtime& rt, bool explain, KernelCache* kernels, bool generate_single)
    : rt_(rt),
      monitor_(rt.monitor()),
      kernels_(kernels),
      previous_thread_recorder_(thread_recorder()),
      explain_(explain),
      generate_single_(generate_single) {
  std::vector<std::vector<Entry>>& spare = spare_tapes();
  if (spare.empty()) {
    spare.reserve(kSpareTapes);  // the destructor only moves into reserved room
    tape_.reserve(kMaxGroupOps);
  } else {
    tape_ = std::move(spare.back());
    spare.pop_back();
  }
  monitor_.recorder = this;
  thread_recorder() = this;
}

Recorder::~Recorder() {
  monitor_.recorder = nullptr;
  thread_recorder() = previous_thread_recorder_;
  std::vector<std::vector<Entry>>& spare = spare_tapes();
  if (spare.size() < spare.capacity() && tape_.capacity() > 0) {
    tape_.clear();
    spare.push_back(std::move(tape_));
  }
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
  for (const Group& g : groups) {
    run(g);
    ++monitor_.ledger.fused_groups;
    monitor_.ledger.fused_ops += g.count;
  }
}

// The ledger's counts of a generated kernel's launch, and explain's line for it.
void Recorder::count_kernel(size_t ops) {
  Ledger& l = monitor_.ledger;
  ++l.fused_kernels;
  std::string how;
  switch (kernels_->found) {
    case KernelCache::Found::Memory:
      ++l.fused_memory_hits;
      how = "already loaded";
      break;
    case KernelCache::Found::Disk:
      ++l.fused_disk_hits;
      how = "from the disk cache";
      break;
    case KernelCache::Found::Compiled:
      ++l.fused_compiles;
      l.fused_compile_us += static_cast<uint64_t>(kernels_->compile_ms * 1000.0);
      how = fmt::format("compiled in {:.1f} ms", kernels_->compile_ms);
      break;
  }
  if (explain_)
    explained_ += fmt::format("  the group of {} op{} ran as one generated kernel ({})\n", ops,
                              ops == 1 ? "" : "s", how);
}

void Recorder::run(const Group& g) {
  Backend& backend = rt_.backend();
  if (sources_ && (g.count > 1 || generate_single_)) {
    std::vector<ElementwiseCall> calls;
    for (size_t i = g.first; i < g.first + g.count; ++i) calls.push_back(tape_[i].call);
    const FusedKernel k = generate(calls.data(), calls.size());
    if (k.ok) sources_->push_back(full_source(k));
  }
  if (kernels_ && (g.count > 1 || generate_single_) && backend.kind() == BackendKind::Cuda) {
    std::vector<ElementwiseCall> calls;
    for (size_t i = g.first; i < g.first + g.count; ++i) calls.push_back(tape_[i].call);
    FusedKernel k = generate(calls.data(), calls.size(), false);
    std::string why = k.why;
    Stream& s = *tape_[g.first].stream;
    const auto source = [&] { return full_source(generate(calls.data(), calls.size(), true)); };
    if (k.ok) {
      if (std::shared_ptr<RtcFunction> f =
              kernels_->function(backend, k, s.device(), source, why)) {
        LaunchDims dims;
        const int64_t blocks = (k.elements / k.vector + 255) / 256;
        dims.grid[0] =
            static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(blocks, 1 << 20)));
        dims.block[0] = 256;
        void* params[] = {k.params.data()};
        f->launch(dims, s, params, LaunchSite{"cu.fuse", 0});
        count_kernel(g.count);
        return;
      }
    }
    if (kernels_->warned.insert(why).second) {
      std::fprintf(stderr, "culua: cu.fuse: a group of %zu operations runs one by one: %s\n",
                   g.count, why.c_str());
    }
  }
  run_group(backend, tape_, g);
}

void Recorder::flush_before_free() noexcept {
  try {
    flush();
  } catch (const std::exception&) {  // flush() calls no Lua: only C++ errors reach here
    if (!failed_) failed_ = std::current_exception();
  }
}

}  // namespace culua::detail::fuse
