// Graphs (cu.graph): the work a function queues, captured once and launched many times. A graph
// is a recorded sequence of queued work with the buffers it keeps alive; each backend captures and
// replays it its own way (CUDA stream capture and executable graphs; the host backend's recorded
// tasks, replayed on the launching stream's worker).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/model/buffer.hpp"
#include "core/runtime/capture.hpp"
#include "core/runtime/monitor.hpp"

namespace culua::detail {

class Runtime;

enum class GraphUpdate : uint8_t { Updated, Reinstantiated };

// Random numbers in a graph: launch k draws the numbers of its capture advanced by k times the
// Philox blocks one launch draws; the global counter skips this many blocks past the capture, so
// that eager draws after it do not repeat a launch's numbers (for 2^40 blocks of launches).
inline constexpr uint64_t kRandomReserve = uint64_t{1} << 40;
std::string_view graph_update_name(GraphUpdate u);  // "updated" | "reinstantiated"

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  // Captures the work `fn` queues on `s` (and on streams that join the capture through events)
  // and instantiates it. `name` names it in messages and traces; `site` is where it was captured
  // ("run.lua:12"). An error thrown by fn, or a capture that fails, ends the capture and leaves
  // `s`, the runtime and every stream usable; the error propagates.
  static std::shared_ptr<Graph> capture(Runtime& rt, Stream& s, std::string name, std::string site,
                                        const std::function<void()>& fn);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Captures fn again on the same stream; applies the new parameters to the instantiated graph in
  // place when the topology is the same (new scalars, other arrays of the same shapes), else
  // instantiates anew. The buffers of the new capture replace the old ones.
  GraphUpdate update(const std::function<void()>& fn);

  // Queues `n` launches on `s` (a stream of the graph's device): no host work per launch beyond
  // the backend's launch call.
  void launch(Stream& s, int64_t n = 1);

  // Destroys the executable graph and drops its buffers (queued launches complete); idempotent.
  void release() noexcept;
  bool released() const { return !exec_; }
  // Throws Error(Released) when released.
  void check_alive() const;

  const std::string& name() const { return name_; }
  const std::string& label() const { return tag_->label; }
  const std::string& site() const { return site_; }
  int device() const { return device_; }
  Stream& stream() const { return *stream_; }  // the stream it was captured on
  size_t nodes() const { return nodes_; }
  double capture_ms() const { return capture_ms_; }
  double instantiate_ms() const { return instantiate_ms_; }  // of the latest instantiation
  int64_t launches() const { return launches_; }
  int64_t updates() const { return updates_; }
  int64_t reinstantiations() const { return reinstantiations_; }
  size_t buffers() const { return buffers_.size(); }
  uint64_t buffer_bytes() const;
  const Ledger& ledger_per_launch() const { return per_launch_; }
  const std::vector<std::string>& op_names() const { return op_names_; }

 private:
  Graph(Runtime& rt, Stream& s, std::string name, std::string site);
  struct Captured {
    std::unique_ptr<GraphRecording> recording;
    std::vector<std::shared_ptr<Buffer>> buffers;
    Ledger ledger;
    std::vector<std::string> op_names;
    double ms = 0;
  };
  Captured record(const std::function<void()>& fn);
  void instantiate(Captured& c);
  void adopt(Captured& c);

  Runtime& rt_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<Stream> stream_;  // the capturing stream (captures and updates)
  std::string name_;
  std::string site_;
  std::shared_ptr<GraphTag> tag_;
  std::string trace_name_;
  int device_ = 0;
  std::unique_ptr<GraphExec> exec_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
  Ledger per_launch_;
  std::vector<std::string> op_names_;
  size_t nodes_ = 0;
  double capture_ms_ = 0;
  double instantiate_ms_ = 0;
  int64_t launches_ = 0;
  int64_t updates_ = 0;
  int64_t reinstantiations_ = 0;
};

}  // namespace culua::detail
