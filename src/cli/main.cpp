// The culua program: run scripts, -e chunks and -l modules, or the REPL.
#include <fcntl.h>
#include <unistd.h>
#include <lua.hpp>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "backends/backends.hpp"
#include "cli/compare.hpp"
#include "cli/interpreter.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/runtime.hpp"
#include "core/version.hpp"
#include "dist/mpi.hpp"
#include "lua/cu_module.hpp"
#include "lua/sandbox.hpp"

namespace culua::detail::cli {

namespace {

// Exit status when an explicitly requested backend is unavailable (sysexits' EX_UNAVAILABLE);
// GPU tests use it to skip on machines without a GPU.
constexpr int kUnavailable = 69;

// Ctrl-C as in lua.c: the handler only sets a hook, and the hook raises at the next Lua step. It
// also requests the interrupt flag that every run has in scope, so that a wait for the device
// (cu.sync(), an element read, a copy to the host) stops polling and raises as well.
lua_State* interrupted_state = nullptr;
InterruptFlag interrupt_flag;

int traceback_handler(lua_State* L);

void stop_hook(lua_State* L, lua_Debug* ar) {
  // An interrupted wait raises its own error: the call of its message handler and the return
  // from it must not replace that error with this one.
  // The handler may call the __tostring of a cu.Error: a hook event in a function it called.
  lua_getinfo(L, "f", ar);
  bool in_handler = lua_tocfunction(L, -1) == traceback_handler;
  lua_pop(L, 1);
  lua_Debug caller;
  if (!in_handler && lua_getstack(L, 1, &caller) && lua_getinfo(L, "f", &caller)) {
    in_handler = lua_tocfunction(L, -1) == traceback_handler;
    lua_pop(L, 1);
  }
  if (in_handler) return;
  lua_sethook(L, nullptr, 0, 0);
  luaL_error(L, "interrupted!");
}

void on_sigint(int sig) {
  std::signal(sig, SIG_DFL);  // a second Ctrl-C kills the process
  interrupt_flag.request();
  lua_sethook(interrupted_state, stop_hook,
              LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

// lua.c's message handler; a culua error object (cu.Error) prints as its text with the traceback.
int traceback_handler(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (!msg) {
    const bool culua_error = luaL_getmetafield(L, 1, "__name") == LUA_TSTRING &&
                             std::strcmp(lua_tostring(L, -1), "cu.Error") == 0;
    lua_settop(L, 1);
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      if (!culua_error) return 1;
      msg = lua_tostring(L, -1);
    } else {
      msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

struct Invocation {
  std::vector<std::string> exec;
  std::vector<std::string> libs;
  // Which of -e / -l came in which order (true: -e).
  std::vector<bool> order;
  bool interactive = false;
  bool version = false;
  bool no_env = false;    // -E: ignore LUA_INIT and the LUA_PATH/LUA_CPATH variables
  bool warnings = false;  // -W: turn warnings on
  std::vector<std::string> script_and_args;  // script first
  int script_index = 0;                      // position of the script in argv
  std::vector<std::string> argv;
  lua::RunOptions run;              // --json --csv --plot --trace --strict
  lua::Sandbox* sandbox = nullptr;  // --sandbox
  bool repl_ran = false;
};

void print_version() {
  std::printf("culua %s (%s, %s)\n", CULUA_VERSION, LUA_RELEASE,
#if defined(CULUA_HAVE_CUDA)
              "CUDA backend and host backend"
#else
              "host backend only: built without CUDA"
#endif
  );
  std::fflush(stdout);
}

int run_chunk(lua_State* L, int status);

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

int run_chunk(lua_State* L, int status) {
  if (status == LUA_OK) status = docall(L, 0, 0);
  return report(L, status);
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
  // and its options.
  const int script = inv.script_index;
  const int n = static_cast<int>(inv.argv.size());
  lua_createtable(L, n - script, script + 1);
  for (int i = 0; i < n; ++i) {
    lua_pushstring(L, inv.argv[static_cast<size_t>(i)].c_str());
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

int run_script(lua_State* L, const Invocation& inv) {
  const std::string& name = inv.script_and_args[0];
  const char* fname = name == "-" ? nullptr : name.c_str();
  int status = luaL_loadfilex(L, fname, lua::load_mode(L));
  if (status == LUA_OK) {
    const int nargs = static_cast<int>(inv.script_and_args.size()) - 1;
    luaL_checkstack(L, nargs, "too many script arguments");
    for (int i = 1; i <= nargs; ++i)
      lua_pushstring(L, inv.script_and_args[static_cast<size_t>(i)].c_str());
    status = docall(L, nargs, LUA_MULTRET);
  }
  return report(L, status);
}

bool run_all(lua_State* L, Invocation& inv);

// Everything runs inside this protected function, as lua.c's pmain.
int protected_main(lua_State* L) {
  auto& inv = *static_cast<Invocation*>(lua_touserdata(L, 1));
  auto& rt = *static_cast<Runtime*>(lua_touserdata(L, 2));
  luaL_checkversion(L);
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
  if (inv.warnings) lua_warning(L, "@on", 0);
  lua::begin_run(L);
  bool ok = (inv.no_env || run_lua_init(L) == LUA_OK) && run_all(L, inv);
  // A failed run leaves at once: work still queued is dropped (host) or left to end with the
  // process (CUDA), not waited for (the trace, written below, then has what completed).
  if (!ok) lua::abandon_queued_work(rt);
  if (!lua::end_run(L)) ok = false;
  lua_pushboolean(L, ok);
  return 1;
}

// The -e chunks, -l modules, the script and the REPL, in order; false at the first failure.
bool run_all(lua_State* L, Invocation& inv) {
  if (inv.version) print_version();
  size_t e = 0, l = 0;
  for (bool is_exec : inv.order) {
    int status;
    if (is_exec) {
      const std::string& code = inv.exec[e++];
      status = run_chunk(L, luaL_loadbuffer(L, code.data(), code.size(), "=(command line)"));
    } else {
      status = require_module(L, inv.libs[l++]);
    }
    if (status != LUA_OK) return false;
  }
  if (!inv.script_and_args.empty()) {
    if (run_script(L, inv) != LUA_OK) return false;
  }
  if (inv.interactive) {
    inv.repl_ran = true;
    run_repl(L);
  } else if (inv.script_and_args.empty() && inv.exec.empty() && inv.libs.empty() && !inv.version) {
    if (isatty(STDIN_FILENO)) {
      inv.repl_ran = true;
      run_repl(L);
    } else if (run_chunk(L, luaL_loadfilex(L, nullptr, lua::load_mode(L))) != LUA_OK) {
      return false;
    }
  }
  return true;
}

// Leaving after an interrupted wait (or the REPL, where one may have been): the queued work still
// runs, and the runtime waits for it before tearing down. Say so when that takes a while.
void note_queued_work(Runtime& rt) {
  try {
    for (int i = 0; i < 50 && rt.monitor().work_pending(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (rt.monitor().work_pending()) {
      std::fprintf(stderr,
                   "culua: waiting for queued device work to finish (Ctrl-C quits at once)\n");
      std::fflush(stderr);
    }
  } catch (const std::exception&) {
    // A stream query failed after a fatal device error: there is nothing to wait for.
  }
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

// --device N: a plain non-negative device number.
std::string check_device_number(const std::string& text) {
  int value = -1;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || at != end || value < 0) {
    return "expected a device number (0, 1, ...), got '" + text + "'";
  }
  return {};
}

}  // namespace

int docall(lua_State* L, int nargs, int nresults) {
  const int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback_handler);
  lua_insert(L, base);
  interrupted_state = L;
  interrupt_flag.clear();
  lua::sandbox_enter(L);  // a fresh budget in a sandbox; else no hook (a Ctrl-C left over)
  int status;
  {
    InterruptScope scope(&interrupt_flag);
    struct sigaction action = {};
    struct sigaction previous = {};
    action.sa_handler = on_sigint;
    action.sa_flags = SA_RESTART;  // as signal(): other system calls go on
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
    status = lua_pcall(L, nargs, nresults, base);
    sigaction(SIGINT, &previous, nullptr);
  }
  status = lua::sandbox_leave(L, status);  // also a Ctrl-C that came after the last Lua step
  lua_remove(L, base);
  return status;
}

bool interrupted() {
  return interrupt_flag.requested();
}

int report(lua_State* L, int status) {
  if (status != LUA_OK) {
    const char* msg = lua_tostring(L, -1);
    if (!msg && luaL_callmeta(L, -1, "__tostring")) {  // a cu.Error raised without the handler
      if (lua_type(L, -1) == LUA_TSTRING)
        lua_replace(L, -2);
      else
        lua_pop(L, 1);
      msg = lua_tostring(L, -1);
    }
    std::fprintf(stderr, "culua: %s%s\n", dist::mpi::rank_prefix().c_str(),
                 msg ? msg : "(error object is not a string)");
    std::fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

}  // namespace culua::detail::cli

int main(int argc, char** argv) {
  using namespace culua::detail;
  if (argc >= 2 && std::string_view(argv[1]) == "compare") return cli::compare_main(argc, argv);
  cli::open_closed_standard_streams();
  cli::Invocation inv;
  inv.argv.assign(argv, argv + argc);
  std::string backend = "auto";
  int device = 0;

  CLI::App app{
      "culua: Lua 5.4 with CUDA device arrays, streams, events and kernels.\n"
      "Runs SCRIPT with its ARGS (global `arg`, as lua does), or the REPL."};
  app.prefix_command();
  app.set_version_flag("--version", std::string("culua ") + CULUA_VERSION);
  auto* e_opt = app.add_option("-e", inv.exec, "execute string CODE")
                    ->type_name("CODE")
                    ->allow_extra_args(false);
  auto* l_opt = app.add_option("-l", inv.libs, "require MODULE into global MODULE (or g=MODULE)")
                    ->type_name("MODULE")
                    ->allow_extra_args(false);
  app.add_flag("-i", inv.interactive, "enter the REPL after running SCRIPT");
  app.add_flag("-v", inv.version, "print version information");
  app.add_flag("-E", inv.no_env, "ignore environment variables (LUA_INIT, LUA_PATH, LUA_CPATH)");
  app.add_flag("-W", inv.warnings, "turn warnings on");
  app.add_option("--backend", backend,
                 "cuda, host or auto (default: $CULUA_BACKEND, else cuda when a GPU is present)")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  app.add_option("--device", device, "CUDA device to start on (default 0)")
      ->type_name("N")
      ->check(CLI::Validator(cli::check_device_number, "N", "device number"));
  app.add_option("--json", inv.run.json, "write sweep results as JSON to FILE")->type_name("FILE");
  app.add_option("--csv", inv.run.csv, "write sweep results as CSV to FILE")->type_name("FILE");
  app.add_option("--plot", inv.run.plot, "plot sweep results with gnuplot to FILE (.png or .svg)")
      ->type_name("FILE");
  app.add_option("--trace", inv.run.trace,
                 "record every operation and write a Chrome trace (Perfetto) to FILE")
      ->type_name("FILE");
  app.add_flag("--strict", inv.run.strict,
               "raise on implicit synchronizations (element reads, synchronous copies)");
  // --sandbox (docs/sandbox.md): the allow-list environment and the limits of each chunk.
  bool sandbox = false;
  lua::SandboxLimits limits;
  std::string max_memory, max_device_memory;
  app.add_flag("--sandbox", sandbox,
               "run untrusted code: no io, os, debug, C modules, bytecode or file writes but "
               "--json/--csv/--plot/--trace; limits below (docs/sandbox.md)");
  auto* max_time =
      app.add_option("--max-time", limits.time_s,
                     "sandbox: wall-time limit per chunk in seconds (default 10; 0: none)")
          ->type_name("SECONDS")
          ->check(CLI::NonNegativeNumber);
  auto* max_instructions = app.add_option("--max-instructions", limits.instructions,
                                          "sandbox: Lua instructions per chunk (default 0: none)")
                               ->type_name("N");
  auto* max_memory_opt =
      app.add_option("--max-memory", max_memory, "sandbox: Lua heap limit (default 256M; 0: none)")
          ->type_name("SIZE");
  auto* max_device_opt =
      app.add_option("--max-device-memory", max_device_memory,
                     "sandbox: limit on culua's arrays, device and host (default 1G; 0: none)")
          ->type_name("SIZE");
  app.footer(
      "culua compare OLD.json NEW.json compares two result files.\n"
      "Exit status: 0 on success, 1 when a script fails (work still queued is then not waited "
      "for), 69 when a requested backend (--backend or $CULUA_BACKEND) is unavailable.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // --help, --version; else a usage error, 1 as in lua
  }
  for (const CLI::Option* o : app.parse_order()) {
    if (o == e_opt) inv.order.push_back(true);
    if (o == l_opt) inv.order.push_back(false);
  }
  inv.script_and_args = app.remaining();
  // What CLI11 left over starts with the script: "--" ends the options (the script may then start
  // with '-'); any other option there (not "-", stdin) is one that culua does not know.
  const bool separated = !inv.script_and_args.empty() && inv.script_and_args[0] == "--";
  if (separated) inv.script_and_args.erase(inv.script_and_args.begin());
  inv.script_index = argc - static_cast<int>(inv.script_and_args.size());
  if (inv.script_and_args.empty()) inv.script_index = argc;
  if (!inv.script_and_args.empty() && !separated) {
    const std::string& first = inv.script_and_args[0];
    if (first.size() > 1 && first[0] == '-') {
      std::fprintf(stderr, "culua: unrecognized option '%s' (culua --help lists the options)\n",
                   first.c_str());
      return 1;
    }
  }

  RuntimeOptions options;
  options.device = device;
  options.backend = parse_backend(backend);
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
    // Result and trace files are checked before the script runs, not after an hour-long sweep.
    lua::check_run_outputs(inv.run);
    for (auto [text, bytes, name] :
         {std::tuple{&max_memory, &limits.heap_bytes, "--max-memory"},
          std::tuple{&max_device_memory, &limits.memory_bytes, "--max-device-memory"}}) {
      try {
        if (!text->empty()) *bytes = parse_byte_size(*text);
      } catch (const Error& e) {
        fail(ErrorKind::Value, "{}: {}", name, e.what());
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "culua: %s\n", e.what());
    return 1;
  }
  options.owns_threads = true;  // the CLI's own thread: the device may stay current
  Runtime rt(backends::engines(options));
  if (options.backend == BackendKind::Cuda) {
    try {
      rt.backend();
    } catch (const Error& e) {
      std::fprintf(stderr, "culua: %s\n", e.what());
      return cli::kUnavailable;
    }
  }

  std::unique_ptr<lua::Sandbox> box;  // outlives the state: its allocator serves it
  for (const CLI::Option* o : {max_time, max_instructions, max_memory_opt, max_device_opt}) {
    if (!sandbox && o->count() > 0) {
      std::fprintf(stderr, "culua: %s needs --sandbox\n", o->get_name().c_str());
      return 1;
    }
  }
  if (sandbox) {
    inv.no_env = true;  // as -E: LUA_INIT and LUA_PATH/LUA_CPATH are not the script's to use
    for (const std::string* f : {&inv.run.json, &inv.run.csv, &inv.run.plot, &inv.run.trace}) {
      if (!f->empty()) limits.output_files.push_back(*f);
    }
    box = std::make_unique<lua::Sandbox>(limits);
    box->enable_watchdog(2);  // a C function past the time limit ends the process 2 s later
    inv.sandbox = box.get();
  }
  lua_State* L = luaL_newstate();
  if (!L) {
    std::fprintf(stderr, "culua: cannot create the Lua state: not enough memory\n");
    return 1;
  }
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
  lua_close(L);  // before the runtime: finalizers free arrays through it
  dist::mpi::finish();
  return ok ? 0 : 1;
}
