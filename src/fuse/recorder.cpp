#include "fuse/recorder.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "core/backend/elementwise_group.hpp"
#include "core/base/error.hpp"
#include "core/model/buffer.hpp"
#include "core/model/stream.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/runtime.hpp"

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
    if (g.axis) group.reduce_in = &g.axis_in;
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
  tape_.entries.emplace_back(c, &s);
  if (monitor_.sites_wanted > 0) note_site();
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
  if (monitor_.sites_wanted > 0) note_site();
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
  // A tape with the structure of a recent flush's runs that flush's plan and kernels again.
  const bool cache = cacheable();
  if (CachedFlush* c = cache ? find_flush() : nullptr) {
    for (size_t i = 0; i < c->groups.size(); ++i) {
      const Group& g = c->groups[i];
      const PreparedGroup& p = c->prepared[i];
      if (p.generated) {
        launch_prepared(p, tape_.entries, *tape_.entries[g.first].stream);
        monitor_.ledger.fused_kernels += p.reduces ? 2 : 1;
        ++monitor_.ledger.fused_memory_hits;
      } else {
        run_group(rt_.backend(), tape_, g);
      }
      ++monitor_.ledger.fused_groups;
      monitor_.ledger.fused_ops += g.count;
    }
  } else {
    std::vector<Group> groups = plan_groups(tape_);
    if (explain_) explained_ += explain(tape_, groups);
    std::vector<PreparedGroup> prepared(cache ? groups.size() : 0);
    for (size_t i = 0; i < groups.size(); ++i) {
      const Group& g = groups[i];
      std::string covers;
      if (monitor_.sites_wanted > 0 && !sites_.empty()) covers = covered_lines(g);
      struct Covers {
        Monitor& m;
        ~Covers() { m.fused_covers = nullptr; }
      } reset{monitor_};
      monitor_.fused_covers = covers.empty() ? nullptr : covers.c_str();
      run(g, cache ? &prepared[i] : nullptr);
      ++monitor_.ledger.fused_groups;
      monitor_.ledger.fused_ops += g.count;
    }
    if (cache) {
      std::vector<CachedFlush>& flushes = kernels_->flushes;
      CachedFlush* slot = nullptr;
      if (flushes.size() < KernelCache::kCachedFlushes) {
        slot = &flushes.emplace_back();
      } else {
        slot = &*std::min_element(
            flushes.begin(), flushes.end(),
            [](const CachedFlush& a, const CachedFlush& b) { return a.used < b.used; });
      }
      slot->tape = tape_;
      slot->groups = std::move(groups);
      slot->prepared = std::move(prepared);
      slot->final = finishing_;
      slot->generate_single = generate_single_;
      slot->scratch = scratch_;
      slot->used = ++kernels_->flush_clock;
    }
  }
  if (!early) return;
  ++monitor_.ledger.fused_early_flushes;
  if (explain_) explained_ += "(an early flush: the operations above ran before fn's end)\n";
  if (monitor_.strict > 0 && !freeing_) {
    const std::string site = monitor_.site ? monitor_.site() : std::string();
    fail(ErrorKind::Strict,
         "{}an operation inside cu.fuse that is not recorded (a copy, a wait, an event, a "
         "reduction on another stream, ...) ran the operations recorded before it: an early "
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

void Recorder::run(const Group& g, PreparedGroup* keep) {
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
  if (kernels_ && generate && backend.kind() == BackendKind::Cuda && run_generated(g, keep)) return;
  run_group(backend, tape_, g);
}

// Runs `g` as its generated kernel(s); false (after one warning per reason) when it cannot.
// Runs `g` as its generated kernel(s), kept in `keep` when given; false (after one warning per
// reason) when it cannot.
bool Recorder::run_generated(const Group& g, PreparedGroup* keep) {
  Backend& backend = rt_.backend();
  const std::vector<Span> dead = dead_after(g);
  const KernelCalls kc(tape_, g, dead);
  const GroupCalls& gc = kc.group;
  FusedKernel k = fuse::generate(gc, false);
  std::string why = k.why;
  Stream& s = *tape_.entries[g.first].stream;
  const auto source = [&] { return fuse::generate(gc, true).kernel; };
  if (k.ok) {
    if (FusedFunctions f = kernels_->functions(backend, k, s.device(), source, why); f.main) {
      PreparedGroup local;
      PreparedGroup& p = keep ? *keep : local;
      p.generated = true;
      p.f = std::move(f);
      p.params = std::move(k.params);
      p.scalar_at = k.scalar_at;
      p.reduces = k.reduces;
      p.reduce_at = k.reduce_at;
      p.acc_bytes = k.acc_bytes;
      p.blocks = k.grid_x;
      p.grid_y = k.grid_y;
      p.final_blocks = k.final_blocks;
      p.partial_count = k.partials;
      // Where each scalar of the block comes from, in generate()'s order: the element calls (the
      // prologue's, then the body's), then the post-map's.
      const auto scalars_of = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) {
          const ElementwiseCall& c = tape_.entries[i].call;
          for (int o = 0; o < elementwise_inputs(c); ++o) {
            if (c.in[o].is_scalar())
              p.scalars.emplace_back(static_cast<uint32_t>(i), static_cast<uint8_t>(o));
          }
        }
      };
      scalars_of(g.first, g.body_first() + g.body_count());
      if (g.reduces) scalars_of(g.reduce_at() + 1, g.first + g.count);
      launch_prepared(p, tape_.entries, s);
      count_kernel(g.count);
      if (k.reduces) ++monitor_.ledger.fused_kernels;
      if (explain_ && k.elided > 0) {
        explained_ += fmt::format("  {} value{} of scratch arrays computed and not stored\n",
                                  k.elided, k.elided == 1 ? "" : "s");
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

// Launches a prepared group with the scalars of `entries` (the tape being flushed).
void Recorder::launch_prepared(const PreparedGroup& p, const std::vector<Entry>& entries,
                               Stream& s) {
  thread_local std::vector<unsigned char> block;
  block.assign(p.params.begin(), p.params.end());
  for (size_t i = 0; i < p.scalars.size(); ++i) {
    const ElementOperand& o = entries[p.scalars[i].first].call.in[p.scalars[i].second];
    std::memcpy(block.data() + p.scalar_at + 16 * i, o.scalar, 16);
  }
  LaunchDims dims;
  dims.grid[0] = static_cast<uint32_t>(p.blocks);
  dims.grid[1] = static_cast<uint32_t>(p.grid_y);
  dims.block[0] = kFusedThreads;
  Buffer* partials = nullptr;
  if (p.reduces) {
    // The partial results: the capture's scratch (it lives as long as the graph, whose launches
    // are serialized), else memory the prepared group keeps for its next run on this stream
    // (work on one stream runs in order; freed in stream order when the group goes).
    const size_t bytes = static_cast<size_t>(p.partial_count) * p.acc_bytes;
    void* ptr = nullptr;
    if (Capture* c = s.capture()) {
      ptr = c->scratch(s, bytes);
    } else {
      if (!p.partials || p.partials_stream != s.id() || p.partials->freed() ||
          p.partials->bytes() < bytes) {
        p.partials = rt_.allocate(bytes, Location::Device, s.device(), &s);
        p.partials_stream = s.id();
      }
      partials = p.partials.get();
      ptr = partials->data();
    }
    std::memcpy(block.data() + p.reduce_at, &ptr, sizeof ptr);
    std::memcpy(block.data() + p.reduce_at + 16, &p.blocks, sizeof p.blocks);
  }
  void* params[] = {block.data()};
  p.f.main->launch(dims, s, params, LaunchSite{"cu.fuse", 0});
  if (p.reduces) {
    LaunchDims one;
    one.grid[0] = static_cast<uint32_t>(p.final_blocks);
    one.block[0] = kFusedThreads;
    p.f.final->launch(one, s, params, LaunchSite{"cu.fuse", 0});
    if (partials) partials->record_use(s);
  }
}

// Flushes whose plans are kept (both backends; on CUDA with their generated kernels): unless
// something asks for the plan's text (explain, cu.fuse.source) or each group's script lines (a
// trace).
bool Recorder::cacheable() const {
  return kernels_ && !explain_ && !sources_ && monitor_.sites_wanted == 0;
}

namespace {

bool same_view_exactly(const StridedView& a, const StridedView& b) {
  if (a.data != b.data || a.dtype != b.dtype || a.ndim != b.ndim || a.size != b.size) return false;
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

// The same operation on the same views and streams, with scalars in the same places (their
// values may differ).
bool same_structure(const Tape& ta, const Entry& a, const Tape& tb, const Entry& b) {
  if (a.stream != b.stream || (a.reduce >= 0) != (b.reduce >= 0)) return false;
  if (a.reduce >= 0) {
    const ReduceCall& x = ta.reduces[static_cast<size_t>(a.reduce)];
    const ReduceCall& y = tb.reduces[static_cast<size_t>(b.reduce)];
    return x.op == y.op && x.full == y.full && x.correction == y.correction &&
           same_view_exactly(x.in, y.in) && same_view_exactly(x.out, y.out);
  }
  const ElementwiseCall& x = a.call;
  const ElementwiseCall& y = b.call;
  if (x.kind != y.kind || x.op != y.op || x.compute != y.compute ||
      !same_view_exactly(x.out, y.out))
    return false;
  for (int i = 0; i < elementwise_inputs(x); ++i) {
    if (x.in[i].is_scalar() != y.in[i].is_scalar()) return false;
    if (!x.in[i].is_scalar() && !same_view_exactly(x.in[i].view, y.in[i].view)) return false;
  }
  return true;
}

bool same_spans(const std::vector<Span>& a, const std::vector<Span>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].lo != b[i].lo || a[i].hi != b[i].hi) return false;
  }
  return true;
}

}  // namespace

CachedFlush* Recorder::find_flush() {
  for (CachedFlush& c : kernels_->flushes) {
    if (c.tape.entries.size() != tape_.entries.size() || c.final != finishing_ ||
        c.generate_single != generate_single_ || !same_spans(c.scratch, scratch_))
      continue;
    bool same = true;
    for (size_t i = 0; i < tape_.entries.size() && same; ++i)
      same = same_structure(c.tape, c.tape.entries[i], tape_, tape_.entries[i]);
    if (same) {
      c.used = ++kernels_->flush_clock;
      return &c;
    }
  }
  return nullptr;
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
