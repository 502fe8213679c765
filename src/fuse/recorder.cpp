#include "fuse/recorder.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/buffer.hpp"
#include "core/capture.hpp"
#include "core/elementwise_group.hpp"
#include "core/error.hpp"
#include "core/runtime.hpp"
#include "core/stream.hpp"

namespace culua::detail::fuse {

namespace {

// Tapes keep their capacity from one fused call to the next on a thread (a step's tape holds
// dozens of entries of several hundred bytes: grown afresh, it was copied over and over on every
// call). At most kSpareTapes are kept (nested recorders, graphs captured while recording).
constexpr size_t kSpareTapes = 4;
std::vector<Tape>& spare_tapes() {
  thread_local std::vector<Tape> spare;
  return spare;
}

// The calls of a generated kernel of `g` (fuse/codegen.hpp GroupCalls, which points into it).
struct KernelCalls {
  std::vector<ElementwiseCall> calls, post;
  GroupCalls group;

  KernelCalls(const Tape& tape, const Group& g, const std::vector<Span>& dead)
      : calls(element_calls(tape, g)) {
    group.calls = calls.data();
    group.count = calls.size();
    group.dead = dead.data();
    group.dead_count = dead.size();
    if (!g.reduces) return;
    for (size_t i = g.reduce_at() + 1; i < g.first + g.count; ++i)
      post.push_back(tape.entries[i].call);
    group.reduce = &tape.reduces[static_cast<size_t>(tape.entries[g.reduce_at()].reduce)];
    group.post = post.data();
    group.post_count = post.size();
  }
  KernelCalls(const KernelCalls&) = delete;
  KernelCalls& operator=(const KernelCalls&) = delete;
};

}  // namespace

Recorder::Recorder(Runtime& rt, bool explain, KernelCache* kernels, bool generate_single)
    : rt_(rt),
      monitor_(rt.monitor()),
      kernels_(kernels),
      previous_thread_recorder_(thread_recorder()),
      explain_(explain),
      generate_single_(generate_single) {
  std::vector<Tape>& spare = spare_tapes();
  if (spare.empty()) {
    spare.reserve(kSpareTapes);  // the destructor only moves into reserved room
    tape_.entries.reserve(kMaxGroupOps);
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
  std::vector<Tape>& spare = spare_tapes();
  if (spare.size() < spare.capacity() && tape_.entries.capacity() > 0) {
    tape_.clear();
    spare.push_back(std::move(tape_));
  }
}

bool Recorder::record(const ElementwiseCall& c, Stream& s) {
  if (flushing_) return false;
  tape_.entries.push_back(Entry{c, &s});
  if (monitor_.observer) note_site();
  if (streams_.empty() || streams_.back().get() != &s) streams_.push_back(s.shared_from_this());
  return true;
}

bool Recorder::record_reduce(const ReduceCall& c, Stream& s) {
  // Only a reduction that may end the group before it (else it runs now, after a flush).
  if (flushing_ || tape_.entries.empty() || tape_.entries.back().stream != &s ||
      !fusable_reduction(c)) {
    return false;
  }
  Entry e;
  e.stream = &s;
  e.reduce = static_cast<int32_t>(tape_.reduces.size());
  tape_.reduces.push_back(c);
  tape_.entries.push_back(e);
  if (monitor_.observer) note_site();
  return true;
}

// Under a trace, the script line of each recorded entry (sites_ runs parallel to the tape once
// a trace is on; entries recorded before it have no line).
void Recorder::note_site() {
  sites_.resize(tape_.entries.size() - 1);
  sites_.push_back(monitor_.site ? monitor_.site() : std::string());
}

// "script.lua:12-14,20 other.lua:3": the lines of the group's entries, each file once, runs of
// lines as ranges.
std::string Recorder::covered_lines(const Group& g) const {
  std::vector<std::pair<std::string, long>> lines;
  for (size_t i = g.first; i < g.first + g.count && i < sites_.size(); ++i) {
    const std::string& site = sites_[i];
    const size_t colon = site.rfind(':');
    if (colon == std::string::npos) continue;
    char* end = nullptr;
    const long line = std::strtol(site.c_str() + colon + 1, &end, 10);
    if (end == site.c_str() + colon + 1) continue;
    lines.emplace_back(site.substr(0, colon), line);
  }
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::string text;
  for (size_t i = 0; i < lines.size();) {
    const std::string& file = lines[i].first;
    text += (text.empty() ? "" : " ") + file + ":";
    bool first = true;
    while (i < lines.size() && lines[i].first == file) {
      size_t j = i;
      while (j + 1 < lines.size() && lines[j + 1].first == file &&
             lines[j + 1].second == lines[j].second + 1)
        ++j;
      text += fmt::format("{}{}", first ? "" : ",", lines[i].second);
      if (j > i) text += fmt::format("-{}", lines[j].second);
      first = false;
      i = j + 1;
    }
  }
  return text;
}

void Recorder::flush() {
  if (failed_) {
    const std::exception_ptr e = failed_;
    failed_ = nullptr;
    tape_.clear();
    streams_.clear();
    std::rethrow_exception(e);
  }
  if (flushing_ || tape_.entries.empty()) return;
  const bool early = !finishing_;
  flushing_ = true;
  // The groups are queued through the observed backend (the ledger, the trace, a capture see
  // them); it hands elementwise calls back to this recorder, which declines them while flushing.
  struct Done {
    Recorder& r;
    ~Done() {
      r.flushing_ = false;
      r.tape_.clear();
      r.streams_.clear();
      r.sites_.clear();
    }
  } done{*this};
  const std::vector<Group> groups = plan_groups(tape_);
  if (explain_) explained_ += explain(tape_, groups);
  for (const Group& g : groups) {
    std::string covers;
    if (monitor_.observer && !sites_.empty()) covers = covered_lines(g);
    struct Covers {
      Monitor& m;
      ~Covers() { m.fused_covers = nullptr; }
    } reset{monitor_};
    monitor_.fused_covers = covers.empty() ? nullptr : covers.c_str();
    run(g);
    ++monitor_.ledger.fused_groups;
    monitor_.ledger.fused_ops += g.count;
  }
  if (!early) return;
  ++monitor_.ledger.fused_early_flushes;
  if (explain_) explained_ += "(an early flush: the operations above ran before fn's end)\n";
  if (monitor_.strict > 0 && !freeing_) {
    const std::string site = monitor_.site ? monitor_.site() : std::string();
    fail(ErrorKind::Strict,
         "{}an operation inside cu.fuse that is not recorded (a reduction it cannot end a group "
         "with, a copy, a wait, an event, ...) ran the operations recorded before it: an early "
         "flush inside cu.strict (it splits the fused groups); move it out of the fused "
         "function, or out of cu.strict",
         site.empty() ? "" : site + ": ");
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
  // Generated: a body of several operations, one with a prologue or a reduction, and with
  // generate_single any body (else a body of one operation runs as the precompiled kernel).
  const size_t body = g.body_count();
  const bool generate = body > 0 && (body > 1 || g.prologue > 0 || g.reduces || generate_single_);
  if (sources_ && generate) {
    const std::vector<Span> dead = dead_after(g);
    const KernelCalls kc(tape_, g, dead);
    const FusedKernel k = fuse::generate(kc.group);
    if (k.ok) sources_->push_back(full_source(k));
  }
  if (kernels_ && generate && backend.kind() == BackendKind::Cuda && run_generated(g)) return;
  run_group(backend, tape_, g);
}

// Runs `g` as its generated kernel(s); false (after one warning per reason) when it cannot.
bool Recorder::run_generated(const Group& g) {
  Backend& backend = rt_.backend();
  const std::vector<Span> dead = dead_after(g);
  const KernelCalls kc(tape_, g, dead);
  const GroupCalls& gc = kc.group;
  FusedKernel k = fuse::generate(gc, false);
  std::string why = k.why;
  Stream& s = *tape_.entries[g.first].stream;
  const auto source = [&] { return full_source(fuse::generate(gc, true)); };
  if (k.ok) {
    if (const FusedFunctions f = kernels_->functions(backend, k, s.device(), source, why); f.main) {
      int64_t blocks = (k.elements / k.vector + kFusedThreads - 1) / kFusedThreads;
      blocks =
          std::max<int64_t>(1, std::min<int64_t>(blocks, k.reduces ? kMaxReduceBlocks : 1 << 20));
      LaunchDims dims;
      dims.grid[0] = static_cast<uint32_t>(blocks);
      dims.block[0] = kFusedThreads;
      std::shared_ptr<Buffer> partials;
      if (k.reduces) {
        // The partial results: the capture's scratch (it lives as long as the graph, whose
        // launches are serialized), else memory freed in stream order after the second kernel.
        const size_t bytes = static_cast<size_t>(blocks) * k.acc_bytes;
        void* p = nullptr;
        if (Capture* c = s.capture()) {
          p = c->scratch(s, bytes);
        } else {
          partials = rt_.allocate(bytes, Location::Device, s.device(), &s);
          p = partials->data();
        }
        std::memcpy(k.params.data() + k.reduce_at, &p, sizeof p);
        std::memcpy(k.params.data() + k.reduce_at + 16, &blocks, sizeof blocks);
      }
      void* params[] = {k.params.data()};
      f.main->launch(dims, s, params, LaunchSite{"cu.fuse", 0});
      count_kernel(g.count);
      if (explain_ && k.elided > 0) {
        explained_ += fmt::format("  {} value{} of scratch arrays computed and not stored\n",
                                  k.elided, k.elided == 1 ? "" : "s");
      }
      if (k.reduces) {
        LaunchDims one;
        one.grid[0] = 1;
        one.block[0] = kFusedThreads;
        f.final->launch(one, s, params, LaunchSite{"cu.fuse", 0});
        ++monitor_.ledger.fused_kernels;
        if (partials) partials->record_use(s);
      }
      return true;
    }
  }
  if (kernels_->warned.insert(why).second) {
    std::fprintf(stderr, "culua: cu.fuse: a group of %zu operations runs one by one: %s\n", g.count,
                 why.c_str());
  }
  return false;
}

void Recorder::finish(bool elide) {
  finishing_ = true;
  if (!elide) scratch_.clear();
  struct Reset {
    bool& f;
    ~Reset() { f = false; }
  } reset{finishing_};
  flush();
}

std::vector<Span> Recorder::dead_after(const Group& g) const {
  std::vector<Span> dead;
  if (!finishing_) return dead;
  // Reads after the group's body and reduction (its post-map included).
  const size_t from = g.reduces ? g.reduce_at() + 1 : g.first + g.count;
  for (const Span& sp : scratch_) {
    bool read = false;
    for (size_t i = from; i < tape_.entries.size() && !read; ++i) {
      const Entry& e = tape_.entries[i];
      if (e.reduce >= 0) {
        read = span_of(tape_.reduces[static_cast<size_t>(e.reduce)].in).overlaps(sp);
        continue;
      }
      for (int k = 0; k < elementwise_inputs(e.call); ++k) {
        if (!e.call.in[k].is_scalar() && span_of(e.call.in[k].view).overlaps(sp)) read = true;
      }
    }
    if (!read) dead.push_back(sp);
  }
  return dead;
}

void Recorder::flush_before_free() noexcept {
  freeing_ = true;
  struct Reset {
    bool& f;
    ~Reset() { f = false; }
  } reset{freeing_};
  try {
    flush();
  } catch (const std::exception&) {  // flush() calls no Lua: only C++ errors reach here
    if (!failed_) failed_ = std::current_exception();
  }
}

}  // namespace culua::detail::fuse
