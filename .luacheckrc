-- luacheck configuration (Debian's lua-check): `luacheck scripts lua tests` gives no warnings;
-- ctest runs it as lint.luacheck.
std = "lua54"
-- culua's scripts see the cu module as a global (the culua program opens it), and the culua
-- program also sets the global help, the same function as cu.help (src/cli/main.cpp).
read_globals = { "cu", "help" }
max_line_length = 120
-- A long message or expected output reads better whole than cut into pieces.
max_string_line_length = false
exclude_files = { "build*/**", "gpu-carry/**", "gpu-build/**" }
-- 581: `not (x <= tol)` is the NaN-aware form of `x > tol` (a NaN fails the check), and
-- `not (a == b)` tests __eq itself; the suggested rewrite would change what the code means.
ignore = { "581" }

-- LuaLS annotations: stubs whose parameters are documentation only, and class tables
-- (`local Array = {}`) that exist only to hang method stubs on (241: mutated, never read).
files["lua/meta/cu.lua"] = { unused_args = false, globals = { "cu", "help" }, max_line_length = false,
                             ignore = { "241" } }
-- Generated data tables (one value a line would be unreadable).
files["tests/lua/complex_special_data.lua"] = { max_line_length = false }
-- Globals on purpose: objects left alive until lua_close, whose finalizers the test checks.
files["tests/module/test_module.lua"] = { globals = { "LATE_FINALIZER", "LATE_CU", "KEEP" } }
-- The test clears arg[1] and arg[2] (its own arguments), since T.run reads arg[1] as a filter.
files["tests/mpi/test_mpi_single.lua"] = { globals = { "arg" } }
