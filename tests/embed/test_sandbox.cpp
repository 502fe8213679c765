// Options::sandbox (docs/sandbox.md) on the host backend: every escape tried ends in a clear
// error, and the Runtime runs the next call.
#include <catch2/catch.hpp>
#include <culua/culua.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

namespace {

culua::Options sandboxed(double seconds = 1) {
  culua::Options o;
  o.backend = culua::Backend::Host;
  o.sandbox.enabled = true;
  o.sandbox.time_limit = seconds;
  o.sandbox.heap_limit = uint64_t{32} << 20;
  o.sandbox.memory_limit = uint64_t{64} << 20;
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `code`, expects culua::Error whose message contains `text` (and whose kind is `kind`
// when given), then checks that the runtime still works.
void expect_error(culua::Runtime& rt, const std::string& code, const std::string& text,
                  const std::string& kind = "") {
  INFO(code);
  bool thrown = false;
  try {
    rt.run_string(code, "=(test)");
  } catch (const culua::Error& e) {
    thrown = true;
    INFO(e.what());
    CHECK(e.message().find(text) != std::string::npos);
    if (!kind.empty()) CHECK(e.kind() == kind);
  }
  CHECK(thrown);
  CHECK(rt.eval<int>("1 + 1") == 2);
  rt.run_string("local t = {} for i = 1, 1000 do t[i] = i end assert(#t == 1000)");
}

// Runs `code` (which must finish) and returns the global `r` as a string.
std::string result(culua::Runtime& rt, const std::string& code) {
  rt.run_string(code, "=(test)");
  return rt.get<std::string>("r");
}

}  // namespace

TEST_CASE("sandbox: the allow-list environment") {
  culua::Runtime rt(sandboxed());
  CHECK(result(rt, "r = tostring(io) .. ' ' .. tostring(debug)") == "nil nil");
  CHECK(result(rt, "r = tostring(dofile) .. ' ' .. tostring(loadfile)") == "nil nil");
  CHECK(result(rt,
               "local n = {} for k in pairs(os) do n[#n + 1] = k end table.sort(n) "
               "r = table.concat(n, ',')") == "clock,date,time");
  CHECK(result(rt, "r = type(os.time()) .. type(os.clock()) .. type(os.date('%Y'))") ==
        "numbernumberstring");
  CHECK(result(rt, "r = tostring(string.dump) .. tostring(('').dump)") == "nilnil");
  CHECK(result(rt,
               "r = tostring(package.loadlib) .. tostring(package.searchpath) .. "
               "package.path .. package.cpath .. #package.searchers") == "nilnil1");
  // _G and package.loaded do not lead to the removed libraries.
  CHECK(result(rt,
               "r = tostring(_G.io) .. tostring(package.loaded.io) .. "
               "tostring(package.loaded.debug) .. tostring(package.loaded.os.execute) .. "
               "tostring(_ENV.os.exit)") == "nilnilnilnilnil");
  // The culua modules are still there, also through require.
  CHECK(result(rt, "r = tostring(require('cu') == cu) .. type(require('cu.testing'))") ==
        "truetable");
  CHECK(result(rt, "local a = cu.ones(4) r = tostring(a:sum():item())") == "4.0");
  expect_error(rt, "require 'io'", "module 'io' not found");
  expect_error(rt, "require 'lfs'", "module 'lfs' not found");
  CHECK(result(rt, "r = tostring(require('os') == os)") == "true");
  // A script may change its own environment; the next call sees the change, nothing more.
  rt.run_string("cu.ones = function() return 'mine' end");
  CHECK(rt.eval<std::string>("cu.ones()") == "mine");
}

TEST_CASE("sandbox: no bytecode and no files through load") {
  culua::Runtime rt(sandboxed());
  CHECK(result(rt, "r = load('return 1 + 2')() .. ''") == "3");
  // A binary chunk as a string, through a reader function, with mode "b" or "bt" asked for.
  const std::string binary = "'\\27Lua\\x54\\0\\x19\\x93\\r\\n\\x1a\\n'";
  CHECK(result(rt, "local f, e = load(" + binary + ") r = e") ==
        "attempt to load a binary chunk (mode is 't')");
  CHECK(result(rt, "local f, e = load(" + binary + ", 'x', 'b') r = e") ==
        "attempt to load a binary chunk (mode is 't')");
  CHECK(result(rt, "local s = " + binary +
                       " local done = false "
                       "local f, e = load(function() if done then return nil end done = true "
                       "return s end, 'reader', 'bt') r = e") ==
        "attempt to load a binary chunk (mode is 't')");
  // A reader of text pieces still works; so does an explicit environment (nil included).
  CHECK(result(rt,
               "local parts = {'return ', '4', '2'} local i = 0 "
               "r = load(function() i = i + 1 return parts[i] end)() .. ''") == "42");
  CHECK(result(rt, "local f = load('return x', 'c', 't', {x = 'env'}) r = f()") == "env");
  CHECK(result(rt, "local f = load('return print', 'c', 't', nil) r = tostring(f == nil)") ==
        "false");
  // A chunk named after a file is renamed: nothing reads the file.
  CHECK(result(rt,
               "local f = load('error(\"x\")', '@/etc/passwd') local _, e = pcall(f) "
               "r = e") == "/etc/passwd:1: x");
  expect_error(rt, "load(42)",
               "bad argument #1 to 'load' (string or function expected, got number)");
  // run_string itself loads text only.
  expect_error(rt, "\x1bLua", "attempt to load a binary chunk");
}

TEST_CASE("sandbox: shared metatables stay out of reach") {
  culua::Runtime rt(sandboxed());
  CHECK(result(rt, "r = tostring(getmetatable(''))") == "false");
  CHECK(result(rt, "r = tostring(getmetatable(cu.ones(2)))") == "false");
  CHECK(result(rt, "local ok, e = pcall(cu.zeros, -1) r = tostring(getmetatable(e))") == "false");
  // A script's own metatables are its own.
  CHECK(result(rt,
               "local mt = {} local t = setmetatable({}, mt) "
               "r = tostring(getmetatable(t) == mt)") == "true");
  // No change of the string methods through the metatable; string.x = ... changes the script's
  // own string table only (what the next call sees as well).
  expect_error(rt, "getmetatable('').__index = {}", "attempt to index a boolean value");
  expect_error(rt, "rawset(getmetatable(''), '__index', {})",
               "bad argument #1 to 'rawset' (table expected, got boolean)");
  expect_error(rt, "setmetatable('', {})", "bad argument #1 to 'setmetatable'");
  // __gc metamethods of scripts are refused (Lua runs finalizers with hooks off).
  expect_error(rt, "setmetatable({}, {__gc = function() while true do end end})",
               "bad argument #2 to 'setmetatable' (a metatable with __gc");
  // Added later, __gc does not mark the table (Lua's rule): collecting it runs nothing.
  rt.run_string(
      "local mt = {} local t = setmetatable({}, mt) "
      "mt.__gc = function() while true do end end t = nil collectgarbage()");
  // __index chains and __close handlers run under the limits.
  expect_error(rt,
               "local t = setmetatable({}, {__index = function(t, k) return t[k .. 'x'] end}) "
               "return t.a",
               "");
  expect_error(
      rt, "do local x <close> = setmetatable({}, {__close = function() while true do end end}) end",
      "time limit of 1 s was exceeded", "limit");
}

TEST_CASE("sandbox: collectgarbage keeps its settings") {
  culua::Runtime rt(sandboxed());
  CHECK(result(rt,
               "collectgarbage() collectgarbage('step') "
               "r = math.type(collectgarbage('count')) .. tostring(collectgarbage('isrunning'))") ==
        "floattrue");
  for (const char* opt : {"stop", "restart", "setpause", "setstepmul"}) {
    expect_error(rt, std::string("collectgarbage('") + opt + "')",
                 std::string("bad argument #1 to 'collectgarbage' (option '") + opt +
                     "' is not allowed in the sandbox");
  }
}

TEST_CASE("sandbox: the time limit stops loops that catch its error") {
  culua::Runtime rt(sandboxed(0.5));
  const auto timed = [&](const std::string& code) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_error(rt, code, "the sandbox's time limit of 0.5 s was exceeded", "limit");
    CHECK(seconds_since(t0) < 3);
  };
  timed("while true do end");
  timed("local function f() return f() end f()");  // a tail call loop: no stack growth
  timed("while true do pcall(function() while true do end end) end");
  timed("for i = 1, math.huge do local ok = pcall(error, 'x') end");
  timed("while true do xpcall(function() while true do end end, function(m) return m end) end");
  // An error handler that loops.
  timed("xpcall(function() error('x') end, function() while true do end end)");
  timed("while true do xpcall(error, function() while true do end end, 'x') end");
  // Coroutines inherit the hook; a coroutine that catches the error does not hold it.
  timed("local co = coroutine.wrap(function() while true do end end) co()");
  timed("while true do coroutine.resume(coroutine.create(function() while true do end end)) end");
  timed(
      "while true do pcall(coroutine.wrap(function() while true do pcall(function() while true "
      "do end end) end end)) end");
  timed(
      "local co = coroutine.create(function() while true do coroutine.yield() end end) "
      "while true do coroutine.resume(co) end");
  // A coroutine made in an earlier call and resumed later runs under the new call's budget.
  rt.run_string("spin = coroutine.wrap(function() while true do coroutine.yield(1) end end)");
  CHECK(rt.eval<int>("spin()") == 1);
  timed("while true do spin() end");
  // C functions that loop: string.rep of an empty string, table.move over a huge range.
  CHECK(result(rt, "r = '[' .. string.rep('', 1 << 60) .. string.rep('', 1 << 60, '') .. ']'") ==
        "[]");
  timed("table.move({}, 1, math.maxinteger - 1, 2)");
  CHECK(result(rt, "local t = table.move({1, 2, 3, 4, 5}, 1, 4, 2) r = table.concat(t, ',')") ==
        "1,1,2,3,4");
  CHECK(result(rt, "local t = table.move({1, 2, 3, 4, 5}, 2, 5, 1) r = table.concat(t, ',')") ==
        "2,3,4,5,5");
  // cu.sweep catches errors of its points: the limit ends the sweep instead.
  timed("cu.sweep{axes = {n = {1, 2, 3}, m = {1, 2}}, run = function() while true do end end}");
}

TEST_CASE("sandbox: each call has a time budget of its own") {
  culua::Runtime rt(sandboxed(2));
  // Three calls that wait 0.8 s each for the (host) device: more than the limit together.
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) rt.run_string("cu.sleep(800) cu.sync()");
  CHECK(seconds_since(t0) > 2.4);
}

TEST_CASE("sandbox: the time limit stops a wait for the device") {
  culua::Runtime rt(sandboxed(0.5));
  const auto t0 = std::chrono::steady_clock::now();
  // The stream sleeps 30 s; the wait for it raises at the limit (the sleep goes on).
  expect_error(rt, "cu.sleep(30000) cu.sync()", "time limit of 0.5 s was exceeded while waiting",
               "limit");
  CHECK(seconds_since(t0) < 3);
  // Caught by the script, the limit then ends the loop that follows.
  const auto t1 = std::chrono::steady_clock::now();
  expect_error(rt, "pcall(cu.sync) while true do end", "time limit of 0.5 s was exceeded", "limit");
  CHECK(seconds_since(t1) < 3);
  // The runtime goes away at once: the queued sleep is not waited for.
}

TEST_CASE("sandbox: the time limit stops host kernels, and what the entry queued") {
  culua::Runtime rt(sandboxed(0.5));
  // A reduction over a huge broadcast view: its chunks look at the limit (before, it ran on for
  // minutes after the entry ended, and a 2^59-element view grew gigabytes of partials).
  for (const char* n : {"1 << 40", "1 << 59"}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_error(rt, std::string("r = cu.broadcast_to(cu.ones(1), {") + n + "}):sum():item()",
                 "time limit of 0.5 s was exceeded", "limit");
    CHECK(seconds_since(t0) < 3);
  }
  // The entry's queued work was cut short: the device is free at once for the next entry.
  try {
    rt.run_string("s = cu.broadcast_to(cu.ones(1), {1 << 40}):sum() while true do end");
  } catch (const culua::Error& e) {
    CHECK(e.kind() == "limit");
  }
  const auto t1 = std::chrono::steady_clock::now();
  rt.run_string("cu.sync() r = cu.ones(1000):sum():item()");
  CHECK(rt.get<double>("r") == 1000);
  CHECK(seconds_since(t1) < 0.5);
}

TEST_CASE("sandbox: an interrupt stops the host work its entry queued") {
  culua::Options o = sandboxed(0);  // no time limit
  culua::Runtime rt(o);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    rt.interrupt();
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(rt.run_string("r = cu.broadcast_to(cu.ones(1), {1 << 40}):sum():item()"),
                  culua::Error);
  t.join();
  CHECK(seconds_since(t0) < 3);
  const auto t1 = std::chrono::steady_clock::now();
  rt.run_string("cu.sync() r = cu.ones(10):sum():item()");
  CHECK(rt.get<double>("r") == 10);
  CHECK(seconds_since(t1) < 0.5);
}

TEST_CASE("sandbox: work still queued when the runtime goes is waited for within the limit") {
  const auto t0 = std::chrono::steady_clock::now();
  {
    culua::Runtime rt(sandboxed(0.5));
    rt.run_string("for i = 1, 100 do cu.sleep(3600000) end");  // returns at once
  }
  CHECK(seconds_since(t0) < 3);
  // Work that ends within the limit is waited for.
  culua::Array a;
  {
    culua::Runtime rt(sandboxed(2));
    rt.run_string("a = cu.zeros(1000) cu.sleep(300) a:fill(7)");
    a = rt.get<culua::Array>("a");
  }
  CHECK(a.to_vector<float>()[999] == 7);
}

TEST_CASE("sandbox: the stream limit") {
  culua::Options o = sandboxed(5);
  o.sandbox.stream_limit = 8;
  culua::Runtime rt(o);
  expect_error(rt, "keep = {} for i = 1, 9 do keep[i] = cu.stream() end",
               "the sandbox's stream limit of 8 was reached", "limit");
  rt.run_string("keep = nil for i = 1, 200 do local s = cu.stream() end");
  rt.run_string("local s <close> = cu.stream() local t <close> = cu.stream()");
}

TEST_CASE("sandbox: table functions over a huge __len end at the time limit") {
  culua::Runtime rt(sandboxed(0.5));
  const std::string huge = "setmetatable({}, {__len = function() return math.maxinteger - 1 end})";
  for (const std::string& code :
       {"table.insert(" + huge + ", 1, 5)", "table.remove(" + huge + ", 1)",
        std::string("table.concat(setmetatable({}, {__index = os.clock}), '', 1, 1 << 40)"),
        std::string("table.sort(setmetatable({}, {__len = function() return (1 << 31) - 2 end, "
                    "__index = os.clock, __newindex = rawequal}))")}) {
    const auto t0 = std::chrono::steady_clock::now();
    expect_error(rt, code, "time limit of 0.5 s was exceeded", "limit");
    CHECK(seconds_since(t0) < 3);
  }
}

TEST_CASE("sandbox: the watchdog calls on_stuck for a C call past the limit") {
  culua::Options o = sandboxed(0.2);
  std::atomic<int> stuck{0};
  o.sandbox.on_stuck = [&] { ++stuck; };
  o.sandbox.watchdog_grace = 0.1;
  culua::Runtime rt(o);
  // A pattern match that backtracks for a while in one C call (no hook runs inside it); the
  // watchdog sees the entry past its limit, then the limit ends the entry when the call returns.
  expect_error(rt, "local s = string.rep('a', 260) r = s:find('.-.-.-b') for i = 1, 1e6 do end",
               "time limit of 0.2 s was exceeded", "limit");
  CHECK(stuck == 1);
  rt.run_string("r = 1");  // a quick entry: no call
  CHECK(stuck == 1);
  o.sandbox.watchdog_grace = -1;
  CHECK_THROWS_WITH(culua::Runtime(o), Catch::Contains("Options::sandbox.watchdog_grace"));
}

TEST_CASE("sandbox: the instruction limit") {
  culua::Options o = sandboxed(0);
  o.sandbox.instruction_limit = 100000;
  culua::Runtime rt(o);
  expect_error(rt, "while true do end", "the sandbox's instruction limit of 100000 was exceeded",
               "limit");
  expect_error(rt, "while true do pcall(function() while true do end end) end",
               "instruction limit of 100000", "limit");
  rt.run_string("for i = 1, 1000 do end");  // well within
  // call(): each entry from C++ has its own budget.
  rt.run_string("function spin(n) for i = 1, n do end return n end");
  for (int i = 0; i < 5; ++i) CHECK(rt.call<int>("spin", 20000) == 20000);
  bool thrown = false;
  try {
    rt.call("spin", 10000000);
  } catch (const culua::Error& e) {
    thrown = true;
    CHECK(e.kind() == "limit");
  }
  CHECK(thrown);
  CHECK(rt.call<int>("spin", 10) == 10);
}

TEST_CASE("sandbox: the Lua heap limit") {
  culua::Runtime rt(sandboxed(5));
  const std::string heap = "not enough memory: the sandbox's Lua heap limit of 32 MiB was reached";
  expect_error(rt, "local s = string.rep('x', 1 << 30)", heap, "out_of_memory");
  expect_error(rt, "local t = {} for i = 1, math.huge do t[i] = i end", heap, "out_of_memory");
  expect_error(rt, "local s = 'x' while true do s = s .. s end", heap, "out_of_memory");
  expect_error(rt, "local t = {} for i = 1, math.huge do t[#t + 1] = tostring(i) .. 'abcdefgh' end",
               heap, "out_of_memory");
  expect_error(rt, "local t = {} while true do t = {t, t, {}} end", heap, "out_of_memory");
  expect_error(rt, "local t = {} for i = 1, math.huge do t[i] = coroutine.create(print) end", heap,
               "out_of_memory");
  // A script sees Lua's own error and may go on: the memory is free again.
  CHECK(result(rt,
               "local ok, e = pcall(string.rep, 'x', 1 << 30) "
               "local s = string.rep('y', 1 << 20) r = tostring(e) .. ' ' .. #s") ==
        "not enough memory 1048576");
  // Deep recursion ends in Lua's stack overflow (the C stack: Lua's own limit).
  // Deep recursion: the Lua stack grows past the heap limit first (or Lua's stack overflow).
  expect_error(rt, "local function f() return 1 + f() end f()", heap, "out_of_memory");
  expect_error(rt,
               "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) "
               "return t.x",
               "stack overflow");
  expect_error(rt, "local s = string.rep('(', 300) .. string.rep(')', 300) string.find('x', s)",
               "");
  expect_error(rt, "local function f() return coroutine.wrap(f)() end f()", "");
  rt.collect_garbage();
  CHECK(result(rt, "r = tostring(collectgarbage('count') < 32 * 1024)") == "true");
}

TEST_CASE("sandbox: the memory quota of culua's arrays") {
  culua::Runtime rt(sandboxed(5));
  const std::string quota = "the sandbox's memory quota is exhausted";
  expect_error(rt, "local a = cu.zeros(1 << 40)", quota, "out_of_memory");
  expect_error(rt, "local a = cu.zeros({1 << 20, 1 << 20})", "", "");
  expect_error(rt, "keep = {} for i = 1, math.huge do keep[i] = cu.zeros(1 << 20) end", quota,
               "out_of_memory");
  rt.run_string("keep = nil");
  // Many small arrays: the quota counts each.
  expect_error(rt, "keep = {} for i = 1, math.huge do keep[i] = cu.zeros(4096) end", "",
               "out_of_memory");
  rt.run_string("keep = nil");
  // Unreachable arrays are collected before a request is refused: a loop that drops its arrays
  // runs on, also past the quota in total.
  rt.run_string("for i = 1, 200 do local a = cu.zeros(1 << 20) end");
  rt.run_string("for i = 1, 40 do local a = cu.ones(1 << 20) a:free() end");
  CHECK(result(rt, "r = tostring(cu.ones(1000):sum():item())") == "1000.0");
  // Host arrays count too.
  expect_error(rt, "keep = {} for i = 1, math.huge do keep[i] = cu.host.zeros(1 << 20) end", "",
               "out_of_memory");
  rt.run_string("keep = nil");
}

TEST_CASE("sandbox: file writes and reads of culua") {
  const std::string allowed = "/tmp/culua_sandbox_test_allowed.json";
  const std::string refused = "/tmp/culua_sandbox_test_refused.json";
  std::remove(allowed.c_str());
  std::remove(refused.c_str());
  culua::Options o = sandboxed(10);
  o.sandbox.output_files = {allowed};
  culua::Runtime rt(o);
  const std::string sweep =
      "res = cu.sweep{axes = {n = {1, 2}}, run = function(p) return {ms = p.n} end, quiet = true";
  expect_error(rt, sweep + ", json = '" + refused + "'}",
               "the sandbox does not allow writing '" + refused + "'");
  expect_error(rt, sweep + ", csv = '" + refused + "'}", "does not allow writing");
  expect_error(rt, sweep + "} res:write_json('" + refused + "')", "does not allow writing",
               "limit");
  expect_error(rt, sweep + "} res:write_csv('" + refused + "')", "does not allow writing", "limit");
  expect_error(rt, "cu.trace.start() cu.trace.stop('" + refused + "')", "does not allow writing",
               "limit");
  expect_error(rt, sweep + "} res:plot{file = '/tmp/culua_sandbox_test_refused.png'}",
               "does not allow writing");
  expect_error(rt,
               "cu.plot({{x = 1, y = 2}}, {x = 'x', y = 'y', file = "
               "'/tmp/culua_sandbox_test_refused.svg'})",
               "does not allow writing");
  CHECK_FALSE(std::ifstream(refused).good());
  // The file the application allowed is written.
  rt.run_string(sweep + "} res:write_json('" + allowed + "')");
  CHECK(std::ifstream(allowed).good());
  std::remove(allowed.c_str());
}

TEST_CASE("sandbox: run-time kernels may not read files") {
  culua::Runtime rt(sandboxed(10));
  // Refused before the compiler is looked for (the host backend has none).
  expect_error(rt, "cu.compile('#include \"/etc/passwd\"\\n__global__ void k() {}')",
               "the sandbox does not allow 'include' in kernel source", "limit");
  expect_error(rt, "cu.compile('%:include </etc/passwd>\\n__global__ void k() {}')",
               "does not allow 'include'", "limit");
  expect_error(rt, "cu.compile('__global__ void k() {}', {include_paths = {'/etc'}})",
               "does not allow include paths", "limit");
  expect_error(rt,
               "cu.compile('__global__ void k() {}', {options = {'--pre-include=/etc/passwd'}})",
               "does not allow the compiler option '--pre-include=/etc/passwd'", "limit");
  expect_error(rt, "cu.compile('__global__ void k() {}', {options = {'-I/etc'}})",
               "does not allow the compiler option '-I/etc'", "limit");
}

TEST_CASE("sandbox: interrupt() is not held by pcall") {
  culua::Runtime rt(sandboxed(0));  // no time limit: only the interrupt ends it
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    rt.interrupt();
  });
  bool thrown = false;
  try {
    rt.run_string("while true do pcall(function() while true do end end) end");
  } catch (const culua::Error& e) {
    thrown = true;
    CHECK(e.message().find("interrupted!") != std::string::npos);
  }
  t.join();
  CHECK(thrown);
  CHECK(rt.eval<int>("2 + 2") == 4);
}

TEST_CASE("sandbox: destroying a runtime after escapes does not hang") {
  const auto t0 = std::chrono::steady_clock::now();
  {
    culua::Runtime rt(sandboxed(0.3));
    rt.run_string(
        "keep = {} for i = 1, 10 do keep[i] = setmetatable({}, {}) end "
        "co = coroutine.create(function() local x <close> = setmetatable({}, "
        "{__close = function() while true do end end}) coroutine.yield() end) "
        "coroutine.resume(co)");
    try {
      rt.run_string("cu.sleep(60000) cu.sync()");
    } catch (const culua::Error&) {
    }
  }
  CHECK(seconds_since(t0) < 10);
}

TEST_CASE("sandbox: bad options") {
  culua::Options o = sandboxed();
  o.sandbox.time_limit = -1;
  CHECK_THROWS_WITH(culua::Runtime(o), Catch::Contains("Options::sandbox.time_limit"));
}
