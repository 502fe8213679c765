// luaopen_cu: the entry point of cu.so, the `cu` module for stock Lua 5.4 (`local cu = require
// "cu"` in Debian's lua5.4, Lua built as C). The engine is created here, options from the
// environment (CULUA_BACKEND, CULUA_DEVICE); the backend itself is created on first use, so loading
// the module never touches the GPU.
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <thread>

#include "backends/backends.hpp"
#include "core/base/error.hpp"
#include "core/runtime/runtime.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"

namespace culua::detail::lua {

namespace {

// Registry keys (their addresses): the userdata that owns the runtime, and the module table.
constexpr char kRuntimeKey[] = "cu.runtime";
constexpr char kModuleKey[] = "cu.module";

// Owns the runtime. Created before anything else of the module, so that when lua_close runs the
// finalizers (in the reverse order of their objects' marking), this one runs last of the module's:
// after every array, stream and event released its memory through the runtime, and after the
// context. The state is closed before the runtime, as in culua.
struct RuntimeBox {
  std::unique_ptr<Runtime> rt;
};

// Says so on stderr when closing the runtime lasts (it waits for the work still queued). Stock
// lua closes the state the same way whether the script ended normally or with an error (lua.c
// reports the error, then calls lua_close: nothing tells the module which), so after an error too
// the work is waited for; the note tells why the process has not ended and how to end it (lua.c
// leaves SIGINT at its default while it closes the state).
class SlowCloseNote {
 public:
  SlowCloseNote() {
    try {
      thread_ = std::thread([this] { watch(); });
    } catch (const std::exception&) {
      // No thread: no note; the close itself goes on.
    }
  }
  ~SlowCloseNote() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  SlowCloseNote(const SlowCloseNote&) = delete;
  SlowCloseNote& operator=(const SlowCloseNote&) = delete;

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    if (!done_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) {
      std::fputs(
          "culua: the Lua state is closing: waiting for the device work still queued (an error "
          "does not skip this under stock lua; Ctrl-C ends the process)\n",
          stderr);
      std::fflush(stderr);
    }
  }

  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

int runtime_gc(lua_State* L) {
  auto* box = static_cast<RuntimeBox*>(lua_touserdata(L, 1));
  if (box->rt) {
    SlowCloseNote note;
    box->rt.reset();  // waits for work still queued on the device: the state is closing
  }
  box->~RuntimeBox();
  return 0;
}

RuntimeOptions options_from_environment() {
  RuntimeOptions o;
  if (const char* env = std::getenv("CULUA_BACKEND"); env && *env) {
    try {
      o.backend = parse_backend(env);
    } catch (const Error& e) {
      fail(ErrorKind::Value, "CULUA_BACKEND: {}", e.what());
    }
  }
  if (const char* env = std::getenv("CULUA_DEVICE"); env && *env) {
    const std::string_view s(env);
    int device = -1;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), device);
    if (ec != std::errc() || end != s.data() + s.size() || device < 0) {
      fail(ErrorKind::Value, "CULUA_DEVICE must be a device number (0, 1, ...), got '{}'", s);
    }
    o.device = device;
  }
  o.host_memory_limit = host_memory_limit_from_environment();  // a bad value fails the require
  backends::check_environment();                               // CULUA_HOST_THREADS too
  return o;
}

int open_module(lua_State* L) {
  // Opened before in this state (package.loaded.cu was cleared): the same module.
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, kModuleKey) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  const RuntimeOptions options = options_from_environment();

  auto* box = static_cast<RuntimeBox*>(lua_newuserdatauv(L, sizeof(RuntimeBox), 0));
  new (box) RuntimeBox{};
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, guarded<runtime_gc>);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kRuntimeKey);
  box->rt = std::make_unique<Runtime>(backends::engines(options));

  open_cu(L, *box->rt);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kModuleKey);
  return 1;
}

}  // namespace

}  // namespace culua::detail::lua

extern "C" __attribute__((visibility("default"))) int luaopen_cu(lua_State* L) {
  return culua::detail::lua::guarded<culua::detail::lua::open_module>(L);
}
