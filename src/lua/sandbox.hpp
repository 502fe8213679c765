// The sandbox (docs/sandbox.md): an allow-list environment for untrusted scripts and limits on
// what one entry into the Lua state may use (wall time, Lua instructions, Lua heap, culua's array
// memory, output files). Used by `culua --sandbox` and Options::sandbox of the embedding API.
//
//   Sandbox box(limits);            // outlives the state: its allocator serves the state
//   ... luaL_openlibs(L); open_cu(L, rt); lua_setglobal(L, "cu");
//   box.install(L, rt);            // trims the environment, caps the heap, hooks the VM
//   box.enter(L); lua_pcall(...); box.leave(L, status);   // around every entry
#pragma once

#include <lua.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/sandbox.hpp"

namespace culua::detail {
class Runtime;
class InterruptFlag;
}  // namespace culua::detail

namespace culua::detail::lua {

struct SandboxLimits {
  double time_s = 10;                         // wall-clock seconds per entry (0: none)
  uint64_t instructions = 0;                  // Lua VM instructions per entry (0: none)
  uint64_t heap_bytes = uint64_t{256} << 20;  // the Lua heap (0: none)
  uint64_t memory_bytes = uint64_t{1} << 30;  // culua's arrays, device and host (0: none)
  uint64_t streams = 64;  // streams made by cu.stream alive at once (0: none); on the host
                          // backend each is a thread
  std::vector<std::string> output_files;  // the only files culua may write for the script
};

class Sandbox {
 public:
  explicit Sandbox(SandboxLimits limits);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Makes L (the standard libraries and the global `cu` opened) a sandbox: the allow-list
  // environment, the heap cap (L's allocator is wrapped: close L before destroying the Sandbox),
  // the count hook, the memory quota of `rt`. `interrupt`, when given, is the flag that
  // interrupts the state's entries (its request raises "interrupted!" through the hook).
  void install(lua_State* L, Runtime& rt, InterruptFlag* interrupt = nullptr);
  // Around every entry from the host: enter starts a fresh time and instruction budget, puts the
  // hook (back) on L, the wait deadline and the file policy in place on this thread; leave takes
  // them away again and, for a failed entry (status), replaces a bare "not enough memory" on top
  // of L's stack by a message naming the heap limit. Returns the status.
  void enter(lua_State* L);
  int leave(lua_State* L, int status);
  // After an entry that failed: the limit that ended it, if one did ("" otherwise), and its
  // err.kind ("limit" or "out_of_memory").
  std::string failure_message() const;
  const char* failure_kind() const;
  // Whether the time or instruction limit was reached in the current (or latest) entry: from then
  // on every Lua instruction of the entry raises again.
  bool limit_reached() const { return exceeded_; }
  // A limit reached or an interrupt requested: the entry is being ended.
  bool stopping() const;
  // Raises the limit error when the time limit has passed (C functions that loop call it).
  void poke(lua_State* L);
  // The interrupt of an embedding application (any thread, a signal handler): the hook runs at
  // the next instruction of L and raises "interrupted!" while the flag is requested.
  static void interrupt_now(lua_State* L) noexcept;
  const SandboxLimits& limits() const { return limits_; }
  // The last resort: a thread that acts when an entry is still running `grace_s` after its time
  // limit, which only a single call of a C function can do (Lua's pattern matching over a long
  // string, a __call chain: no hook runs inside them). It calls `on_stuck` (once per entry, on its
  // own thread), or, with none (the CLI), ends the process: exit status 1, a message on stderr.
  void enable_watchdog(double grace_s, std::function<void()> on_stuck = {});

  // After the last entry (the CLI's script, an embedding application's teardown): waits for the
  // device work still queued, within the time limit — what is left of the latest entry's, or,
  // with `fresh_budget`, a whole one from now. Returns false, the limit's message in *message,
  // when the limit passed first (the caller then abandons the work: Runtime::abandon_queued_work).
  bool wait_for_queued_work(Runtime& rt, bool fresh_budget, std::string* message) noexcept;

  // Counts `delta` bytes that culua holds for the script outside the Lua heap (a trace's records)
  // as heap: false, counting nothing, when that would pass the heap limit. Negative: gives back.
  bool charge_heap(int64_t delta) noexcept;

  // The sandbox of L (any thread of the state), or null.
  static Sandbox* of(lua_State* L);

 private:
  static void hook(lua_State* L, lua_Debug* ar);
  static void* allocate(void* ud, void* ptr, size_t osize, size_t nsize) noexcept;
  void trim_environment(lua_State* L);

  SandboxLimits limits_;
  FilePolicy files_;
  lua_Alloc base_alloc_ = nullptr;
  void* base_ud_ = nullptr;
  uint64_t heap_used_ = 0;
  bool heap_refused_ = false;
  InterruptFlag* interrupt_ = nullptr;
  Runtime* rt_ = nullptr;
  lua_State* main_ = nullptr;
  bool active_ = false;
  int depth_ = 0;  // nested entries (a C++ function of the application calling back into Lua)
  bool exceeded_ = false;
  uint64_t instructions_ = 0;
  int64_t deadline_ns_ = 0;
  int step_ = 1000;
  std::string message_;  // the limit that was exceeded
  // The watchdog (enable_watchdog): the deadline of the running entry (0: none) and its number.
  std::thread watchdog_;
  std::mutex watch_m_;
  std::condition_variable watch_cv_;
  bool watch_stop_ = false;
  uint64_t watch_entry_ = 0;
  int64_t watch_deadline_ns_ = 0;
  int64_t watch_grace_ns_ = 0;
  std::function<void()> on_stuck_;
  uint64_t stuck_reported_ = 0;   // the entry on_stuck was called for
  std::string wait_message_;      // the time limit reached in a wait for the device
  int64_t last_deadline_ns_ = 0;  // of the latest entry
};

// For front ends that may or may not run sandboxed (the CLI's docall): the Sandbox's enter and
// leave when L is sandboxed; otherwise enter removes any hook (a Ctrl-C hook left over) and
// leave does the same and returns the status.
void sandbox_enter(lua_State* L);
int sandbox_leave(lua_State* L, int status);
// The mode to load a script's chunks with: "t" (text only) in a sandbox, else null (both).
const char* load_mode(lua_State* L);

}  // namespace culua::detail::lua
