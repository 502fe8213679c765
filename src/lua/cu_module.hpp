// Opening the `cu` module in a Lua state.
#pragma once

#include <lua.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/runtime.hpp"
#include "measure/isolate.hpp"

namespace culua::detail::lua {

// What the command line asked of the measurement tools (culua
// --json/--csv/--plot/--trace/--strict).
struct RunOptions {
  std::string json;          // sweeps write their results here as JSON
  std::string csv;           // ... and as CSV
  std::string plot;          // ... and a plot (gnuplot; .png or .svg)
  std::string trace;         // the whole run is traced into this Chrome trace file
  bool profile = false;      // --profile: the whole run's device time by kernel and by line
  std::string profile_file;  // --profile=FILE: ... also written there (.json, .csv, else text)
  bool strict = false;       // implicit synchronizations raise (cu.strict around the whole run)
  // cu.sweep{isolate = true}: the command line that runs this script again (the CLI's argv), or
  // empty with why there is none (no_rerun); in a child process, the point it runs.
  std::vector<std::string> rerun;
  std::string no_rerun =
      "it runs each point in a new culua process that runs the script again, and this Lua state "
      "was not started by the culua program with a script (an embedding application, or cu.so "
      "in another Lua)";
  measure::PointChild child;
};

// What a Jupyter kernel shows under a cell: (MIME type, data) pairs; image/png as raw bytes.
using DisplayBundle = std::vector<std::pair<std::string, std::string>>;
using DisplayHook = std::function<void(const DisplayBundle&)>;
// Makes cu.display, and plots without a file, show through `hook` (null: print, and plots need
// file= again). The front end that serves notebooks sets it.
void set_display_hook(lua_State* L, DisplayHook hook);

// Pushes the `cu` module bound to `rt`, registers it as package.loaded.cu and in package.preload
// (with the embedded Lua modules, cu.*). `rt` must outlive the state: close the state first.
void open_cu(lua_State* L, Runtime& rt, const RunOptions& options = {});

// Around a whole run of the CLI: begin_run applies --strict and starts the --trace; end_run stops
// the trace, writes its file and prints its summary on stderr (problems are reported, not thrown:
// it returns false when the trace could not be written).
bool begin_run(lua_State* L);  // false: --profile could not start (the reason printed)
bool end_run(lua_State* L);

// Before a run: the files of --json, --csv, --plot and --trace can be written (not a directory, a
// writable folder; the plot's format and gnuplot). Throws Error naming the option and the file.
void check_run_outputs(const RunOptions& options);

// From now on cu.sweep{isolate = true} raises, saying `why` (the REPL, a script from standard
// input: code that cannot be run again).
void forbid_rerun(lua_State* L, std::string why);

// Leaving early (an error exit, os.exit): Runtime::abandon_queued_work, and on a GPU a note on
// stderr of the streams whose work is left running.
int abandon_queued_work(Runtime& rt) noexcept;  // the CUDA streams still busy

}  // namespace culua::detail::lua
