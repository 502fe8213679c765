// The culua program: run scripts, -e chunks and -l modules, or the REPL.
#include <fcntl.h>
#include <unistd.h>
#include <lua.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "backends/backends.hpp"
#include "cli/compare.hpp"
#include "cli/interpreter.hpp"
#if defined(CULUA_HAVE_JUPYTER)
#include "jupyter/kernel.hpp"
#endif
#include "core/base/error.hpp"
#include "core/base/interrupt.hpp"
#include "core/runtime/runtime.hpp"
#include "core/version.hpp"
#include "dist/mpi.hpp"
#include "host/host_blas.hpp"
#include "lua/binding.hpp"
#include "lua/cu_module.hpp"
#include "lua/sandbox.hpp"
#include "rtc/cuda_architectures.hpp"
#include "rtc/kernel_cache.hpp"

namespace culua::detail::cli {

namespace {

// Exit status when an explicitly requested backend is unavailable (sysexits' EX_UNAVAILABLE);
// GPU tests use it to skip on machines without a GPU.
constexpr int kUnavailable = 69;

// The name that starts every message of the program, as lua.c's progname: argv[0] as invoked
// (a path when run through one), "culua" when argv[0] is missing or empty.
const char* progname = "culua";

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

// What the command line asks for: lua.c's options (collected as its collectargs does) and
// culua's own long options (kLongOptions below).
struct Invocation {
  std::vector<std::string> argv;
  // The script's index in argv; 0 when there is none (arg[0] is then the program, as in lua).
  int script = 0;
  // -e CODE, -l MODULE and -W, run in command-line order ('e', 'l' or 'W' and the argument).
  struct Step {
    char option;
    std::string value;
  };
  std::vector<Step> steps;
  bool exec = false;           // some -e
  bool interactive = false;    // -i
  bool version = false;        // -v
  bool warm_cache = false;     // --warm-cache
  bool no_env = false;         // -E: ignore LUA_INIT and the LUA_PATH/LUA_CPATH variables
  bool help = false;           // --help: print the usage and leave
  bool short_version = false;  // --version: print the version and leave
  std::string backend = "auto";
  int device = 0;
  bool device_given = false;  // --device: checked at start against the backend's devices
  lua::RunOptions run;        // --json --csv --plot --trace --strict
  // --sandbox and its limits (docs/sandbox.md); the --max-* options given, for their check.
  bool sandbox_on = false;
  lua::SandboxLimits limits;
  std::string max_memory, max_device_memory;
  std::vector<std::string> limit_options;
  lua::Sandbox* sandbox = nullptr;  // the sandbox made from them, when --sandbox
  bool repl_ran = false;
  std::string jupyter;          // --jupyter CONNECTION_FILE: serve as a Jupyter kernel
  bool install_kernel = false;  // --install-kernel [--user | --prefix P]
  bool install_user = false;
  std::string install_prefix;
  bool install_prefix_given = false;
};

// culua's own options, all long, accepted before the script beside lua's. `take` stores the value
// (nullptr for a flag) and returns why it is refused (empty: accepted). A new option is one entry.
struct LongOption {
  const char* name;
  const char* value_name;  // nullptr: a flag without a value
  const char* help;
  std::string (*take)(Invocation& inv, const char* value);
  // The value is optional and given only as --name=VALUE (value_name shows it, "[=FILE]"): a
  // following argument is never taken (it is the script).
  bool optional_value = false;
};

// --device N: a plain non-negative device number; returns why it is refused (empty: accepted).
std::string parse_device_number(std::string_view text, int& device) {
  int value = -1;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || at != end || value < 0) {
    return "expected a device number (0, 1, ...), got '" + std::string(text) + "'";
  }
  device = value;
  return {};
}

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

const LongOption kLongOptions[] = {
    {"--backend", "NAME",
     "cuda, host or auto (default: $CULUA_BACKEND, else cuda when a GPU is present)",
     [](Invocation& inv, const char* value) -> std::string {
       const std::string_view v = value;
       if (v != "auto" && v != "cuda" && v != "host")
         return std::string("expected cuda, host or auto, got '") + value + "'";
       inv.backend = value;
       return {};
     }},
    {"--device", "N",
     "device to start on (default 0; the host backend has $CULUA_HOST_DEVICES, default 1)",
     [](Invocation& inv, const char* value) {
       inv.device_given = true;
       return parse_device_number(value, inv.device);
     }},
    {"--json", "FILE", "write sweep results as JSON to FILE",
     [](Invocation& inv, const char* value) -> std::string {
       inv.run.json = value;
       return {};
     }},
    {"--csv", "FILE", "write sweep results as CSV to FILE",
     [](Invocation& inv, const char* value) -> std::string {
       inv.run.csv = value;
       return {};
     }},
    {"--plot", "FILE", "plot sweep results with gnuplot to FILE (.png or .svg)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.run.plot = value;
       return {};
     }},
    {"--trace", "FILE", "record every operation and write a Chrome trace (Perfetto) to FILE",
     [](Invocation& inv, const char* value) -> std::string {
       inv.run.trace = value;
       return {};
     }},
    {"--profile", "[=FILE]",
     "print the device time of every kernel, copy and fill by kernel and by script line at the "
     "end (CUPTI on CUDA); =FILE also writes it (.json, .csv, else the tables)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.run.profile = true;
       if (value) {
         if (!*value) return "expected --profile or --profile=FILE, got an empty file name";
         inv.run.profile_file = value;
       }
       return {};
     },
     true},
    {"--jupyter", "CONNECTION_FILE",
     "serve as a Jupyter kernel on the sockets the file names (docs/guide/jupyter.md)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.jupyter = value;
       return {};
     }},
    {"--install-kernel", nullptr,
     "write culua's kernelspec where Jupyter finds it (system-wide, or --user, or --prefix P)",
     [](Invocation& inv, const char*) -> std::string {
       inv.install_kernel = true;
       return {};
     }},
    {"--user", nullptr, "with --install-kernel: in the user's Jupyter folder",
     [](Invocation& inv, const char*) -> std::string {
       inv.install_user = true;
       return {};
     }},
    {"--prefix", "P", "with --install-kernel: under P/share/jupyter",
     [](Invocation& inv, const char* value) -> std::string {
       inv.install_prefix = value;
       inv.install_prefix_given = true;
       return {};
     }},
    {"--strict", nullptr, "raise on implicit synchronizations (element reads, synchronous copies)",
     [](Invocation& inv, const char*) -> std::string {
       inv.run.strict = true;
       return {};
     }},
    // --sandbox (docs/sandbox.md): the allow-list environment and the limits of each chunk.
    {"--sandbox", nullptr,
     "run untrusted code: an allow-list environment, the limits below (docs/sandbox.md)",
     [](Invocation& inv, const char*) -> std::string {
       inv.sandbox_on = true;
       return {};
     }},
    {"--max-time", "SECONDS", "sandbox: wall-time limit per chunk in seconds (default 10; 0: none)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.limit_options.emplace_back("--max-time");
       char* end = nullptr;
       const double v = std::strtod(value, &end);
       if (end == value || *end != '\0' || !(v >= 0) || v > 1e9)
         return std::string("expected a number of seconds from 0 to 1e9 (0: no limit), got '") +
                value + "'";
       inv.limits.time_s = v;
       return {};
     }},
    {"--max-instructions", "N", "sandbox: Lua instructions per chunk (default 0: none)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.limit_options.emplace_back("--max-instructions");
       uint64_t v = 0;
       const char* end = value + std::strlen(value);
       const auto [at, ec] = std::from_chars(value, end, v);
       if (ec != std::errc() || at != end || at == value)
         return std::string(
                    "expected a whole number of instructions from 0 to 2^64-1 (0: no "
                    "limit), got '") +
                value + "'";
       inv.limits.instructions = v;
       return {};
     }},
    {"--max-streams", "N", "sandbox: streams the script may hold at once (default 64; 0: none)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.limit_options.emplace_back("--max-streams");
       uint64_t v = 0;
       const char* end = value + std::strlen(value);
       const auto [at, ec] = std::from_chars(value, end, v);
       if (ec != std::errc() || at != end || at == value || v > 1000000)
         return std::string("expected a number of streams from 0 (no limit) to 1000000, got '") +
                value + "'";
       inv.limits.streams = v;
       return {};
     }},
    {"--max-memory", "SIZE", "sandbox: Lua heap limit (default 256M; 0: none)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.limit_options.emplace_back("--max-memory");
       inv.max_memory = value;
       return {};
     }},
    {"--max-device-memory", "SIZE",
     "sandbox: limit on culua's arrays, device and host (default 1G; 0: none)",
     [](Invocation& inv, const char* value) -> std::string {
       inv.limit_options.emplace_back("--max-device-memory");
       inv.max_device_memory = value;
       return {};
     }},
    {"--help", nullptr, "print this help and exit",
     [](Invocation& inv, const char*) -> std::string {
       inv.help = true;
       return {};
     }},
    {"--warm-cache", nullptr,
     "run the script, then report the kernels cu.fuse generated for it into the on-disk kernel "
     "cache (a batch job's ranks then load them instead of compiling); an error without a GPU or "
     "a cache directory",
     [](Invocation& inv, const char*) -> std::string {
       inv.warm_cache = true;
       return {};
     }},
    {"--version", nullptr, "print culua's version and exit",
     [](Invocation& inv, const char*) -> std::string {
       inv.short_version = true;
       return {};
     }},
};

// Why the command line was refused: the message, and whether the usage follows it (as lua prints
// it after an unknown option or a missing argument).
struct Refusal {
  std::string message;
  bool usage = false;
};

// Collects the options before the script as lua.c's collectargs does (one option an argument,
// "-eCODE" or "-e CODE", "--" and "-" end the options), with culua's long options beside them
// ("--name VALUE" or "--name=VALUE"). Returns the refusal, if any.
std::optional<Refusal> collect_arguments(Invocation& inv) {
  const std::vector<std::string>& argv = inv.argv;
  const size_t argc = argv.size();
  auto unrecognized = [](const std::string& option) {
    return Refusal{"unrecognized option '" + option + "'", true};
  };
  for (size_t i = 1; i < argc; ++i) {
    const std::string& a = argv[i];
    if (a.empty() || a[0] != '-') {  // the script
      inv.script = static_cast<int>(i);
      return std::nullopt;
    }
    if (a == "-") {  // the script is standard input
      inv.script = static_cast<int>(i);
      return std::nullopt;
    }
    if (a == "--") {  // the next argument is the script, whatever its name
      inv.script = i + 1 < argc ? static_cast<int>(i + 1) : 0;
      return std::nullopt;
    }
    if (a[1] == '-') {
      const size_t eq = a.find('=');
      const std::string name = a.substr(0, eq);
      const LongOption* option = nullptr;
      for (const LongOption& o : kLongOptions) {
        if (name == o.name) option = &o;
      }
      if (!option || (!option->value_name && eq != std::string::npos)) return unrecognized(a);
      const char* value = nullptr;
      if (option->optional_value) {
        if (eq != std::string::npos) value = a.c_str() + eq + 1;
      } else if (option->value_name) {
        if (eq != std::string::npos) {
          value = a.c_str() + eq + 1;
        } else if (i + 1 < argc) {
          value = argv[++i].c_str();
        } else {
          return Refusal{"'" + name + "' needs argument", true};
        }
      }
      if (std::string refused = option->take(inv, value); !refused.empty())
        return Refusal{name + ": " + refused, false};
      continue;
    }
    switch (a[1]) {
      case 'E':
      case 'W':
      case 'i':
      case 'v':
        if (a.size() != 2) return unrecognized(a);
        if (a[1] == 'E') inv.no_env = true;
        if (a[1] == 'W') inv.steps.push_back({'W', {}});
        if (a[1] == 'i') inv.interactive = true;
        if (a[1] == 'v') inv.version = true;
        break;
      case 'e':
      case 'l': {
        std::string value = a.substr(2);
        if (value.empty()) {  // the argument is the next one, which may not be an option
          if (i + 1 >= argc || (!argv[i + 1].empty() && argv[i + 1][0] == '-'))
            return Refusal{"'" + a.substr(0, 2) + "' needs argument", true};
          value = argv[++i];
        }
        if (a[1] == 'e') inv.exec = true;
        inv.steps.push_back({a[1], std::move(value)});
        break;
      }
      default:
        return unrecognized(a);
    }
  }
  inv.script = 0;
  return std::nullopt;
}

void print_usage(FILE* out) {
  std::fprintf(out, "usage: %s [options] [script [args]]\n", progname);
  std::fputs(
      "Available options are:\n"
      "  -e stat   execute string 'stat'\n"
      "  -i        enter interactive mode after executing 'script'\n"
      "  -l mod    require library 'mod' into global 'mod'\n"
      "  -l g=mod  require library 'mod' into global 'g'\n"
      "  -v        show version information\n"
      "  -E        ignore environment variables\n"
      "  -W        turn warnings on\n"
      "  --        stop handling options\n"
      "  -         stop handling options and execute stdin\n"
      "culua's own options:\n",
      out);
  const auto left = [](const LongOption& o) {
    return std::string(o.name) +
           (o.value_name ? std::string(o.optional_value ? "" : " ") + o.value_name : "");
  };
  int width = 0;
  for (const LongOption& o : kLongOptions)
    width = std::max(width, static_cast<int>(left(o).size()));
  for (const LongOption& o : kLongOptions) {
    std::fprintf(out, "  %-*s  %s\n", width, left(o).c_str(), o.help);
  }
  std::fprintf(out, "%s compare OLD.json NEW.json compares two result files.\n", progname);
  std::fputs(
      "Exit status: 0 on success, 1 when a script fails (work still queued is then not waited "
      "for), 69 when a requested backend (--backend or $CULUA_BACKEND) is unavailable.\n",
      out);
}

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

bool run_all(lua_State* L, Invocation& inv);

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

// --warm-cache, after the script: what cu.fuse compiled into the kernel cache (stderr); false
// when nothing could be kept there (the host backend compiles no kernels; no cache directory).
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

// Leaving after an interrupted wait (or the REPL, where one may have been): the queued work still
// runs, and the runtime waits for it before tearing down. Say so when that takes a while.
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

int docall(lua_State* L, int nargs, int nresults, bool traceback) {
  const int base = lua_gettop(L) - nargs;
  if (traceback) {
    lua_pushcfunction(L, traceback_handler);
    lua_insert(L, base);
  }
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
    status = lua_pcall(L, nargs, nresults, traceback ? base : 0);
    sigaction(SIGINT, &previous, nullptr);
  }
  status = lua::sandbox_leave(L, status);  // also a Ctrl-C that came after the last Lua step
  if (traceback) lua_remove(L, base);
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
    std::fprintf(stderr, "%s: %s%s\n", progname, dist::mpi::rank_prefix().c_str(),
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
  lua_State* L = luaL_newstate();
  if (!L) {
    std::fprintf(stderr, "%s: cannot create the Lua state: not enough memory\n", cli::progname);
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
  const bool warmed = !ok || !inv.warm_cache || cli::report_warm_cache(rt);
  lua::mark_closing(L);
  lua_close(L);  // before the runtime: finalizers free arrays through it
  dist::mpi::finish();
  return ok && warmed ? 0 : 1;
}
