// Out of memory on the host backend with a memory cap: the error, and the garbage-collection
// retry.
#include "helpers.hpp"

using namespace culua::detail;
using namespace culua::detail::test;

namespace {
constexpr uint64_t kMiB = uint64_t{1} << 20;
const Shape k40MiB{int64_t{40} << 20};
}  // namespace

TEST_CASE("out of memory: the error names requested and free bytes", "[oom]") {
  Runtime rt(host_options(64 * kMiB));
  Array a = empty(rt, k40MiB, DType::U8);
  std::string msg;
  try {
    empty(rt, k40MiB, DType::U8);
    FAIL("allocating past the cap did not throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::OutOfMemory);
    msg = e.what();
  }
  CHECK_THAT(msg, Catch::Contains("requested 40.0 MiB"));
  CHECK_THAT(msg, Catch::Contains("24.0 MiB free"));
  CHECK_THAT(msg, Catch::Contains("64.0 MiB"));
  // Nothing leaked from the failed attempt.
  rt.synchronize();
  CHECK(host_backend(rt).live_device_bytes() == 40 * kMiB);
  // Host memory is not capped.
  Array h = empty(rt, k40MiB, DType::U8, Location::Pinned);
  CHECK(h.size() == int64_t{40} << 20);
  // The cap is inclusive.
  a.reset();
  rt.synchronize();
  Array whole = empty(rt, Shape{int64_t{64} << 20}, DType::U8);
  CHECK(whole.nbytes() == 64 * kMiB);
}

TEST_CASE("out of memory: collect_garbage runs before the retry", "[oom]") {
  Runtime rt(host_options(64 * kMiB));
  Array a = empty(rt, k40MiB, DType::U8);
  fill(rt, a, Scalar::integer(1));
  sleep(rt, 0.05);  // the stream-ordered free of `a` must wait for this
  int calls = 0;
  rt.collect_garbage = [&] {
    ++calls;
    a.reset();  // what a Lua collection of an unreachable array does
  };
  Array b = empty(rt, k40MiB, DType::U8);
  CHECK(calls == 1);
  CHECK(b.nbytes() == 40 * kMiB);

  // A collection that frees nothing: the retry fails too, after exactly one more call.
  CHECK(error_kind_of([&] { empty(rt, k40MiB, DType::U8); }) == ErrorKind::OutOfMemory);
  CHECK(calls == 2);
  rt.collect_garbage = nullptr;
  CHECK(error_kind_of([&] { empty(rt, k40MiB, DType::U8); }) == ErrorKind::OutOfMemory);
}

TEST_CASE("out of memory: device allocations past a debt threshold ask for a collection", "[oom]") {
  Runtime rt(host_options(64 * kMiB));
  int calls = 0;
  rt.collect_garbage = [&] { ++calls; };
  for (int i = 0; i < 40; ++i) {
    Array a = empty(rt, Shape{int64_t{8} << 20}, DType::U8);  // 320 MiB in all, 8 at a time
  }
  CHECK(calls >= 1);
  rt.synchronize();
  CHECK(host_backend(rt).live_device_bytes() == 0);
}

TEST_CASE("the debt runs young collections where the state has them, a full one every eighth",
          "[oom]") {
  Runtime rt(host_options(64 * kMiB));
  int young = 0, full = 0;
  rt.collect_garbage = [&] { ++full; };
  rt.collect_young = [&] { ++young; };
  // 8 MiB at a time: the debt reaches 256 MiB every 32 allocations; 513 of them pass it 16 times.
  // Each array's stream-ordered free completes before the next allocation: no out-of-memory
  // retry (which collects fully) can run.
  for (int i = 0; i < 32 * 16 + 1; ++i) {
    { Array a = empty(rt, Shape{int64_t{8} << 20}, DType::U8); }
    rt.synchronize();
  }
  CHECK(young == 14);
  CHECK(full == 2);
  CHECK(Runtime::kYoungPerFull == 8);
  // Without a full collection the young ones do not run either (the Lua layer is gone).
  rt.collect_garbage = nullptr;
  for (int i = 0; i < 64; ++i) {
    { Array a = empty(rt, Shape{int64_t{8} << 20}, DType::U8); }
    rt.synchronize();
  }
  CHECK(young == 14);
  rt.collect_young = nullptr;
}
