#include "host/host_stream.hpp"

#include <algorithm>
#include <exception>

#include "core/base/error.hpp"

namespace culua::detail::host {

void Health::fail(const std::string& what) noexcept {
  std::lock_guard lock(m);
  if (!poisoned.load()) message = what;
  poisoned.store(true);
}

void Health::abandon() noexcept {
  {
    std::lock_guard lock(m);
    abandoned.store(true);
  }
  abandoning.notify_all();
}

void Health::cut_short() noexcept {
  {
    std::lock_guard lock(m);
    cut.fetch_add(1);
  }
  abandoning.notify_all();
}

kernels::host::WorkStop Health::stop_for_new_task() const noexcept {
  kernels::host::WorkStop s;
  s.abandoned = &abandoned;
  s.cut = &cut;
  s.epoch = cut.load();
  return s;
}

void Health::sleep(double seconds) {
  seconds = std::min(seconds, 1e9);  // about 30 years: beyond it the deadline would overflow
  const kernels::host::WorkStop* stop = kernels::host::current_work_stop();
  std::unique_lock lock(m);
  abandoning.wait_for(lock, std::chrono::duration<double>(seconds),
                      [&] { return abandoned.load() || (stop && stop->requested()); });
}

void run_worker(const std::shared_ptr<WorkQueue>& q) {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(q->m);
      q->work_ready.wait(lock, [&] { return !q->tasks.empty() || q->closing; });
      if (q->tasks.empty()) {
        q->finished = true;
        q->work_done.notify_all();
        return;
      }
      task = std::move(q->tasks.front());
      q->tasks.pop_front();
    }
    // A failed task poisons the backend, as a sticky CUDA error does. Later tasks still run so
    // that events complete and nothing waits forever. Abandoned work is dropped unrun; frees and
    // waits for other streams still run, in order, so nothing is freed while in use.
    // Work cut short is dropped alike; a task that stops inside (WorkStopped) leaves its outputs
    // as far as it got, and poisons nothing.
    if (task.work && !task.bookkeeping && task.stop.requested()) task.work = nullptr;
    if (task.work) {
      const kernels::host::WorkStopScope scope(task.bookkeeping ? nullptr : &task.stop);
      try {
        task.work();
      } catch (const kernels::host::WorkStopped&) {
        // Cut short or abandoned: nothing failed.
      } catch (const std::exception& e) {
        q->health->fail(std::string("host backend task failed: ") + e.what());
      }
      task.work = nullptr;  // release what the task captured before reporting completion
    }
    const auto reached = std::chrono::steady_clock::now();
    {
      // Count the task and complete its event together, so that whoever wakes first (a stream
      // synchronize or an event wait) sees both.
      std::lock_guard lock(q->m);
      ++q->completed;
      if (task.event) {
        EventState& st = *task.event;
        std::lock_guard event_lock(st.m);
        st.outstanding.erase(task.generation);
        if (task.generation == st.recorded) st.when = reached;
      }
    }
    q->work_done.notify_all();
    if (task.event) task.event->done.notify_all();
  }
}

HostStream::HostStream(std::shared_ptr<WorkQueue> queue, int device, StreamPriority p, uint64_t id)
    : Stream(device, p, id), queue_(std::move(queue)) {}

HostStream::~HostStream() {
  {
    std::lock_guard lock(queue_->m);
    queue_->closing = true;
  }
  queue_->work_ready.notify_one();
}

void HostStream::enqueue(std::function<void()> work, bool bookkeeping) {
  if (Capture* c = capture()) {
    static_cast<HostCapture&>(*c->backend_state).tasks.push_back(std::move(work));
    return;
  }
  {
    std::lock_guard lock(queue_->m);
    queue_->tasks.push_back(
        Task{std::move(work), nullptr, 0, bookkeeping, queue_->health->stop_for_new_task()});
    ++queue_->enqueued;
  }
  queue_->work_ready.notify_one();
}

void HostStream::enqueue_event(std::shared_ptr<EventState> event, uint64_t generation) {
  {
    std::lock_guard lock(queue_->m);
    queue_->tasks.push_back(Task{nullptr, std::move(event), generation, true, {}});
    ++queue_->enqueued;
  }
  queue_->work_ready.notify_one();
}

void HostStream::do_synchronize() {
  std::unique_lock lock(queue_->m);
  const uint64_t target = queue_->enqueued;
  queue_->work_done.wait(lock, [&] { return queue_->completed >= target; });
}

bool HostStream::do_wait_for(std::chrono::microseconds timeout) {
  std::unique_lock lock(queue_->m);
  const uint64_t target = queue_->enqueued;
  return queue_->work_done.wait_for(lock, timeout, [&] { return queue_->completed >= target; });
}

bool HostStream::do_query() {
  std::lock_guard lock(queue_->m);
  return queue_->completed >= queue_->enqueued;
}

void HostStream::do_wait(Event& e) {
  // Inside a capture the recorded tasks already run in an order that respects the wait.
  if (capture()) return;
  auto& he = dynamic_cast<HostEvent&>(e);
  std::shared_ptr<EventState> st = he.state();
  uint64_t generation;
  {
    std::lock_guard lock(st->m);
    generation = st->recorded;
  }
  enqueue(
      [st, generation] {
        std::unique_lock lock(st->m);
        st->done.wait(lock, [&] { return st->complete(generation); });
      },
      true);
}

void HostEvent::do_record(Stream& s) {
  auto& hs = dynamic_cast<HostStream&>(s);
  if (s.capture()) return;  // a point inside the capture, for other streams to join at
  uint64_t generation;
  {
    std::lock_guard lock(state_->m);
    generation = ++state_->recorded;
    state_->outstanding.insert(generation);
  }
  hs.enqueue_event(state_, generation);
}

void HostEvent::do_synchronize() {
  std::unique_lock lock(state_->m);
  const uint64_t target = state_->recorded;
  state_->done.wait(lock, [&] { return state_->complete(target); });
}

bool HostEvent::do_wait_for(std::chrono::microseconds timeout) {
  std::unique_lock lock(state_->m);
  const uint64_t target = state_->recorded;
  return state_->done.wait_for(lock, timeout, [&] { return state_->complete(target); });
}

bool HostEvent::do_query() {
  std::lock_guard lock(state_->m);
  return state_->complete(state_->recorded);
}

double HostEvent::steady_time() {
  synchronize();
  std::lock_guard lock(state_->m);
  return std::chrono::duration<double>(state_->when.time_since_epoch()).count();
}

double HostEvent::do_elapsed_ms(Event& later) {
  auto& other = dynamic_cast<HostEvent&>(later);
  do_synchronize();
  other.do_synchronize();
  std::chrono::steady_clock::time_point a, b;
  {
    std::lock_guard lock(state_->m);
    a = state_->when;
  }
  {
    std::lock_guard lock(other.state_->m);
    b = other.state_->when;
  }
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace culua::detail::host
