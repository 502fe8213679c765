// The host backend's simulated devices (CULUA_HOST_DEVICES): memory accounting, streams and
// synchronization per device, copies between devices, and the variable's parsing.
#include "helpers.hpp"

#include <cstdlib>

using namespace culua::detail;
using namespace culua::detail::test;

namespace {

Runtime two_devices(uint64_t limit = 0) {
  auto backend = host::make_backend(host::HostOptions{limit, 2});
  return Runtime(host_options(limit), backend);
}

// Sets an environment variable for a scope.
struct EnvScope {
  explicit EnvScope(const char* value) { setenv("CULUA_HOST_DEVICES", value, 1); }
  ~EnvScope() { unsetenv("CULUA_HOST_DEVICES"); }
};

}  // namespace

TEST_CASE("host devices: each device has its own memory accounting", "[host][devices]") {
  Runtime rt = two_devices(uint64_t{1} << 20);
  auto& hb = host_backend(rt);
  REQUIRE(rt.backend().device_count() == 2);
  {
    DeviceSelection on1(rt, 1);
    Array a = empty(rt, Shape{1 << 17}, DType::F32);  // 512 KiB on device 1
    CHECK(a.device() == 1);
    CHECK(hb.live_device_bytes(1) == 512u << 10);
    CHECK(hb.live_device_bytes(0) == 0);
    // device 1 is near its limit; device 0 is not
    CHECK(error_kind_of([&] { empty(rt, Shape{1 << 18}, DType::F32); }) == ErrorKind::OutOfMemory);
  }
  CHECK(rt.device() == 0);
  Array b = empty(rt, Shape{1 << 17}, DType::F32);
  CHECK(b.device() == 0);
  CHECK(hb.live_device_bytes(0) == 512u << 10);
  CHECK(rt.backend().memory_info(Location::Device, 0).free == 512u << 10);
  rt.synchronize();
}

TEST_CASE("host devices: streams, synchronization and copies per device", "[host][devices]") {
  Runtime rt = two_devices();
  Backend& b = rt.backend();
  CHECK(b.default_stream(0) != b.default_stream(1));
  CHECK(b.default_stream(1)->device() == 1);
  CHECK(b.release_stream(1)->device() == 1);
  CHECK(b.create_event(1, false)->device() == 1);
  CHECK(b.peer_link(0, 1).link == "host");
  CHECK_FALSE(b.peer_link(0, 1).access);
  CHECK(error_kind_of([&] { b.default_stream(2); }) == ErrorKind::Index);
  CHECK(error_kind_of([&] { b.peer_link(0, 5); }) == ErrorKind::Index);

  // Synchronizing device 0 does not wait for device 1's queued work.
  auto s1 = b.create_stream(1, StreamPriority::Normal);
  sleep(rt, 0.3, s1.get());
  const auto t0 = Clock::now();
  b.synchronize_device(0);
  CHECK(ms_since(t0) < 200);
  b.synchronize_device(1);
  CHECK(ms_since(t0) >= 250);

  // A copy from device 0 to device 1 with conversion and a strided source.
  Array src = arange(rt, Scalar::real(0.0), Scalar::real(12.0), Scalar::real(1.0), DType::F64);
  Array src2d = view_as(src, Shape{3, 4});
  Array dst;
  {
    DeviceSelection on1(rt, 1);
    dst = empty(rt, Shape{4, 3}, DType::I32);
  }
  const Ledger before = rt.monitor().ledger;
  copy(rt, dst, src2d.with_layout(src2d.layout().transpose(0, 1)));
  CHECK(rt.monitor().ledger.p2p_calls == before.p2p_calls + 1);
  CHECK(rt.monitor().ledger.p2p_bytes == before.p2p_bytes + 12 * 8);
  const std::vector<unsigned char> bytes = read_contiguous(rt, dst);
  std::vector<int32_t> got(12);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  CHECK(got == std::vector<int32_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
}

TEST_CASE("host devices: CULUA_HOST_DEVICES", "[host][devices]") {
  {
    EnvScope env("3");
    CHECK(host::host_devices_from_environment() == 3);
  }
  CHECK(host::host_devices_from_environment() == 1);
  for (const char* bad : {"0", "x", "-1", "2x", "65", "100"}) {
    EnvScope env(bad);
    const std::string m = error_message_of([] { host::host_devices_from_environment(); });
    CHECK(m.find("CULUA_HOST_DEVICES: cannot use '" + std::string(bad) + "'") == 0);
  }
}
