// The command line of the culua program: what it asks for (Invocation), collected as lua.c's
// collectargs does with culua's own long options beside lua's, and the usage that --help prints.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "lua/cu_module.hpp"
#include "lua/sandbox.hpp"

namespace culua::detail::cli {

// What the command line asks for: lua.c's options (collected as its collectargs does) and
// culua's own long options (kLongOptions in command_line.cpp).
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

// Why the command line was refused: the message, and whether the usage follows it (as lua prints
// it after an unknown option or a missing argument).
struct Refusal {
  std::string message;
  bool usage = false;
};

// Collects the options before the script as lua.c's collectargs does (one option an argument,
// "-eCODE" or "-e CODE", "--" and "-" end the options), with culua's long options beside them
// ("--name VALUE" or "--name=VALUE"). Returns the refusal, if any.
std::optional<Refusal> collect_arguments(Invocation& inv);

// The usage, lua's options and then culua's own, as --help prints it (and a refusal before it).
void print_usage(FILE* out);

}  // namespace culua::detail::cli
