// One run of the culua program in its Lua state, as lua.c's pmain: LUA_INIT, the -e chunks, -l
// modules and -W in order, then the Jupyter kernel, the script, the REPL or standard input; -v's
// banner, --install-kernel, and the reports after the run (--warm-cache, queued device work).
#include "cli/run_modes.hpp"

#include <unistd.h>
#include <lua.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "cli/interpreter.hpp"
#if defined(CULUA_HAVE_JUPYTER)
#include "jupyter/kernel.hpp"
#endif
#include "core/base/error.hpp"
#include "core/version.hpp"
#include "host/host_blas.hpp"
#include "lua/cu_module.hpp"
#include "lua/sandbox.hpp"
#include "rtc/cuda_architectures.hpp"
#include "rtc/kernel_cache.hpp"

namespace culua::detail::cli {

namespace {

void print_version() {
#if defined(CULUA_HAVE_CUDA)
  // The device code of the built-in kernels: machine code (sm_NN) and PTX (compute_NN).
  const std::string archs = culua::detail::rtc::describe_cuda_architectures(
      culua::detail::rtc::built_cuda_architectures());
#else
  const std::string archs = "none (host backend only)";
#endif
  std::printf("culua %s (%s, %s)\nhost BLAS: %s\nCUDA architectures: %s\n%s\n", CULUA_VERSION,
              LUA_RELEASE,
#if defined(CULUA_HAVE_CUDA)
              "CUDA backend and host backend",
#else
              "host backend only: built without CUDA",
#endif
              culua::detail::host::blas_library().c_str(), archs.c_str(), LUA_COPYRIGHT);
  std::fflush(stdout);
}

int run_chunk(lua_State* L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
}

// LUA_INIT_5_4 or LUA_INIT as lua.c runs it: "@FILE" runs a file, anything else is code.
int run_lua_init(lua_State* L) {
  const char* name = "=LUA_INIT_5_4";
  const char* init = std::getenv("LUA_INIT_5_4");
  if (!init) {
    name = "=LUA_INIT";
    init = std::getenv("LUA_INIT");
  }
  if (!init) return LUA_OK;
  if (init[0] == '@') return run_chunk(L, luaL_loadfile(L, init + 1));
  return run_chunk(L, luaL_loadbuffer(L, init, std::strlen(init), name));
}

int require_module(lua_State* L, const std::string& spec) {
  // "-l name" sets global name = require("name"); "-l g=name" sets global g.
  const auto eq = spec.find('=');
  const std::string global = eq == std::string::npos ? spec : spec.substr(0, eq);
  const std::string mod = eq == std::string::npos ? spec : spec.substr(eq + 1);
  lua_getglobal(L, "require");
  lua_pushstring(L, mod.c_str());
  int status = docall(L, 1, 1);
  if (status == LUA_OK) lua_setglobal(L, global.c_str());
  return report(L, status);
}

void create_arg_table(lua_State* L, const Invocation& inv) {
  // As lua.c: arg[0] is the script, arg[1..] its arguments, negative indices the interpreter
  // and its options; without a script arg[0] is the interpreter and arg[1..] its options.
  const int script = inv.script;
  const int n = static_cast<int>(inv.argv.size());
  lua_createtable(L, std::max(n - script - 1, 0), script + 1);
  for (int i = 0; i < n; ++i) {
    lua_pushstring(L, inv.argv[static_cast<size_t>(i)].c_str());
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

// The script's arguments as lua.c passes them: the values of the global `arg` at the time the
// script starts (an -e before it may have changed them).
int push_script_arguments(lua_State* L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) return luaL_error(L, "'arg' is not a table");
  const lua_Integer n = luaL_len(L, 1);
  if (n < 0 || n > INT_MAX - 3) return luaL_error(L, "too many arguments to script");
  luaL_checkstack(L, static_cast<int>(n) + 3, "too many arguments to script");
  for (lua_Integer i = 1; i <= n; ++i) lua_rawgeti(L, 1, i);
  return static_cast<int>(n);
}

int run_script(lua_State* L, const Invocation& inv) {
  const auto index = static_cast<size_t>(inv.script);
  const std::string& name = inv.argv[index];
  // "-" is standard input, unless "--" came before it (then it names a file).
  const bool from_stdin = name == "-" && inv.argv[index - 1] != "--";
  if (from_stdin) lua::forbid_rerun(L, "the script was read from standard input");
  int status = luaL_loadfilex(L, from_stdin ? nullptr : name.c_str(), lua::load_mode(L));
  if (status == LUA_OK) {
    const int base = lua_gettop(L);
    lua_pushcfunction(L, push_script_arguments);
    status = lua_pcall(L, 0, LUA_MULTRET, 0);
    if (status == LUA_OK) {
      status = docall(L, lua_gettop(L) - base, LUA_MULTRET);
    } else {
      lua_remove(L, -2);  // the chunk
    }
  }
  return report(L, status);
}

// The -e chunks, -l modules and -W, the script and the REPL, in order (lua.c's runargs and the
// rest of its pmain); false at the first failure.
bool run_all(lua_State* L, Invocation& inv) {
  for (const Invocation::Step& step : inv.steps) {
    int status = LUA_OK;
    if (step.option == 'e') {
      status =
          run_chunk(L, luaL_loadbuffer(L, step.value.data(), step.value.size(), "=(command line)"));
    } else if (step.option == 'l') {
      status = require_module(L, step.value);
    } else {
      lua_warning(L, "@on", 0);  // -W
    }
    if (status != LUA_OK) return false;
  }
  if (!inv.jupyter.empty()) {
#if defined(CULUA_HAVE_JUPYTER)
    lua::forbid_rerun(L, "a Jupyter kernel's cells cannot be run again");
    return jupyter::run_kernel(L, inv.jupyter) == 0;
#else
    std::fprintf(stderr,
                 "%s: --jupyter: culua was built without ZeroMQ (libzmq3-dev, cppzmq-dev)\n",
                 progname);
    return false;
#endif
  }
  if (inv.script > 0 && run_script(L, inv) != LUA_OK) return false;
  constexpr char kRepl[] = "code typed in the REPL cannot be run again";
  if (inv.interactive) {
    inv.repl_ran = true;
    lua::forbid_rerun(L, kRepl);
    run_repl(L);
  } else if (inv.script == 0 && !inv.exec && !inv.version) {
    if (isatty(STDIN_FILENO)) {
      inv.repl_ran = true;
      lua::forbid_rerun(L, kRepl);
      run_repl(L);
    } else {
      lua::forbid_rerun(L, "the script was read from standard input");
      if (run_chunk(L, luaL_loadfilex(L, nullptr, lua::load_mode(L))) != LUA_OK) return false;
    }
  }
  return true;
}

}  // namespace

// Everything runs inside this protected function, as lua.c's pmain.
int protected_main(lua_State* L) {
  auto& inv = *static_cast<Invocation*>(lua_touserdata(L, 1));
  auto& rt = *static_cast<Runtime*>(lua_touserdata(L, 2));
  luaL_checkversion(L);
  if (inv.version) print_version();
  if (inv.no_env) {
    lua_pushboolean(L, 1);  // as lua.c: package ignores LUA_PATH and LUA_CPATH
    lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  }
  luaL_openlibs(L);
  lua::open_cu(L, rt, inv.run);
  lua_getfield(L, -1, "help");
  lua_setglobal(L, "help");
  lua_setglobal(L, "cu");
  create_arg_table(L, inv);
  if (inv.sandbox) inv.sandbox->install(L, rt);
  lua_gc(L, LUA_GCRESTART);
  lua_gc(L, LUA_GCGEN, 0, 0);
  rt.collect_young = [L] { lua_gc(L, LUA_GCSTEP, 0); };  // a young collection in this mode
  bool ok = lua::begin_run(L) && (inv.no_env || run_lua_init(L) == LUA_OK) && run_all(L, inv);
  // In a sandbox the work the script queued is bounded by its time limit too, not waited for
  // without end after the script (a queued cu.sleep of an hour).
  std::string late;
  if (ok && inv.sandbox && !inv.sandbox->wait_for_queued_work(rt, false, &late)) {
    std::fprintf(stderr, "%s: %s\n", progname, late.c_str());
    std::fflush(stderr);
    ok = false;
  }
  // A failed run leaves at once: work still queued is dropped (host) or left to end with the
  // process (CUDA), not waited for (the trace, written below, then has what completed).
  if (!ok) lua::abandon_queued_work(rt);
  if (!lua::end_run(L)) ok = false;
  lua_pushboolean(L, ok);
  return 1;
}

// --install-kernel [--user | --prefix P]: the kernelspec naming this program's own path.
int install_kernel(const Invocation& inv) {
#if defined(CULUA_HAVE_JUPYTER)
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::fprintf(stderr, "%s: --install-kernel: cannot find culua's own path\n", progname);
    return 1;
  }
  self[n] = '\0';
  try {
    const std::string dir = jupyter::install_kernelspec(self, inv.install_user, inv.install_prefix);
    std::printf("installed the culua kernel in %s (jupyter kernelspec list shows it)\n",
                dir.c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: --install-kernel: %s\n", progname, e.what());
    return 1;
  }
#else
  (void)inv;
  std::fprintf(stderr,
               "%s: --install-kernel: culua was built without ZeroMQ (libzmq3-dev, cppzmq-dev)\n",
               progname);
  return 1;
#endif
}

bool report_warm_cache(Runtime& rt) {
  const Ledger& l = rt.monitor().ledger;
  const std::string dir = rtc::KernelCache::default_directory();
  if (rt.backend().kind() != BackendKind::Cuda) {
    std::fprintf(stderr,
                 "%s: --warm-cache: the host backend generates no kernels; run it on the CUDA "
                 "backend, where the batch job runs\n",
                 progname);
    return false;
  }
  if (dir.empty()) {
    std::fprintf(stderr,
                 "%s: --warm-cache: no kernel cache directory (set CULUA_CACHE_DIR, "
                 "XDG_CACHE_HOME or HOME)\n",
                 progname);
    return false;
  }
  std::fprintf(stderr,
               "%s: --warm-cache: %llu generated kernel%s compiled (%.1f ms of NVRTC) and %llu "
               "already in the cache %s\n",
               progname, static_cast<unsigned long long>(l.fused_compiles),
               l.fused_compiles == 1 ? "" : "s", static_cast<double>(l.fused_compile_us) / 1e3,
               static_cast<unsigned long long>(l.fused_disk_hits), dir.c_str());
  return true;
}

void note_queued_work(Runtime& rt) {
  try {
    for (int i = 0; i < 50 && rt.monitor().work_pending(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (rt.monitor().work_pending()) {
      std::fprintf(stderr, "%s: waiting for queued device work to finish (Ctrl-C quits at once)\n",
                   progname);
      std::fflush(stderr);
    }
  } catch (const std::exception&) {
    // A stream query failed after a fatal device error: there is nothing to wait for.
  }
}

}  // namespace culua::detail::cli
