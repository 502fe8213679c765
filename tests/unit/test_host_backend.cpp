// Host backend streams and events: asynchronous work, FIFO order, event timing, cross-stream
// waits, and the error cases of events.
#include "helpers.hpp"

#include <atomic>
#include <stdexcept>
#include <thread>

#include "host/host_stream.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

TEST_CASE("host backend: queued work is asynchronous and synchronize waits", "[host][stream]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  CHECK(s->query());
  const auto t0 = Clock::now();
  sleep(rt, 0.2, s.get());
  ev->record(*s);
  const double enqueue_ms = ms_since(t0);
  CHECK(enqueue_ms < 50);
  CHECK_FALSE(s->query());
  CHECK_FALSE(ev->query());
  s->synchronize();
  CHECK(ms_since(t0) >= 190);
  CHECK(s->query());
  CHECK(ev->query());
}

TEST_CASE("host backend: work on one stream runs in FIFO order", "[host][stream]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto& hs = dynamic_cast<host::HostStream&>(*s);
  std::vector<int> order;
  std::mutex m;
  for (int i = 0; i < 50; ++i) {
    if (i == 10) sleep(rt, 0.02, s.get());
    hs.enqueue([&order, &m, i] {
      std::lock_guard lock(m);
      order.push_back(i);
    });
  }
  s->synchronize();
  REQUIRE(order.size() == 50);
  for (int i = 0; i < 50; ++i) CHECK(order[static_cast<size_t>(i)] == i);
}

TEST_CASE("host backend: events record the time the queue reaches them", "[host][event]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto e0 = rt.backend().create_event(0, true);
  auto e1 = rt.backend().create_event(0, true);
  auto e2 = rt.backend().create_event(0, true);
  // All three records happen at (almost) the same host time; the queue reaches them 100 ms apart.
  e0->record(*s);
  sleep(rt, 0.1, s.get());
  e1->record(*s);
  sleep(rt, 0.1, s.get());
  e2->record(*s);
  const double first = e0->elapsed_ms(*e1);  // waits for both
  const double second = e1->elapsed_ms(*e2);
  CHECK(first >= 95);
  CHECK(first < 180);
  CHECK(second >= 95);
  CHECK(second < 180);
  CHECK(e0->elapsed_ms(*e2) == Approx(first + second).margin(0.001));
  CHECK(e2->elapsed_ms(*e0) < 0);
  CHECK(e0->elapsed_ms(*e0) == 0);
}

TEST_CASE("host backend: Stream::wait orders a second stream after the first",
          "[host][stream][event]") {
  Runtime rt(host_options());
  auto a = rt.backend().create_stream(0, StreamPriority::Normal);
  auto b = rt.backend().create_stream(0, StreamPriority::High);
  auto done_a = rt.backend().create_event(0, true);
  auto after_wait = rt.backend().create_event(0, true);
  const auto t0 = Clock::now();
  sleep(rt, 0.2, a.get());
  done_a->record(*a);
  b->wait(*done_a);
  after_wait->record(*b);
  CHECK(ms_since(t0) < 50);
  CHECK_FALSE(b->query());
  CHECK_FALSE(after_wait->query());
  after_wait->synchronize();
  CHECK(ms_since(t0) >= 190);
  CHECK(done_a->query());
  CHECK(done_a->elapsed_ms(*after_wait) >= 0);
  CHECK(b->query());  // its last event completed: the stream is idle
}

TEST_CASE("host backend: a wait delays only the waiting stream", "[host][stream]") {
  Runtime rt(host_options());
  auto a = rt.backend().create_stream(0, StreamPriority::Normal);
  auto b = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  auto on_a = rt.backend().create_event(0, false);
  sleep(rt, 0.2, b.get());
  ev->record(*b);
  a->wait(*ev);  // a waits for b
  auto quick = rt.backend().create_stream(0, StreamPriority::Normal);
  on_a->record(*quick);
  on_a->synchronize();
  CHECK_FALSE(b->query());
  CHECK_FALSE(a->query());
  rt.backend().synchronize_device(0);
  CHECK(a->query());
  CHECK(b->query());
}

TEST_CASE("host backend: waiting on a never-recorded event is a no-op", "[host][event]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto never = rt.backend().create_event(0, false);
  CHECK_FALSE(never->recorded());
  CHECK(never->query());
  never->synchronize();  // returns at once
  const auto t0 = Clock::now();
  s->wait(*never);
  auto after = rt.backend().create_event(0, false);
  after->record(*s);
  after->synchronize();
  CHECK(ms_since(t0) < 50);
  CHECK(s->query());  // a stream whose last event completed is idle
}

TEST_CASE("host backend: elapsed time needs two recorded timing events", "[host][event]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto t1 = rt.backend().create_event(0, true);
  auto t2 = rt.backend().create_event(0, true);
  auto plain = rt.backend().create_event(0, false);
  CHECK(error_kind_of([&] { t1->elapsed_ms(*t2); }) == ErrorKind::Value);
  t1->record(*s);
  CHECK(error_kind_of([&] { t1->elapsed_ms(*t2); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { t2->elapsed_ms(*t1); }) == ErrorKind::Value);
  plain->record(*s);
  CHECK(error_kind_of([&] { t1->elapsed_ms(*plain); }) == ErrorKind::Value);
  CHECK(error_kind_of([&] { plain->elapsed_ms(*t1); }) == ErrorKind::Value);
  t2->record(*s);
  CHECK(t1->elapsed_ms(*t2) >= 0);
}

TEST_CASE("host backend: a wait uses the record current when it was made", "[host][event]") {
  // CUDA semantics: cudaStreamWaitEvent waits for the most recent record at the time of the
  // call; re-recording the event afterwards (here on an idle stream) must not release the wait.
  Runtime rt(host_options());
  auto a = rt.backend().create_stream(0, StreamPriority::Normal);
  auto b = rt.backend().create_stream(0, StreamPriority::Normal);
  auto c = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  auto on_b = rt.backend().create_event(0, false);
  const auto t0 = Clock::now();
  sleep(rt, 0.2, a.get());
  ev->record(*a);
  b->wait(*ev);
  ev->record(*c);  // c is idle: this record completes at once
  on_b->record(*b);
  on_b->synchronize();
  CHECK(ms_since(t0) >= 190);
  rt.backend().synchronize_device(0);
}

TEST_CASE("host backend: event query and synchronize follow the latest record", "[host][event]") {
  Runtime rt(host_options());
  auto a = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  ev->record(*a);
  ev->synchronize();
  CHECK(ev->query());
  sleep(rt, 0.1, a.get());
  ev->record(*a);
  CHECK_FALSE(ev->query());
  const auto t0 = Clock::now();
  ev->synchronize();
  CHECK(ms_since(t0) >= 50);
  CHECK(ev->query());
}

TEST_CASE("host backend: synchronize_device waits for every stream", "[host][stream]") {
  Runtime rt(host_options());
  auto a = rt.backend().create_stream(0, StreamPriority::Normal);
  auto b = rt.backend().create_stream(0, StreamPriority::Low);
  sleep(rt, 0.1, a.get());
  sleep(rt, 0.15, b.get());
  sleep(rt, 0.05);  // current (default) stream
  const auto t0 = Clock::now();
  rt.synchronize();
  CHECK(ms_since(t0) >= 100);
  CHECK(a->query());
  CHECK(b->query());
  CHECK(rt.current_stream().query());
}

TEST_CASE("host backend: work queued on a dropped stream still runs", "[host][stream]") {
  Runtime rt(host_options());
  auto ev = rt.backend().create_event(0, false);
  std::atomic<bool> ran{false};
  {
    auto s = rt.backend().create_stream(0, StreamPriority::Normal);
    sleep(rt, 0.05, s.get());
    dynamic_cast<host::HostStream&>(*s).enqueue([&ran] { ran = true; });
    ev->record(*s);
  }
  ev->synchronize();
  CHECK(ran.load());
  // Creating more streams joins the finished workers; nothing hangs.
  for (int i = 0; i < 20; ++i) {
    auto s = rt.backend().create_stream(0, StreamPriority::Normal);
    sleep(rt, 0.0, s.get());
  }
  rt.backend().synchronize_device(0);
}

TEST_CASE("runtime: default and current streams", "[host][stream]") {
  Runtime rt(host_options());
  CHECK(rt.kind() == BackendKind::Host);
  CHECK(rt.device() == 0);
  Stream& def = rt.current_stream();
  CHECK(&def == rt.backend().default_stream(0).get());
  auto s = rt.backend().create_stream(0, StreamPriority::High);
  CHECK(s->priority() == StreamPriority::High);
  CHECK(s->id() != def.id());
  rt.set_current_stream(s);
  CHECK(&rt.current_stream() == s.get());
  CHECK(rt.current_stream_ptr() == s);
  CHECK(error_kind_of([&] { rt.set_device(1); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] {
          RuntimeOptions o;
          o.backend = BackendKind::Host;
          o.device = 3;
          Runtime bad(backends::engines(o));
          bad.backend();
        }) == ErrorKind::Value);
  CHECK(parse_byte_size("512M") == uint64_t{512} << 20);
  CHECK(parse_byte_size("2G") == uint64_t{2} << 30);
  CHECK(parse_byte_size("1048576") == 1048576);
  CHECK(error_kind_of([] { parse_byte_size("12X"); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { parse_byte_size(""); }) == ErrorKind::Value);
  // Sizes that would wrap around (or turn negative as a Lua integer) are refused.
  CHECK(parse_byte_size("4294967296G") == uint64_t{1} << 62);
  CHECK(error_kind_of([] { parse_byte_size("4294967297G"); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { parse_byte_size("20000000000G"); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { parse_byte_size("18446744073709551615"); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { parse_byte_size("99999999999999999999999999"); }) == ErrorKind::Value);
  CHECK(error_kind_of([] { parse_backend("gpu"); }) == ErrorKind::Value);
  // A device that does not exist has no events; an event of another device is refused.
  CHECK(error_kind_of([&] { rt.backend().create_event(1, false); }) == ErrorKind::Index);
  Runtime two(host_options(), host::make_backend(host::HostOptions{0, 2}));
  auto ev = two.backend().create_event(1, false);
  auto s0 = two.backend().create_stream(0, StreamPriority::Normal);
  CHECK(error_kind_of([&] { ev->record(*s0); }) == ErrorKind::Value);
}

TEST_CASE("host backend: a failing task poisons the backend", "[host][stream]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  auto ev = rt.backend().create_event(0, false);
  dynamic_cast<host::HostStream&>(*s).enqueue([] { throw std::runtime_error("boom"); });
  ev->record(*s);
  ev->synchronize();  // later work still runs
  CHECK(ev->query());
  CHECK(rt.backend().poisoned());
  CHECK_THAT(rt.backend().poison_message(), Catch::Contains("boom"));
  CHECK(error_kind_of([&] { sleep(rt, 0.01, s.get()); }) == ErrorKind::Fatal);
  CHECK(error_kind_of([&] { rt.backend().create_stream(0, StreamPriority::Normal); }) ==
        ErrorKind::Fatal);
  CHECK(error_kind_of([&] { rt.synchronize(); }) == ErrorKind::Fatal);
}

TEST_CASE("host backend: events recorded before a synchronize are complete after it",
          "[host][event]") {
  // CUDA: once cudaStreamSynchronize / cudaDeviceSynchronize returns, every event recorded on
  // the stream before the call reports complete.
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  int stream_misses = 0, device_misses = 0;
  for (int i = 0; i < 3000; ++i) {
    auto ev = rt.backend().create_event(0, false);
    ev->record(*s);
    s->synchronize();
    if (!ev->query()) ++stream_misses;
    auto ev2 = rt.backend().create_event(0, false);
    ev2->record(*s);
    rt.backend().synchronize_device(0);
    if (!ev2->query()) ++device_misses;
  }
  CHECK(stream_misses == 0);
  CHECK(device_misses == 0);
}

TEST_CASE("host backend: abandoned work is dropped and nothing waits for it", "[host][stream]") {
  std::atomic<int> ran{0};
  const auto t0 = Clock::now();
  {
    Runtime rt(host_options());
    auto s = rt.backend().create_stream(0, StreamPriority::Normal);
    auto s2 = rt.backend().create_stream(0, StreamPriority::Normal);
    auto& hs = dynamic_cast<host::HostStream&>(*s);
    auto ev = rt.backend().create_event(0, false);
    hs.enqueue([&ran] { ++ran; });
    s->synchronize();
    sleep(rt, 60.0, s.get());  // running when the work is abandoned
    hs.enqueue([&ran] { ++ran; });
    ev->record(*s);
    s2->wait(*ev);  // a wait on the dropped record must not hang the other stream
    sleep(rt, 60.0, s2.get());
    CHECK(rt.abandon_queued_work() == 2);
    CHECK(rt.abandoned());
    s->synchronize();  // the queue drains at once: the running sleep ends, the rest is dropped
    CHECK(ev->query());
    s2->synchronize();
    CHECK(ms_since(t0) < 5000);
    sleep(rt, 60.0, s.get());  // queued after the abandonment: dropped too
    hs.enqueue([&ran] { ++ran; });
  }  // the runtime's and backend's teardown wait for nothing
  CHECK(ms_since(t0) < 5000);
  CHECK(ran.load() == 1);
}
