// cu.fuse's recorder (docs/fusion.md): while it is installed on a runtime, the elementwise
// operations queued on the runtime's backend are taken instead of launched, and flushed as
// groups (fuse/plan.hpp) when the fused function returns, or earlier when anything else is queued,
// waited for, freed or ordered by an event.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/monitor.hpp"
#include "fuse/plan.hpp"

namespace culua::detail {
class Runtime;
}

namespace culua::detail::fuse {

class Recorder final : public OpRecorder {
 public:
  // Installs itself on `rt` (and as this thread's recorder) until destroyed. With `explain`, each
  // flush adds its groups to explained().
  Recorder(Runtime& rt, bool explain);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  bool record(const ElementwiseCall& c, Stream& s) override;
  void flush() override;
  void flush_before_free() noexcept override;

  const std::string& explained() const { return explained_; }

 private:
  Runtime& rt_;
  Monitor& monitor_;
  OpRecorder* previous_thread_recorder_;
  bool explain_;
  bool flushing_ = false;
  std::vector<Entry> tape_;
  std::vector<std::shared_ptr<Stream>> streams_;  // keeps the tape's streams alive
  std::exception_ptr failed_;                     // of a flush before a free
  std::string explained_;
};

}  // namespace culua::detail::fuse
