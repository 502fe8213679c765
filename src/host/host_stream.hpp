// The host backend's streams and events: each stream is a worker thread draining a FIFO of tasks,
// so work queued on it runs asynchronously, in order, as on a GPU.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "core/model/stream.hpp"
#include "core/runtime/capture.hpp"
#include "kernels/host_pool.hpp"

namespace culua::detail::host {

// State shared by a backend and its workers. A task that throws poisons the backend. Work that
// was abandoned (the process is leaving early: an error exit, os.exit) is dropped: workers skip
// every task not yet started but bookkeeping (completing events, so that no wait hangs), and a
// running task stops at its next check (kernels::host::check_stop, a sleep at once). Work cut
// short (an entry into Lua ended by a sandbox limit or an interrupt) is treated so too, but only
// the tasks queued before the cut: the backend stays usable.
struct Health {
  std::mutex m;
  std::atomic<bool> poisoned{false};
  std::string message;
  std::atomic<bool> abandoned{false};
  std::atomic<uint64_t> cut{0};        // cuts so far; a task is cut short when it moved on
  std::condition_variable abandoning;  // wakes sleeping tasks (waits on m)
  void fail(const std::string& what) noexcept;
  void abandon() noexcept;
  void cut_short() noexcept;
  // What stops a task queued now.
  kernels::host::WorkStop stop_for_new_task() const noexcept;
  // cu.sleep's task: sleeps `seconds`, or until its work is abandoned or cut short.
  void sleep(double seconds);
};

struct EventState;

// One entry of a stream's queue: work to run, or an event to complete when the worker reaches it
// (after the queue counts everything before it as done, so that a stream whose last event has
// completed also reports itself idle).
struct Task {
  std::function<void()> work;
  std::shared_ptr<EventState> event;
  uint64_t generation = 0;
  bool bookkeeping = false;  // a free or a wait for another stream: runs even when abandoned
  kernels::host::WorkStop stop;
};

// State shared by a stream's handle and its worker thread (which outlives the handle until the
// queue is drained).
struct WorkQueue {
  std::mutex m;
  std::condition_variable work_ready;
  std::condition_variable work_done;
  std::deque<Task> tasks;
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  bool closing = false;   // the handle is gone: drain, then exit
  bool finished = false;  // the worker has exited
  std::shared_ptr<Health> health;
};

// The worker thread's loop.
void run_worker(const std::shared_ptr<WorkQueue>& q);

// A capture in progress on host streams: the tasks queued on its streams, in the order they were
// queued (a valid order of the captured work: each was queued after what it depends on). A graph
// launch runs them in that order on the launching stream's worker.
struct HostCapture final : CaptureState {
  std::vector<std::function<void()>> tasks;
};

class HostStream final : public Stream {
 public:
  HostStream(std::shared_ptr<WorkQueue> queue, int device, StreamPriority p, uint64_t id);
  ~HostStream() override;

  // Queues `work`, or records it when the stream is capturing. Bookkeeping (freeing memory,
  // waiting for another stream) still runs once work is abandoned, so that memory is freed only
  // after what still runs on other streams is done with it.
  void enqueue(std::function<void()> work, bool bookkeeping = false);
  void enqueue_event(std::shared_ptr<EventState> event, uint64_t generation);
  void* native_handle() const override { return queue_.get(); }

 protected:
  bool do_query() override;
  void do_wait(Event& e) override;
  void do_synchronize() override;
  bool do_wait_for(std::chrono::microseconds timeout) override;
  bool timed_wait() const override { return true; }

 private:
  std::shared_ptr<WorkQueue> queue_;
};

// Completion state of an event. Each record is a generation; a generation completes when its
// stream's worker reaches it. Generations recorded on different streams can complete out of
// order, so completion is tracked per generation: a wait for generation g is not released by a
// later record that completes first.
struct EventState {
  std::mutex m;
  std::condition_variable done;
  uint64_t recorded = 0;                         // the latest generation
  std::set<uint64_t> outstanding;                // recorded, not yet completed
  std::chrono::steady_clock::time_point when{};  // when the latest generation completed

  bool complete(uint64_t generation) const { return outstanding.count(generation) == 0; }
};

class HostEvent final : public Event {
 public:
  HostEvent(int device, bool timing)
      : Event(device, timing), state_(std::make_shared<EventState>()) {}
  const std::shared_ptr<EventState>& state() const { return state_; }
  double steady_time() override;

 protected:
  void do_record(Stream& s) override;
  void do_synchronize() override;
  bool do_query() override;
  double do_elapsed_ms(Event& later) override;
  bool do_wait_for(std::chrono::microseconds timeout) override;
  bool timed_wait() const override { return true; }

 private:
  std::shared_ptr<EventState> state_;
};

}  // namespace culua::detail::host
