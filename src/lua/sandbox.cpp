#include "lua/sandbox.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/runtime/runtime.hpp"
#include "lua/binding.hpp"

namespace culua::detail::lua {

namespace {

// Registry key (its address) of the Sandbox pointer.
constexpr char kSandboxKey[] = "culua.sandbox";

std::string seconds_text(double s) {
  return fmt::format("{:g} s", s);
}

// Raises the sandbox's limit error (a cu.Error of kind "limit") with `message`.
[[noreturn]] void raise_limit(lua_State* L, const std::string& message) {
  lua_pushlstring(L, message.data(), message.size());
  push_error(L, ErrorKind::Limit, 0, nullptr);
  if (lua_istable(L, -1)) {
    // In a hook, level 0 is the Lua function that was running: where the limit struck.
    luaL_where(L, 0);
    size_t len = 0;
    const char* where = lua_tolstring(L, -1, &len);
    if (len > 2) {
      lua_pushlstring(L, where, len - 2);
      lua_setfield(L, -3, "where");
    }
    lua_pop(L, 1);
  }
  lua_error(L);
  std::abort();  // lua_error does not return
}

// load(chunk [, chunkname [, mode [, env]]]) with the mode forced to "t" (a reader function too:
// Lua checks the first character it returns) and no chunk named after a file ("@name" becomes
// "=name": culua reads a chunk's source file for messages, and the name would pick the file).
int sandbox_load(lua_State* L) {
  const int t = lua_type(L, 1);
  if (t != LUA_TSTRING && t != LUA_TFUNCTION) luaL_typeerror(L, 1, "string or function");
  if (!lua_isnoneornil(L, 2)) {
    const char* name = luaL_checkstring(L, 2);
    if (name[0] == '@') {
      lua_pushfstring(L, "=%s", name + 1);
      lua_replace(L, 2);
    }
  }
  luaL_optstring(L, 3, "t");
  while (lua_gettop(L) < 3) lua_pushnil(L);
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// The message handler of a sandboxed xpcall: once a limit is exceeded (or an interrupt
// requested) the error goes on as it is. The hook raises that error, and Lua runs a handler for
// an error raised in a hook with hooks off: a handler that loops would never be stopped.
int guarded_handler(lua_State* L) {
  const Sandbox* box = Sandbox::of(L);
  if (box && box->stopping()) {
    lua_settop(L, 1);
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// xpcall(f, msgh, ...) with msgh guarded (above).
int sandbox_xpcall(lua_State* L) {
  luaL_checkany(L, 1);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, guarded_handler, 1);
  lua_replace(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// setmetatable(t, mt) refusing a metatable with __gc: Lua runs finalizers with hooks off, so a
// finalizer that loops could not be stopped.
int sandbox_setmetatable(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const int t = lua_type(L, 2);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (t == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    const bool gc = lua_rawget(L, 2) != LUA_TNIL;
    lua_pop(L, 1);
    if (gc) {
      luaL_argerror(L, 2,
                    "a metatable with __gc: the sandbox runs no finalizers of scripts (Lua runs "
                    "them where no limit applies)");
    }
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// getmetatable(v): the metatables of tables the script made; false for the others (strings,
// culua's objects and errors: the shared metatables of the state stay out of reach).
int sandbox_getmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushliteral(L, "__metatable");
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  bool registered = lua_type(L, 1) != LUA_TTABLE;
  if (!registered) {
    lua_pushliteral(L, "__name");
    registered = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 1);
  }
  if (registered) lua_pushboolean(L, 0);
  return 1;
}

// collectgarbage with the options that change no collector setting.
int sandbox_collectgarbage(lua_State* L) {
  const char* opt = luaL_optstring(L, 1, "collect");
  static constexpr const char* kAllowed[] = {"collect", "count", "step", "isrunning"};
  bool ok = false;
  for (const char* a : kAllowed) ok = ok || std::strcmp(opt, a) == 0;
  if (!ok) {
    luaL_argerror(
        L, 1,
        lua_pushfstring(L,
                        "option '%s' is not allowed in the sandbox (collect, count, step and "
                        "isrunning are)",
                        opt));
  }
  luaL_optinteger(L, 2, 0);  // "step": its size, checked here to be named in the message
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// string.rep(s, n [, sep]): an empty result is made at once (Lua's loop would copy nothing n
// times, unstoppable for a huge n); others are bounded by the heap limit.
int sandbox_rep(lua_State* L) {
  size_t l = 0, lsep = 0;
  luaL_checklstring(L, 1, &l);
  const lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || (l == 0 && lsep == 0)) {
    lua_pushliteral(L, "");
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// table.move(a1, f, e, t [, a2]) in steps of 4096 elements with the limits checked between them
// (Lua's loop over a huge range of nils allocates nothing and runs no Lua instruction).
int sandbox_move(lua_State* L) {
  const lua_Integer f = luaL_checkinteger(L, 2);
  const lua_Integer e = luaL_checkinteger(L, 3);
  const lua_Integer t = luaL_checkinteger(L, 4);
  const int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
  luaL_checkany(L, 1);
  luaL_checkany(L, tt);
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    const lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    constexpr lua_Integer kStep = 4096;
    const bool backward = t > f && t <= e && lua_compare(L, 1, tt, LUA_OPEQ);
    Sandbox* box = Sandbox::of(L);
    for (lua_Integer done = 0; done < n; done += kStep) {
      const lua_Integer count = std::min(kStep, n - done);
      const lua_Integer from = backward ? e - done - count + 1 : f + done;
      lua_pushvalue(L, lua_upvalueindex(1));
      lua_pushvalue(L, 1);
      lua_pushinteger(L, from);
      lua_pushinteger(L, from + count - 1);
      lua_pushinteger(L, t + (from - f));
      lua_pushvalue(L, tt);
      lua_call(L, 5, 0);
      if (box && done + count < n) box->poke(L);
    }
  }
  lua_settop(L, tt);
  return 1;
}

// Steps of the table functions below between checks of the limits.
constexpr lua_Integer kTableStep = 4096;

// ltablib's checktab: a table, or a value whose metatable has the fields the function needs.
void check_table(lua_State* L, int arg, bool read, bool write) {
  if (lua_type(L, arg) == LUA_TTABLE) return;
  int n = 1;
  const auto field = [&](const char* key) {
    lua_pushstring(L, key);
    ++n;
    return lua_rawget(L, -n) != LUA_TNIL;
  };
  if (lua_getmetatable(L, arg) && (!read || field("__index")) && (!write || field("__newindex")) &&
      field("__len")) {
    lua_pop(L, n);
  } else {
    luaL_checktype(L, arg, LUA_TTABLE);  // the error
  }
}

// table.insert and table.remove as Lua 5.4's (the same checks and messages), with the limits
// checked every kTableStep elements moved: a huge __len made Lua's loop run on with no Lua
// instruction, no allocation, no hook.
int sandbox_insert(lua_State* L) {
  check_table(L, 1, true, true);
  const lua_Integer e = static_cast<lua_Integer>(static_cast<lua_Unsigned>(luaL_len(L, 1)) + 1u);
  lua_Integer pos = e;
  switch (lua_gettop(L)) {
    case 2:
      break;
    case 3: {
      pos = luaL_checkinteger(L, 2);
      luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u < static_cast<lua_Unsigned>(e), 2,
                    "position out of bounds");
      Sandbox* box = Sandbox::of(L);
      for (lua_Integer i = e, n = 1; i > pos; --i, ++n) {
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i);
        if (box && n % kTableStep == 0) box->poke(L);
      }
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  lua_seti(L, 1, pos);
  return 0;
}

int sandbox_remove(lua_State* L) {
  check_table(L, 1, true, true);
  const lua_Integer size = luaL_len(L, 1);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size) {
    luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u <= static_cast<lua_Unsigned>(size), 2,
                  "position out of bounds");
  }
  Sandbox* box = Sandbox::of(L);
  lua_geti(L, 1, pos);
  for (lua_Integer n = 1; pos < size; ++pos, ++n) {
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
    if (box && n % kTableStep == 0) box->poke(L);
  }
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}

// table.concat as Lua 5.4's, the limits checked every kTableStep elements (a huge range whose
// values come from a C function __index ran on unchecked).
int sandbox_concat(lua_State* L) {
  check_table(L, 1, true, false);
  lua_Integer last = luaL_len(L, 1);
  size_t lsep = 0;
  const char* sep = luaL_optlstring(L, 2, "", &lsep);
  lua_Integer i = luaL_optinteger(L, 3, 1);
  last = luaL_optinteger(L, 4, last);
  Sandbox* box = Sandbox::of(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  const auto add = [&](lua_Integer at) {
    lua_geti(L, 1, at);
    if (!lua_isstring(L, -1)) {
      luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1),
                 static_cast<LUAI_UACINT>(at));
    }
    luaL_addvalue(&b);
  };
  for (lua_Integer n = 1; i < last; ++i, ++n) {
    add(i);
    luaL_addlstring(&b, sep, lsep);
    if (box && n % kTableStep == 0) box->poke(L);
  }
  if (i == last) add(i);
  luaL_pushresult(&b);
  return 1;
}

// The comparison of the sandbox's table.sort: the script's function (upvalue 1) or `<`, with the
// limits checked every kTableStep calls (upvalue 2 counts them).
int sandbox_sort_less(lua_State* L) {
  const lua_Integer calls = lua_tointeger(L, lua_upvalueindex(2)) + 1;
  lua_pushinteger(L, calls);
  lua_replace(L, lua_upvalueindex(2));
  if (calls % kTableStep == 0) {
    if (Sandbox* box = Sandbox::of(L)) box->poke(L);
  }
  if (lua_isnil(L, lua_upvalueindex(1))) {
    lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_call(L, 2, 1);
  return 1;
}

// table.sort(t [, comp]) through sandbox_sort_less: Lua's sort over a huge __len with a C function
// __index compared values with no Lua instruction in between.
int sandbox_sort(lua_State* L) {
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  lua_pushvalue(L, 2);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, sandbox_sort_less, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 3);
  lua_call(L, 2, 0);
  return 0;
}

// Replaces the function `name` of the table at -1 by `wrapper` with the original as upvalue.
void wrap(lua_State* L, const char* name, lua_CFunction wrapper) {
  if (lua_getfield(L, -1, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, -2, name);
}

}  // namespace

Sandbox::Sandbox(SandboxLimits limits) : limits_(std::move(limits)) {
  files_.writable = limits_.output_files;
  if (limits_.instructions > 0 && limits_.instructions < static_cast<uint64_t>(step_)) {
    step_ = static_cast<int>(limits_.instructions);
  }
  if (limits_.time_s > 0) {
    wait_message_ = "the sandbox's time limit of " + seconds_text(limits_.time_s) +
                    " was exceeded while waiting for the device (queued device work continues)";
  }
}

Sandbox::~Sandbox() {
  if (watchdog_.joinable()) {
    {
      std::lock_guard lock(watch_m_);
      watch_stop_ = true;
    }
    watch_cv_.notify_all();
    watchdog_.join();
  }
  if (active_) {
    set_wait_deadline(0, nullptr);
    set_file_policy(nullptr);
  }
}

void Sandbox::enable_watchdog(double grace_s, std::function<void()> on_stuck) {
  if (watchdog_.joinable() || limits_.time_s <= 0) return;
  watch_grace_ns_ = static_cast<int64_t>(std::min(grace_s, 1e9) * 1e9);
  on_stuck_ = std::move(on_stuck);
  watchdog_ = std::thread([this] {
    std::unique_lock lock(watch_m_);
    while (!watch_stop_) {
      if (watch_deadline_ns_ == 0) {
        watch_cv_.wait(lock);
        continue;
      }
      const uint64_t entry = watch_entry_;
      const int64_t end_at = watch_deadline_ns_ + watch_grace_ns_;
      const int64_t left = end_at - steady_now_ns();
      if (left > 0) {
        watch_cv_.wait_for(lock, std::chrono::nanoseconds(left));
        continue;
      }
      if (entry == watch_entry_ && watch_deadline_ns_ != 0 && on_stuck_) {
        if (stuck_reported_ != entry) {
          stuck_reported_ = entry;
          lock.unlock();
          on_stuck_();  // (must not throw: it runs on the watchdog's own thread)
          lock.lock();
        }
        watch_cv_.wait(
            lock, [&] { return watch_stop_ || watch_entry_ != entry || watch_deadline_ns_ == 0; });
        continue;
      }
      if (entry == watch_entry_ && watch_deadline_ns_ != 0) {
        std::fprintf(stderr,
                     "culua: the sandbox's time limit of %s was exceeded inside one call of a C "
                     "function (a pattern match over a long string?): ending the process\n",
                     seconds_text(limits_.time_s).c_str());
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  });
}

Sandbox* Sandbox::of(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, kSandboxKey);
  auto* s = static_cast<Sandbox*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return s;
}

void* Sandbox::allocate(void* ud, void* ptr, size_t osize, size_t nsize) noexcept {
  auto* s = static_cast<Sandbox*>(ud);
  const uint64_t old = ptr ? osize : 0;
  const uint64_t base = s->heap_used_ > old ? s->heap_used_ - old : 0;
  if (nsize > old && s->limits_.heap_bytes > 0 && base + nsize > s->limits_.heap_bytes) {
    s->heap_refused_ = true;
    return nullptr;  // Lua collects garbage in an emergency and tries once more
  }
  void* p = s->base_alloc_(s->base_ud_, ptr, osize, nsize);
  if (p || nsize == 0) s->heap_used_ = base + nsize;
  return p;
}

void Sandbox::trim_environment(lua_State* L) {
  lua_pushglobaltable(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  const int g = lua_absindex(L, -2), loaded = lua_absindex(L, -1);
  for (const char* name : {"io", "debug"}) {
    lua_pushnil(L);
    lua_setfield(L, g, name);
    lua_pushnil(L);
    lua_setfield(L, loaded, name);
  }
  for (const char* name : {"dofile", "loadfile"}) {
    lua_pushnil(L);
    lua_setfield(L, g, name);
  }
  // os: time, clock and date only.
  if (lua_getfield(L, g, "os") == LUA_TTABLE) {
    lua_createtable(L, 0, 3);
    for (const char* name : {"time", "clock", "date"}) {
      lua_getfield(L, -2, name);
      lua_setfield(L, -2, name);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "os");
    lua_setfield(L, loaded, "os");
  }
  lua_pop(L, 1);
  lua_pushvalue(L, g);
  wrap(L, "load", sandbox_load);
  wrap(L, "setmetatable", sandbox_setmetatable);
  wrap(L, "getmetatable", sandbox_getmetatable);
  wrap(L, "collectgarbage", sandbox_collectgarbage);
  wrap(L, "xpcall", sandbox_xpcall);
  lua_pop(L, 1);
  if (lua_getfield(L, g, "string") == LUA_TTABLE) {
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    wrap(L, "rep", sandbox_rep);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, g, "table") == LUA_TTABLE) {
    wrap(L, "move", sandbox_move);
    wrap(L, "sort", sandbox_sort);
    // (Replaced outright: the sandbox's versions do all that Lua's do.)
    lua_pushcfunction(L, sandbox_insert);
    lua_setfield(L, -2, "insert");
    lua_pushcfunction(L, sandbox_remove);
    lua_setfield(L, -2, "remove");
    lua_pushcfunction(L, sandbox_concat);
    lua_setfield(L, -2, "concat");
  }
  lua_pop(L, 1);
  // package: require finds only preloaded modules (culua's own: cu, cu.testing, cu.help); no C
  // libraries, no files.
  if (lua_getfield(L, g, "package") == LUA_TTABLE) {
    for (const char* name : {"loadlib", "searchpath"}) {
      lua_pushnil(L);
      lua_setfield(L, -2, name);
    }
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "path");
    lua_pushliteral(L, "");
    lua_setfield(L, -2, "cpath");
    lua_createtable(L, 1, 0);
    if (lua_getfield(L, -2, "searchers") == LUA_TTABLE) {
      lua_rawgeti(L, -1, 1);  // the preload searcher
      lua_rawseti(L, -3, 1);
    }
    lua_pop(L, 1);
    lua_setfield(L, -2, "searchers");
  }
  lua_pop(L, 3);
}

void Sandbox::install(lua_State* L, Runtime& rt, InterruptFlag* interrupt) {
  main_ = L;
  rt_ = &rt;
  interrupt_ = interrupt;
  lua_pushlightuserdata(L, this);
  lua_rawsetp(L, LUA_REGISTRYINDEX, kSandboxKey);
  trim_environment(L);
  rt.set_memory_quota(limits_.memory_bytes);
  lua_gc(L, LUA_GCCOLLECT);
  base_alloc_ = lua_getallocf(L, &base_ud_);
  heap_used_ = static_cast<uint64_t>(lua_gc(L, LUA_GCCOUNT)) * 1024 +
               static_cast<uint64_t>(lua_gc(L, LUA_GCCOUNTB));
  lua_setallocf(L, allocate, this);
  lua_sethook(L, hook, LUA_MASKCOUNT, step_);
}

void Sandbox::enter(lua_State* L) {
  if (depth_++ == 0) {
    active_ = true;
    exceeded_ = false;
    heap_refused_ = false;
    instructions_ = 0;
    message_.clear();
    deadline_ns_ = limits_.time_s > 0
                       ? steady_now_ns() + static_cast<int64_t>(std::ceil(limits_.time_s * 1e9))
                       : 0;
    set_wait_deadline(deadline_ns_, &wait_message_);
    set_file_policy(&files_);
    if (watchdog_.joinable()) {
      {
        std::lock_guard lock(watch_m_);
        ++watch_entry_;
        watch_deadline_ns_ = deadline_ns_;
      }
      watch_cv_.notify_all();
    }
  }
  lua_sethook(L, hook, LUA_MASKCOUNT, step_);
}

int Sandbox::leave(lua_State* L, int status) {
  if (depth_ > 0 && --depth_ == 0) {
    // An entry a limit or an interrupt ended: the host work it queued stops too (it would
    // otherwise run on past every limit, unseen), and the next entry finds the backend free.
    const bool out_of_time = deadline_ns_ != 0 && steady_now_ns() >= deadline_ns_;
    const bool interrupted = interrupt_ && interrupt_->requested();
    if (status != LUA_OK && rt_ && (exceeded_ || heap_refused_ || out_of_time || interrupted)) {
      rt_->cut_short_queued_work();
    }
    last_deadline_ns_ = deadline_ns_;
    active_ = false;
    set_wait_deadline(0, nullptr);
    set_file_policy(nullptr);
    if (watchdog_.joinable()) {
      {
        std::lock_guard lock(watch_m_);
        watch_deadline_ns_ = 0;
      }
      watch_cv_.notify_all();
    }
  }
  lua_sethook(L, hook, LUA_MASKCOUNT, step_);
  if (status == LUA_ERRMEM && heap_refused_) {
    lua_pop(L, 1);
    const std::string m = failure_message();
    lua_pushlstring(L, m.data(), m.size());
  }
  return status;
}

bool Sandbox::wait_for_queued_work(Runtime& rt, bool fresh_budget, std::string* message) noexcept {
  const int64_t deadline =
      limits_.time_s <= 0 ? 0
      : fresh_budget      ? steady_now_ns() + static_cast<int64_t>(std::ceil(limits_.time_s * 1e9))
                          : last_deadline_ns_;
  if (deadline == 0) return true;  // no time limit: the runtime's teardown waits, as without one
  const std::string text = "the sandbox's time limit of " + seconds_text(limits_.time_s) +
                           " was exceeded while waiting for the device work still queued " +
                           (fresh_budget ? "at the teardown" : "when the script ended");
  set_wait_deadline(deadline, &text);
  bool done = true;
  try {
    rt.synchronize_all_devices();
  } catch (const Error& e) {
    // Another error (a fatal device error) leaves nothing to wait for: the teardown sees to it.
    done = e.kind() != ErrorKind::Limit;
    if (!done && message) *message = text;
  } catch (const std::exception&) {
  }
  set_wait_deadline(0, nullptr);
  return done;
}

bool Sandbox::charge_heap(int64_t delta) noexcept {
  if (delta < 0) {
    const auto give = static_cast<uint64_t>(-delta);
    heap_used_ = heap_used_ > give ? heap_used_ - give : 0;
    return true;
  }
  const auto take = static_cast<uint64_t>(delta);
  if (limits_.heap_bytes > 0 && heap_used_ + take > limits_.heap_bytes) return false;
  heap_used_ += take;
  return true;
}

std::string Sandbox::failure_message() const {
  if (exceeded_) return message_;
  if (heap_refused_) {
    return "not enough memory: the sandbox's Lua heap limit of " +
           format_limit_bytes(limits_.heap_bytes) + " was reached";
  }
  return {};
}

bool Sandbox::stopping() const {
  return exceeded_ || (active_ && interrupt_ && interrupt_->requested());
}

const char* Sandbox::failure_kind() const {
  if (exceeded_) return "limit";
  if (heap_refused_) return "out_of_memory";
  return "";
}

void Sandbox::poke(lua_State* L) {
  if (!active_) return;
  if (!exceeded_ && deadline_ns_ != 0 && steady_now_ns() >= deadline_ns_) {
    exceeded_ = true;
    message_ = "the sandbox's time limit of " + seconds_text(limits_.time_s) + " was exceeded";
  }
  if (exceeded_) {
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    raise_limit(L, message_);
  }
}

void Sandbox::interrupt_now(lua_State* L) noexcept {
  lua_sethook(L, hook, LUA_MASKCOUNT, 1);
}

void Sandbox::hook(lua_State* L, lua_Debug*) {
  Sandbox* s = of(L);
  if (!s) return;
  const int count = lua_gethookcount(L);
  if (!s->active_) {
    if (count != s->step_) lua_sethook(L, hook, LUA_MASKCOUNT, s->step_);
    return;
  }
  if (s->interrupt_ && s->interrupt_->requested()) {
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);  // until the entry ends: pcall cannot hold it
    luaL_error(L, "interrupted!");
  }
  s->instructions_ += static_cast<uint64_t>(count);
  if (!s->exceeded_) {
    if (s->limits_.instructions > 0 && s->instructions_ > s->limits_.instructions) {
      s->exceeded_ = true;
      s->message_ = fmt::format("the sandbox's instruction limit of {} was exceeded",
                                s->limits_.instructions);
    } else if (s->deadline_ns_ != 0 && steady_now_ns() >= s->deadline_ns_) {
      s->exceeded_ = true;
      s->message_ =
          "the sandbox's time limit of " + seconds_text(s->limits_.time_s) + " was exceeded";
    }
  }
  if (s->exceeded_) {
    // Every instruction of this thread raises from now on, so that a pcall in a loop cannot
    // catch its way past the limit (other threads: at their next count).
    if (count != 1) lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    raise_limit(L, s->message_);
  }
  if (count != s->step_) lua_sethook(L, hook, LUA_MASKCOUNT, s->step_);
}

void sandbox_enter(lua_State* L) {
  if (Sandbox* s = Sandbox::of(L)) {
    s->enter(L);
  } else {
    lua_sethook(L, nullptr, 0, 0);
  }
}

int sandbox_leave(lua_State* L, int status) {
  if (Sandbox* s = Sandbox::of(L)) return s->leave(L, status);
  lua_sethook(L, nullptr, 0, 0);
  return status;
}

const char* load_mode(lua_State* L) {
  return Sandbox::of(L) ? "t" : nullptr;
}

}  // namespace culua::detail::lua
