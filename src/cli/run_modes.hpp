// What the culua program does once its command line is accepted: the whole run inside one
// protected call (as lua.c's pmain), --install-kernel, and the notes printed after the run.
#pragma once

#include <lua.hpp>

#include "cli/command_line.hpp"
#include "core/runtime/runtime.hpp"

namespace culua::detail::cli {

// Everything runs inside this protected function, as lua.c's pmain: called with the Invocation
// and the Runtime as light userdata, it returns one boolean, true when every step succeeded. Runs
// the -e chunks, -l modules and -W, then the Jupyter kernel (--jupyter), the script, the REPL or
// standard input, with --trace, --profile and the sandbox's limits around them.
int protected_main(lua_State* L);

// --install-kernel [--user | --prefix P]: the kernelspec naming this program's own path; returns
// the exit status.
int install_kernel(const Invocation& inv);

// --warm-cache, after the script: what cu.fuse compiled into the kernel cache (stderr); false
// when nothing could be kept there (the host backend compiles no kernels; no cache directory).
bool report_warm_cache(Runtime& rt);

// Leaving after an interrupted wait (or the REPL, where one may have been): the queued work still
// runs, and the runtime waits for it before tearing down. Say so when that takes a while.
void note_queued_work(Runtime& rt);

}  // namespace culua::detail::cli
