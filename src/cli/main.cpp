// The culua program: reads the command line, checks the backend, the device and the sandbox's
// limits, then runs scripts, -e chunks and -l modules, or the REPL, in one Lua state.
#include <fcntl.h>
#include <unistd.h>
#include <lua.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

#include "backends/backends.hpp"
#include "cli/command_line.hpp"
#include "cli/compare.hpp"
#include "cli/interpreter.hpp"
#include "cli/run_modes.hpp"
#include "core/base/error.hpp"
#include "core/runtime/runtime.hpp"
#include "core/version.hpp"
#include "dist/mpi.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/lua_heap.hpp"
#include "lua/sandbox.hpp"

namespace culua::detail::cli {

namespace {

// Exit status when an explicitly requested backend is unavailable (sysexits' EX_UNAVAILABLE);
// GPU tests use it to skip on machines without a GPU.
constexpr int kUnavailable = 69;

// --device N against the backend's devices: selects it and returns "", or returns why not.
std::string check_device(Runtime& rt, int device) {
  const int count = rt.backend().device_count();
  if (device < count) {
    rt.set_device(device);
    return {};
  }
  const bool host = rt.backend().kind() == BackendKind::Host;
  return fmt::format("device {} does not exist: the {} backend has {} device{}, numbered {}{}",
                     device, host ? "host" : "CUDA", count, count == 1 ? "" : "s",
                     count == 1 ? "0" : fmt::format("0 to {}", count - 1),
                     host ? " ($CULUA_HOST_DEVICES sets how many)" : "");
}

// Opens a closed standard stream on /dev/null (stdin closed with `<&-`): reading it then finds
// its end at once, as stock lua does, and no file opened later (the REPL's interrupt pipe) takes
// its number and is read as input.
void open_closed_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (opened >= 0 && opened != fd) {
      dup2(opened, fd);
      close(opened);
    }
  }
}

}  // namespace

}  // namespace culua::detail::cli

int main(int argc, char** argv) {
  using namespace culua::detail;
  if (argc >= 2 && std::string_view(argv[1]) == "compare") return cli::compare_main(argc, argv);
  if (argc > 0 && argv[0] && argv[0][0]) cli::progname = argv[0];
  cli::open_closed_standard_streams();
  cli::Invocation inv;
  inv.argv.assign(argv, argv + argc);
  if (const auto refused = cli::collect_arguments(inv)) {
    std::fprintf(stderr, "%s: %s\n", cli::progname, refused->message.c_str());
    if (refused->usage) cli::print_usage(stderr);
    std::fflush(stderr);
    return 1;
  }
  if (inv.help) {
    cli::print_usage(stdout);
    return 0;
  }
  if (inv.short_version) {
    std::printf("culua %s\n", CULUA_VERSION);
    return 0;
  }
  if (inv.warm_cache && inv.script == 0) {
    std::fprintf(stderr, "%s: --warm-cache needs a script\n", cli::progname);
    return 1;
  }
  if ((inv.install_user || inv.install_prefix_given) && !inv.install_kernel) {
    std::fprintf(stderr, "%s: %s needs --install-kernel\n", cli::progname,
                 inv.install_user ? "--user" : "--prefix");
    return 1;
  }
  if (inv.install_kernel) return cli::install_kernel(inv);

  RuntimeOptions options;
  options.backend = parse_backend(inv.backend);
  try {
    // The environment is read now, so that a bad value is named before anything runs (not by
    // whichever function first creates the backend), and CULUA_BACKEND=cuda without a GPU exits
    // as --backend cuda does.
    if (options.backend == BackendKind::Auto) {
      if (const char* env = std::getenv("CULUA_BACKEND"); env && *env) {
        try {
          options.backend = parse_backend(env);
        } catch (const Error& e) {
          fail(ErrorKind::Value, "CULUA_BACKEND: {}", e.what());
        }
      }
    }
    options.host_memory_limit = host_memory_limit_from_environment();
    backends::check_environment();
    // A child process of cu.sweep{isolate = true} (docs/sweep.md#isolated-points): the result
    // files, plots and trace are its parent's to write.
    inv.run.child = measure::take_point_child_environment();
    if (inv.run.child.active()) {
      inv.run.json.clear();
      inv.run.csv.clear();
      inv.run.plot.clear();
      inv.run.trace.clear();
      inv.run.profile = false;
      inv.run.profile_file.clear();
    }
    inv.run.rerun = inv.argv;
    // Result and trace files are checked before the script runs, not after an hour-long sweep.
    lua::check_run_outputs(inv.run);
    for (auto [text, bytes, name] :
         {std::tuple{&inv.max_memory, &inv.limits.heap_bytes, "--max-memory"},
          std::tuple{&inv.max_device_memory, &inv.limits.memory_bytes, "--max-device-memory"}}) {
      try {
        if (!text->empty()) *bytes = parse_byte_size(*text);
      } catch (const Error& e) {
        fail(ErrorKind::Value, "{}: {}", name, e.what());
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", cli::progname, e.what());
    return 1;
  }
  options.owns_threads = true;  // the CLI's own thread: the device may stay current
  Runtime rt(backends::engines(options));
  // The backend is made now when it was asked for by name (exit 69 when it is unavailable) or a
  // device was (a device that does not exist is named now, not at the script's first cu call;
  // this reads the device count, it creates no CUDA context).
  if (options.backend == BackendKind::Cuda || inv.device_given) {
    try {
      rt.backend();
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", cli::progname, e.what());
      return cli::kUnavailable;
    }
  }
  if (inv.device_given) {
    if (const std::string refused = cli::check_device(rt, inv.device); !refused.empty()) {
      std::fprintf(stderr, "%s: --device: %s\n", cli::progname, refused.c_str());
      return 1;
    }
  }

  std::unique_ptr<lua::Sandbox> box;  // outlives the state: its allocator serves it
  if (!inv.sandbox_on && !inv.limit_options.empty()) {
    std::fprintf(stderr, "%s: %s needs --sandbox\n", cli::progname,
                 inv.limit_options.front().c_str());
    return 1;
  }
  if (inv.sandbox_on) {
    inv.no_env = true;  // as -E: LUA_INIT and LUA_PATH/LUA_CPATH are not the script's to use
    for (const std::string* f :
         {&inv.run.json, &inv.run.csv, &inv.run.plot, &inv.run.trace, &inv.run.profile_file}) {
      if (!f->empty()) inv.limits.output_files.push_back(*f);
    }
    box = std::make_unique<lua::Sandbox>(inv.limits);
    box->enable_watchdog(2);  // a C function past the time limit ends the process 2 s later
    inv.sandbox = box.get();
  }
  lua::LuaHeap heap;  // outlives the state
  lua_State* L = luaL_newstate();
  if (!L) {
    std::fprintf(stderr, "%s: cannot create the Lua state: not enough memory\n", cli::progname);
    return 1;
  }
  heap.install(L);
  lua_gc(L, LUA_GCSTOP);
  lua_pushcfunction(L, cli::protected_main);
  lua_pushlightuserdata(L, &inv);
  lua_pushlightuserdata(L, &rt);
  const int status = lua_pcall(L, 2, 1, 0);
  const bool ok = status == LUA_OK && lua_toboolean(L, -1);
  cli::report(L, status);
  if (!ok) dist::mpi::abort_on_error(1);  // one rank of several: end them all (MPI_Abort)
  if (!ok && !rt.abandoned()) lua::abandon_queued_work(rt);  // the Lua state itself failed
  if (ok && (inv.repl_ran || cli::interrupted())) cli::note_queued_work(rt);
  const bool warmed = !ok || !inv.warm_cache || cli::report_warm_cache(rt);
  lua::mark_closing(L);
  lua_close(L);  // before the runtime: finalizers free arrays through it
  dist::mpi::finish();
  return ok && warmed ? 0 : 1;
}
