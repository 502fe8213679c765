// culua-launch-profile: runs a Lua script on the host backend, except that run-time kernels are
// compiled with the real NVRTC (no GPU needed) and their launches do nothing. It measures what
// culua itself costs per launch (argument checks, configuration, bookkeeping) without the driver,
// repeatably under callgrind:
//   valgrind --tool=callgrind build/culua-launch-profile scripts/bench/launch_profile.lua 20000
// (instructions per launch = the difference between two counts, divided by the launches added).
//   culua-launch-profile --null-device SCRIPT [ARGS...]
// also makes device allocation, frees, elementwise operations and reductions do nothing
// (allocations come from a fixed arena), so that what remains of `cu.empty(n):free()` or `cu.add(a,
// b, {out = c})` is culua's own work (scripts/bench/alloc_profile.lua). Built without CUDA (no
// NVRTC), "compiling" only names the kernels of the source: the parameter types come from the
// declarations (the fallback of rtc::resolve_params); templates are refused. The launch path after
// the compile is the same. The state is the program's: its allocator (lua/lua_heap) and its
// collector in generational mode; --incremental-gc keeps Lua's default mode (counts before
// 2026-11-30 were taken in it).
#include <lua.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "core/backend/backend.hpp"
#include "core/base/error.hpp"
#include "core/runtime/runtime.hpp"
#include "host/host_backend.hpp"
#if defined(CULUA_HAVE_CUDA)
#include "cuda/rtc.hpp"
#endif
#include "lua/cu_module.hpp"
#include "lua/lua_heap.hpp"

namespace {

using namespace culua::detail;

class NullFunction final : public RtcFunction {
 public:
  int device() const override { return 0; }
  KernelAttributes attributes() override {
    KernelAttributes a;
    a.max_threads_per_block = 1024;
    a.max_dynamic_shared = 48 << 10;
    return a;
  }
  bool parameter_layout(size_t, std::vector<ParamLayout>&) override { return false; }
  void reserve_dynamic_shared(size_t) override {}
  int max_active_blocks(int, size_t) override { return 1; }
  void launch(const LaunchDims&, Stream&, void**, const LaunchSite&) override { ++launches; }
  long launches = 0;
};

class NullModule final : public RtcModule {
 public:
  int device() const override { return 0; }
  std::shared_ptr<RtcFunction> function(const std::string&) override {
    return std::make_shared<NullFunction>();
  }
};

// The host backend, with NVRTC compiles and launches that do nothing. It reports itself as the
// CUDA backend so that the template kernels run too.
// Device memory of --null-device: a bump pointer over a fixed arena, wrapping around (nothing
// reads or writes what the profile scripts allocate while it is reused).
class NullArena {
 public:
  void* allocate(size_t bytes) {
    const size_t rounded = (bytes + 255) & ~size_t{255};
    if (rounded > kSize) fail(ErrorKind::OutOfMemory, "the profile's arena is {} bytes", kSize);
    if (next_ + rounded > kSize) next_ = 0;
    void* p = memory_.data() + next_;
    next_ += rounded;
    return p;
  }

 private:
  static constexpr size_t kSize = size_t{64} << 20;
  std::vector<unsigned char> memory_ = std::vector<unsigned char>(kSize);
  size_t next_ = 0;
};

class ProfileBackend final : public Backend {
 public:
  explicit ProfileBackend(bool null_device)
      : host_(host::make_backend(host::HostOptions{})), null_device_(null_device) {}
  BackendKind kind() const override { return BackendKind::Cuda; }
  int device_count() override { return host_->device_count(); }
  DeviceInfo device_info(int d) override {
    DeviceInfo i = host_->device_info(d);
    i.cc_major = 9;
    i.cc_minor = 0;
    i.sm_count = 132;
    i.shared_per_block_optin = 227 << 10;
    return i;
  }
  std::shared_ptr<Stream> default_stream(int d) override { return host_->default_stream(d); }
  std::shared_ptr<Stream> release_stream(int d) override { return host_->release_stream(d); }
  std::shared_ptr<Stream> create_stream(int d, StreamPriority p) override {
    return host_->create_stream(d, p);
  }
  std::shared_ptr<Event> create_event(int d, bool t) override { return host_->create_event(d, t); }
  void synchronize_device(int d) override { host_->synchronize_device(d); }
  void* allocate(size_t b, Location l, int d, Stream* s) override {
    if (null_device_ && l == Location::Device) return arena_.allocate(b);
    return host_->allocate(b, l, d, s);
  }
  void deallocate(void* p, size_t b, Location l, int d, Stream* s) noexcept override {
    if (null_device_ && l == Location::Device) return;
    host_->deallocate(p, b, l, d, s);
  }
  MemoryInfo memory_info(Location l, int d) override { return host_->memory_info(l, d); }
  void trim(int d) noexcept override { host_->trim(d); }
  void memcpy_peer(void* dst, int dd, const void* src, int sd, size_t n, Stream& s) override {
    host_->memcpy_peer(dst, dd, src, sd, n, s);
  }
  PeerLink peer_link(int from, int to) override { return host_->peer_link(from, to); }
  void memcpy(void* dst, const void* src, size_t n, Stream& s, CopyRoute r) override {
    host_->memcpy(dst, src, n, s, r);
  }
  void fill(const StridedView& d, const void* v, Stream& s) override { host_->fill(d, v, s); }
  void copy_cast(const StridedView& d, const StridedView& src, Stream& s) override {
    host_->copy_cast(d, src, s);
  }
  void sequence(const StridedView& d, const SequenceSpec& sp, Stream& s) override {
    host_->sequence(d, sp, s);
  }
  void sleep(double sec, Stream& s) override { host_->sleep(sec, s); }
  void elementwise(const ElementwiseCall& c, Stream& s) override {
    if (!null_device_) host_->elementwise(c, s);
  }
  void reduce(const ReduceCall& c, Stream& s) override {
    if (!null_device_) host_->reduce(c, s);
  }
  void sort(const SortCall& c, Stream& s) override {
    if (!null_device_) host_->sort(c, s);
  }
  void scan(const ScanCall& c, Stream& s) override {
    if (!null_device_) host_->scan(c, s);
  }
  void random(const RandomCall& c, Stream& s) override { host_->random(c, s); }
  void gather(const GatherCall& c, Stream& s) override { host_->gather(c, s); }
  void matmul(const MatmulCall& c, Stream& s) override { host_->matmul(c, s); }
  void dot(const DotCall& c, Stream& s) override { host_->dot(c, s); }
  void fft(const FftCall& c, Stream& s) override { host_->fft(c, s); }
  void begin_capture(Stream& s) override { host_->begin_capture(s); }
  std::unique_ptr<GraphRecording> end_capture(Stream& s) override { return host_->end_capture(s); }
  void abort_capture(Stream& s) noexcept override { host_->abort_capture(s); }
  std::unique_ptr<GraphExec> instantiate(GraphRecording& r) override {
    return host_->instantiate(r);
  }
  bool update_graph(GraphExec& e, GraphRecording& r) override { return host_->update_graph(e, r); }
  void launch_graph(GraphExec& e, Stream& s, const char* n) override {
    host_->launch_graph(e, s, n);
  }
#if defined(CULUA_HAVE_CUDA)
  RtcBinary compile(const RtcRequest& r, int d) override {
    return cuda::compile(r, device_info(d));
  }
#else
  // Without NVRTC: every plain name asked for is an extern "C" kernel of that symbol.
  RtcBinary compile(const RtcRequest& r, int) override {
    RtcBinary b;
    b.arch = "sm_90";
    b.key = r.source;
    for (const std::string& e : r.name_expressions) {
      if (e.find('<') == std::string::npos) b.lowered_names.emplace_back(e, e);
    }
    return b;
  }
#endif
  std::shared_ptr<RtcModule> load_module(const RtcBinary&, int) override {
    return std::make_shared<NullModule>();
  }
  bool poisoned() const override {
    return false;
  }
  std::string poison_message() const override {
    return {};
  }

 private:
  std::shared_ptr<Backend> host_;
  bool null_device_;
  NullArena arena_;
};

int traceback(lua_State* L) {
  luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  bool null_device = false, incremental = false;
  while (argc > 1 && (std::strcmp(argv[1], "--null-device") == 0 ||
                      std::strcmp(argv[1], "--incremental-gc") == 0)) {
    (std::strcmp(argv[1], "--null-device") == 0 ? null_device : incremental) = true;
    --argc;
    ++argv;
  }
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: culua-launch-profile [--null-device] [--incremental-gc] SCRIPT [ARGS...]\n");
    return 2;
  }
  culua::detail::Runtime rt(culua::detail::backends::engines(),
                            std::make_shared<ProfileBackend>(null_device));
  int status = 0;
  {
    // The program's state: its allocator and its collector's mode (src/cli), unless told.
    culua::detail::lua::LuaHeap heap;
    lua_State* L = luaL_newstate();
    heap.install(L);
    if (!incremental) lua_gc(L, LUA_GCGEN, 0, 0);
    luaL_openlibs(L);
    culua::detail::lua::open_cu(L, rt);
    lua_setglobal(L, "cu");
    lua_createtable(L, argc, 0);
    for (int i = 0; i < argc; ++i) {
      lua_pushstring(L, argv[i]);
      lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, traceback);
    if (luaL_loadfile(L, argv[1]) != LUA_OK || lua_pcall(L, 0, 0, -2) != LUA_OK) {
      std::fprintf(stderr, "%s\n", lua_tostring(L, -1));
      status = 1;
    }
    lua_close(L);
  }
  return status;
}
