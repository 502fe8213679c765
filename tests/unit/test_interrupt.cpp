// Interruptible waits for the device (core/base/interrupt.hpp) on the host backend: a flag
// requested from another thread ends a wait within milliseconds with Error(Interrupted), queued
// work goes on, and nothing it uses is freed or left half-done.
#include "helpers.hpp"

#include <atomic>
#include <optional>
#include <thread>

#include "core/base/interrupt.hpp"
#include "host/host_stream.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

// Requests `flag` from another thread after `delay_ms`; remembers when.
class DelayedRequest {
 public:
  DelayedRequest(InterruptFlag& flag, int delay_ms)
      : thread_([this, &flag, delay_ms] {
          std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
          requested_at_ = Clock::now();
          flag.request();
        }) {}
  ~DelayedRequest() { join(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // Milliseconds from the request to now.
  double ms_since_request() const { return ms_since(requested_at_); }

 private:
  Clock::time_point requested_at_{};
  std::thread thread_;
};

uint64_t tasks_enqueued(Stream& s) {
  auto* q = static_cast<host::WorkQueue*>(s.native_handle());
  std::lock_guard lock(q->m);
  return q->enqueued;
}

// Limits for a loaded CI machine; the waits typically see the flag within a fraction of a ms.
constexpr double kLatencyLimitMs = 100;

}  // namespace

TEST_CASE("interrupt: stream synchronize throws quickly, queued work keeps its buffer",
          "[interrupt][host]") {
  Runtime rt(host_options());
  host::HostBackend& hb = host_backend(rt);
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  const uint64_t live_before = hb.live_device_bytes();
  constexpr int64_t n = 1 << 16;
  std::optional<Array> a =
      full(rt, Shape{n}, DType::F32, Scalar::real(1.0), Location::Device, s.get());
  sleep(rt, 0.5, s.get());
  fill(rt, *a, Scalar::real(2.0), s.get());  // runs after the sleep, writes the buffer
  std::atomic<float> seen{0};
  const auto* data = static_cast<const float*>(a->data());
  dynamic_cast<host::HostStream&>(*s).enqueue([data, &seen] { seen = data[0] + data[n - 1]; });

  InterruptFlag flag;
  const auto t0 = Clock::now();
  DelayedRequest request(flag, 50);
  double latency_ms = 0;
  {
    InterruptScope scope(&flag);
    const std::string msg = error_message_of([&] { s->synchronize(); });
    latency_ms = request.ms_since_request();
    CHECK(msg.find("interrupted") != std::string::npos);
  }
  request.join();
  CHECK(ms_since(t0) < 400);
  CHECK(latency_ms < kLatencyLimitMs);
  CHECK_FALSE(s->query());  // the sleep and the fill are still queued

  a.reset();  // released stream-ordered: after the fill and the read
  CHECK(hb.live_device_bytes() > live_before);
  s->synchronize();  // no flag in scope: the native blocking wait
  CHECK(seen.load() == 4.0f);
  CHECK(hb.live_device_bytes() == live_before);
}

TEST_CASE("interrupt: waits with a flag in scope and none requested wait for the work",
          "[interrupt][host]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  InterruptFlag flag;
  InterruptScope scope(&flag);
  const auto t0 = Clock::now();
  sleep(rt, 0.1, s.get());
  s->synchronize();
  CHECK(ms_since(t0) >= 95);
  CHECK(s->query());
  // Short waits stay short (they spin before they sleep).
  auto e = rt.backend().create_event(0, false);
  const auto t1 = Clock::now();
  for (int i = 0; i < 200; ++i) {
    e->record(*s);
    e->synchronize();
    s->synchronize();
  }
  CHECK(ms_since(t1) < 1000);
}

TEST_CASE("interrupt: a flag requested before the wait ends it at once, idle streams do not throw",
          "[interrupt][host]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  InterruptFlag flag;
  flag.request();
  InterruptScope scope(&flag);
  CHECK(error_kind_of([&] { s->synchronize(); }) == kNoError);  // nothing to wait for
  sleep(rt, 0.3, s.get());
  const auto t0 = Clock::now();
  CHECK(error_kind_of([&] { s->synchronize(); }) == ErrorKind::Interrupted);
  CHECK(ms_since(t0) < kLatencyLimitMs);
  flag.clear();
  s->synchronize();
  CHECK(s->query());
}

TEST_CASE("interrupt: event, device and runtime synchronization", "[interrupt][host]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto e = rt.backend().create_event(0, true);
  auto start = rt.backend().create_event(0, true);
  InterruptFlag flag;
  InterruptScope scope(&flag);
  start->record(*s);
  sleep(rt, 0.3, s.get());
  e->record(*s);

  DelayedRequest r1(flag, 20);
  CHECK(error_kind_of([&] { e->synchronize(); }) == ErrorKind::Interrupted);
  CHECK(r1.ms_since_request() < kLatencyLimitMs);
  r1.join();
  flag.clear();

  DelayedRequest r2(flag, 20);
  CHECK(error_kind_of([&] { start->elapsed_ms(*e); }) == ErrorKind::Interrupted);
  CHECK(r2.ms_since_request() < kLatencyLimitMs);
  r2.join();
  flag.clear();

  DelayedRequest r3(flag, 20);
  CHECK(error_kind_of([&] { rt.synchronize(); }) == ErrorKind::Interrupted);
  CHECK(r3.ms_since_request() < kLatencyLimitMs);
  r3.join();
  flag.clear();

  rt.synchronize();
  CHECK(e->query());
  CHECK(start->elapsed_ms(*e) >= 290);
}

TEST_CASE("interrupt: reads of device memory leave no copy queued into host memory",
          "[interrupt][host]") {
  Runtime rt(host_options());
  Stream& s = rt.current_stream();
  const Array a = arange(rt, Scalar::integer(0), Scalar::integer(1000), Scalar::integer(1),
                         DType::F32, Location::Device);
  const Array h = to_location(rt, a, Location::Pageable);
  InterruptFlag flag;
  InterruptScope scope(&flag);
  sleep(rt, 0.3, &s);
  const uint64_t queued = tasks_enqueued(s);

  DelayedRequest r1(flag, 20);
  CHECK(error_kind_of([&] { read_contiguous(rt, a); }) == ErrorKind::Interrupted);
  CHECK(r1.ms_since_request() < kLatencyLimitMs);
  r1.join();
  flag.clear();

  // An element read queues its copy behind the work (one round trip), into the runtime's pinned
  // staging memory, never into the caller's: interrupted, it leaves that copy, the event marking
  // the staging memory and the staging memory's free (which waits for the copy) queued.
  const Array element = a.with_layout(a.layout().select(7));
  const uint64_t before_element = tasks_enqueued(s);
  DelayedRequest r2(flag, 20);
  CHECK(error_kind_of([&] { read_element(rt, element); }) == ErrorKind::Interrupted);
  CHECK(r2.ms_since_request() < kLatencyLimitMs);
  r2.join();
  flag.clear();
  const uint64_t element_tasks = tasks_enqueued(s) - before_element;
  CHECK(element_tasks >= 1);
  CHECK(element_tasks <= 3);

  DelayedRequest r3(flag, 20);
  CHECK(error_kind_of([&] { copy(rt, h, a); }) == ErrorKind::Interrupted);
  r3.join();
  flag.clear();

  DelayedRequest r4(flag, 20);
  CHECK(error_kind_of([&] { copy(rt, a, h); }) == ErrorKind::Interrupted);
  r4.join();
  flag.clear();

  // The other interrupted reads and copies queued nothing.
  CHECK(tasks_enqueued(s) == queued + element_tasks);
  CHECK(read_element(rt, element).as_double() == 7.0);
  const std::vector<unsigned char> bytes = read_contiguous(rt, a);
  float last = 0;
  std::memcpy(&last, bytes.data() + 999 * sizeof(float), sizeof last);
  CHECK(last == 999.0f);
}

// The sandbox's wall-time limit on waits (set_wait_deadline): without any interrupt flag in scope
// a wait polls and throws Error(Limit) with the sandbox's message once the deadline passes.
TEST_CASE("interrupt: a wait deadline ends waits with the limit error", "[interrupt][host]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  sleep(rt, 2.0, s.get());
  const std::string message = "the sandbox's time limit of 0.1 s was exceeded";
  const auto t0 = Clock::now();
  set_wait_deadline(steady_now_ns() + 100'000'000, &message);
  CHECK(wait_deadline_set());
  CHECK(error_kind_of([&] { s->synchronize(); }) == ErrorKind::Limit);
  CHECK(error_message_of([&] { s->synchronize(); }) == message);
  CHECK(error_kind_of([&] { check_interrupt(); }) == ErrorKind::Limit);
  set_wait_deadline(0, nullptr);
  CHECK_FALSE(wait_deadline_set());
  CHECK(ms_since(t0) < 1000);
  check_interrupt();         // no deadline: nothing to throw
  rt.abandon_queued_work();  // the sleep ends at once
}

// The sandbox's quota on array memory (Runtime::set_memory_quota): counted from allocation to
// release, garbage collected once before a request is refused.
TEST_CASE("interrupt: the memory quota counts live buffers", "[interrupt][host]") {
  Runtime rt(host_options());
  rt.set_memory_quota(uint64_t{1} << 20);
  auto a = rt.allocate(600 << 10, Location::Device, 0, nullptr);
  CHECK(rt.memory_quota()->used.load() == 600u << 10);
  int collections = 0;
  std::shared_ptr<Buffer> dropped = rt.allocate(300 << 10, Location::Pageable, 0, nullptr);
  rt.collect_garbage = [&] {
    ++collections;
    dropped.reset();  // an unreachable array's release
  };
  CHECK(rt.memory_quota()->used.load() == 900u << 10);
  auto b = rt.allocate(200 << 10, Location::Device, 0, nullptr);  // fits after the collection
  CHECK(collections == 1);
  CHECK(rt.memory_quota()->used.load() == 800u << 10);
  const std::string msg =
      error_message_of([&] { rt.allocate(300 << 10, Location::Device, 0, nullptr); });
  CHECK(msg ==
        "the sandbox's memory quota is exhausted: requested 300.0 KiB, 800.0 KiB of the quota of "
        "1 MiB in use");
  CHECK(error_kind_of([&] { rt.allocate(300 << 10, Location::Device, 0, nullptr); }) ==
        ErrorKind::OutOfMemory);
  a->release();
  CHECK(rt.memory_quota()->used.load() == 200u << 10);
  a.reset();  // released once only
  CHECK(rt.memory_quota()->used.load() == 200u << 10);
  auto c = rt.allocate(800 << 10, Location::Device, 0, nullptr);
  CHECK(rt.memory_quota()->used.load() == 1000u << 10);
  rt.collect_garbage = nullptr;
}
