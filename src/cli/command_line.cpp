// culua's own long options (one table entry each), the collection of the command line as lua.c's
// collectargs does, and the usage text of --help.
#include "cli/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/interpreter.hpp"

namespace culua::detail::cli {

namespace {

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

}  // namespace

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

}  // namespace culua::detail::cli
