// Stream-ordered release of buffers: dropping the last reference never frees memory that queued
// work still uses, and never blocks.
#include "helpers.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {
constexpr int64_t kN = int64_t{1} << 20;  // f32 elements: 4 MiB
constexpr uint64_t kBytes = uint64_t{4} << 20;
}  // namespace

TEST_CASE("buffer: dropping the last reference frees after the queued work", "[buffer]") {
  Runtime rt(host_options());
  auto& hb = host_backend(rt);
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  const uint64_t before = hb.live_device_bytes();
  Array a = empty(rt, Shape{kN}, DType::F32, Location::Device, s.get());
  CHECK(hb.live_device_bytes() == before + kBytes);
  sleep(rt, 0.2, s.get());
  fill(rt, a, Scalar::real(1.0), s.get());
  const auto t0 = Clock::now();
  a.reset();                 // the last reference
  CHECK(ms_since(t0) < 50);  // never blocks
  CHECK(hb.live_device_bytes() == before + kBytes);
  CHECK_FALSE(s->query());
  s->synchronize();
  CHECK(hb.live_device_bytes() == before);
}

TEST_CASE("buffer: memory used on two streams is freed only after both", "[buffer]") {
  Runtime rt(host_options());
  auto& hb = host_backend(rt);
  auto s1 = rt.backend().create_stream(0, StreamPriority::Normal);
  auto s2 = rt.backend().create_stream(0, StreamPriority::Normal);
  const uint64_t before = hb.live_device_bytes();

  SECTION("the second stream is the slow one") {
    Array a = empty(rt, Shape{kN}, DType::F32, Location::Device, s1.get());
    fill(rt, a, Scalar::real(2.0), s1.get());
    sleep(rt, 0.2, s2.get());
    fill(rt, a, Scalar::real(3.0), s2.get());
    a.reset();
    s1->synchronize();
    CHECK(hb.live_device_bytes() == before + kBytes);
    // The allocating stream gained no dependency on s2: new work on it completes at once.
    auto ev = rt.backend().create_event(0, false);
    const auto t0 = Clock::now();
    ev->record(*s1);
    ev->synchronize();
    CHECK(ms_since(t0) < 100);
    CHECK(hb.live_device_bytes() == before + kBytes);
    s2->synchronize();
    rt.backend().synchronize_device(0);
    CHECK(hb.live_device_bytes() == before);
  }
  SECTION("the allocating stream is the slow one") {
    Array a = empty(rt, Shape{kN}, DType::F32, Location::Device, s1.get());
    fill(rt, a, Scalar::real(2.0), s2.get());  // s2 waits for s1's work so far (none)
    s2->synchronize();
    sleep(rt, 0.2, s1.get());
    fill(rt, a, Scalar::real(3.0), s1.get());
    a.reset();
    auto ev = rt.backend().create_event(0, false);
    ev->record(*s2);
    ev->synchronize();
    CHECK(hb.live_device_bytes() == before + kBytes);
    s1->synchronize();
    rt.backend().synchronize_device(0);
    CHECK(hb.live_device_bytes() == before);
  }
}

TEST_CASE("buffer: the first use on another stream is ordered after the allocating stream",
          "[buffer]") {
  Runtime rt(host_options());
  auto s1 = rt.backend().create_stream(0, StreamPriority::Normal);
  auto s2 = rt.backend().create_stream(0, StreamPriority::Normal);
  Array a = empty(rt, Shape{1000}, DType::F32, Location::Device, s1.get());
  Array b = empty(rt, Shape{1000}, DType::F32, Location::Device, s2.get());
  std::memset(b.data(), 0, 4000);  // no work is queued on b yet
  sleep(rt, 0.2, s1.get());
  fill(rt, a, Scalar::real(3.0), s1.get());
  copy(rt, b, a, s2.get());
  s2->synchronize();
  std::vector<float> got(1000);
  std::memcpy(got.data(), b.data(), 4000);
  CHECK(got == std::vector<float>(1000, 3.0f));
}

TEST_CASE("buffer: release is idempotent and check_alive throws Released", "[buffer]") {
  Runtime rt(host_options());
  auto& hb = host_backend(rt);
  const uint64_t before = hb.live_device_bytes();
  Array a = full(rt, Shape{kN}, DType::F32, Scalar::real(1.0));
  Array view = a.with_layout(a.layout().narrow(0, 10, 20));
  CHECK(a.alive());
  a.check_alive();
  a.buffer()->release();
  a.buffer()->release();
  CHECK(a.buffer()->freed());
  CHECK_FALSE(a.alive());
  CHECK_FALSE(view.alive());
  CHECK(error_kind_of([&] { a.check_alive(); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { view.check_alive("the source array"); }) == ErrorKind::Released);
  CHECK_THAT(error_message_of([&] { view.check_alive("the source array"); }),
             Catch::Contains("the source array"));
  Array other = empty(rt, Shape{20}, DType::F32);
  CHECK(error_kind_of([&] { copy(rt, other, view); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { copy(rt, view, other); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { fill(rt, view, Scalar::real(0)); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { read_contiguous(rt, a); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { astype(rt, a, DType::F64); }) == ErrorKind::Released);
  CHECK(error_kind_of([&] { (void)view_as(a, Shape{-1}); }) == ErrorKind::Released);
  rt.synchronize();
  CHECK(hb.live_device_bytes() == before + 80);  // only `other` is left
  a.reset();
  view.reset();  // the destructor's release is a no-op now
  rt.synchronize();
  CHECK(hb.live_device_bytes() == before + 80);
  Array empty_handle;
  CHECK_FALSE(empty_handle.alive());
  CHECK(error_kind_of([&] { empty_handle.check_alive(); }) == ErrorKind::Released);
}

TEST_CASE("buffer: wrapped memory is never freed", "[buffer]") {
  Runtime rt(host_options());
  std::vector<float> mine(64, 5.0f);
  {
    Array w =
        Array::wrap(rt.backend_ptr(), mine.data(), Shape{8, 8}, DType::F32, Location::Pageable, 0);
    fill(rt, w.with_layout(w.layout().select(2)), Scalar::real(7.0));
    w.buffer()->release();
    CHECK_FALSE(w.alive());
  }
  rt.synchronize();
  CHECK(mine[16] == 7.0f);
  CHECK(mine[23] == 7.0f);
  CHECK(mine[24] == 5.0f);
  CHECK(error_kind_of([&] {
          Array::wrap(rt.backend_ptr(), nullptr, Shape{2}, DType::F32, Location::Pageable, 0);
        }) == ErrorKind::Value);
}

TEST_CASE("buffer: pinned memory of an async copy outlives its last reference", "[buffer]") {
  Runtime rt(host_options());
  auto s = rt.backend().create_stream(0, StreamPriority::Normal);
  Array d = empty(rt, Shape{4096}, DType::F32, Location::Device, s.get());
  {
    Array p = empty(rt, Shape{4096}, DType::F32, Location::Pinned);
    std::vector<float> v(4096);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    std::memcpy(p.data(), v.data(), v.size() * sizeof(float));
    sleep(rt, 0.1, s.get());
    copy(rt, d, p, s.get());  // asynchronous: pinned and an explicit stream
  }                           // p dropped while the copy is still queued
  s->synchronize();
  std::vector<float> got(4096);
  std::memcpy(got.data(), d.data(), got.size() * sizeof(float));
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == static_cast<float>(i));

  // And the other direction: the destination of a queued device-to-host copy.
  fill(rt, d, Scalar::real(9.0), s.get());
  {
    Array p = empty(rt, Shape{4096}, DType::F32, Location::Pinned);
    sleep(rt, 0.1, s.get());
    copy(rt, p, d, s.get());
  }
  s->synchronize();
}

TEST_CASE("buffer: host reads wait for pending asynchronous copies", "[buffer]") {
  Runtime rt(host_options());
  auto s1 = rt.backend().create_stream(0, StreamPriority::Normal);
  auto s2 = rt.backend().create_stream(0, StreamPriority::Normal);
  Array d = full(rt, Shape{1000}, DType::I32, Scalar::integer(42), Location::Device, s1.get());
  Array p = full(rt, Shape{1000}, DType::I32, Scalar::integer(0), Location::Pinned);
  sleep(rt, 0.15, s1.get());
  copy(rt, p, d, s1.get());  // async into pinned memory
  // A host read of p must wait for the copy.
  const auto bytes = read_contiguous(rt, p);
  std::vector<int32_t> got(1000);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  CHECK(got == std::vector<int32_t>(1000, 42));
  CHECK(read_element(rt, p.with_layout(p.layout().select(999))).i == 42);

  // A use of p on another stream waits for the copy too.
  Array d2 = full(rt, Shape{1000}, DType::I32, Scalar::integer(0), Location::Device, s2.get());
  s2->synchronize();
  fill(rt, d, Scalar::integer(7), s1.get());
  sleep(rt, 0.15, s1.get());
  Array p2 = full(rt, Shape{1000}, DType::I32, Scalar::integer(0), Location::Pinned);
  copy(rt, p2, d, s1.get());
  copy(rt, d2, p2, s2.get());  // first use of p2 on s2: after s1's pending copy
  s2->synchronize();
  std::vector<int32_t> got2(1000);
  std::memcpy(got2.data(), d2.data(), 4000);
  CHECK(got2 == std::vector<int32_t>(1000, 7));
  rt.synchronize();
}
