// Opening the `cu` module in a Lua state.
#pragma once

#include <lua.hpp>

#include <string>

#include "core/runtime.hpp"

namespace culua::detail::lua {

// What the command line asked of the measurement tools (culua
// --json/--csv/--plot/--trace/--strict).
struct RunOptions {
  std::string json;     // sweeps write their results here as JSON
  std::string csv;      // ... and as CSV
  std::string plot;     // ... and a plot (gnuplot; .png or .svg)
  std::string trace;    // the whole run is traced into this Chrome trace file
  bool strict = false;  // implicit synchronizations raise (cu.strict around the whole run)
};

// Pushes the `cu` module bound to `rt`, registers it as package.loaded.cu and in package.preload
// (with the embedded Lua modules, cu.*). `rt` must outlive the state: close the state first.
void open_cu(lua_State* L, Runtime& rt, const RunOptions& options = {});

// Around a whole run of the CLI: begin_run applies --strict and starts the --trace; end_run stops
// the trace, writes its file and prints its summary on stderr (problems are reported, not thrown:
// it returns false when the trace could not be written).
void begin_run(lua_State* L);
bool end_run(lua_State* L);

// Before a run: the files of --json, --csv, --plot and --trace can be written (not a directory, a
// writable folder; the plot's format and gnuplot). Throws Error naming the option and the file.
void check_run_outputs(const RunOptions& options);

// Leaving early (an error exit, os.exit): Runtime::abandon_queued_work, and on a GPU a note on
// stderr of the streams whose work is left running.
int abandon_queued_work(Runtime& rt) noexcept;  // the CUDA streams still busy

}  // namespace culua::detail::lua
