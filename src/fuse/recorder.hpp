// cu.fuse's recorder (docs/fusion.md): while it is installed on a runtime, the elementwise
// operations queued on the runtime's backend are taken instead of launched, and flushed as
// groups (fuse/plan.hpp) when the fused function returns, or earlier when anything else is queued,
// waited for, freed or ordered by an event.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/runtime/monitor.hpp"
#include "fuse/kernel_cache.hpp"
#include "fuse/plan.hpp"

namespace culua::detail {
class Runtime;
}

namespace culua::detail::fuse {

class Recorder final : public OpRecorder {
 public:
  // Installs itself on `rt` (and as this thread's recorder) until destroyed. With `explain`, each
  // flush adds its groups to explained(). With `kernels`, groups of several operations on a CUDA
  // device run as generated kernels compiled there (else each operation runs as it is); with
  // `generate_single`, groups of one operation too (else they run as the precompiled kernel).
  Recorder(Runtime& rt, bool explain, KernelCache* kernels = nullptr, bool generate_single = false);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  bool record(const ElementwiseCall& c, Stream& s) override;
  bool record_reduce(const ReduceCall& c, Stream& s) override;
  void flush() override;
  void flush_before_free() noexcept override;
  // The flush at the fused function's end: only then may values of scratch arrays that nothing
  // later in the tape reads go unstored (fn's code after an early flush could still read them).
  // Any other flush of recorded operations is early (counted; under cu.strict it raises, after
  // running them). `elide`: false after an error in fn (its code did not finish).
  void finish(bool elide = true);
  // Memory whose values after the fused call do not matter (cu.fuse's and cu.graph's `scratch`).
  void set_scratch(std::vector<Span> spans) { scratch_ = std::move(spans); }

  const std::string& explained() const { return explained_; }
  // Every flush adds the source of each group of several operations it generates, or would
  // generate on a CUDA device (cu.fuse.source: also on the host backend).
  void keep_sources(std::vector<std::string>* sources) { sources_ = sources; }

 private:
  void run(const Group& g, PreparedGroup* keep);
  void count_kernel(size_t ops);
  bool run_generated(const Group& g, PreparedGroup* keep);
  void launch_prepared(const PreparedGroup& p, const std::vector<Entry>& entries, Stream& s);
  bool cacheable() const;
  CachedFlush* find_flush();
  std::vector<Span> dead_after(const Group& g) const;
  void note_site();
  std::string covered_lines(const Group& g) const;

  Runtime& rt_;
  Monitor& monitor_;
  KernelCache* kernels_;
  OpRecorder* previous_thread_recorder_;
  bool explain_;
  bool generate_single_;
  bool flushing_ = false;
  bool finishing_ = false;
  bool freeing_ = false;
  std::vector<std::string> sites_;  // under a trace: each entry's script line
  std::vector<Span> scratch_;
  Tape tape_;
  std::vector<std::shared_ptr<Stream>> streams_;  // keeps the tape's streams alive
  std::exception_ptr failed_;                     // of a flush before a free
  std::string explained_;
  std::vector<std::string>* sources_ = nullptr;
};

}  // namespace culua::detail::fuse
