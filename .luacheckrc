-- luacheck configuration (Debian's lua-check): `luacheck scripts lua tests` gives no warnings;
-- ctest runs it as lint.luacheck.
std = "lua54"
-- culua's scripts see the cu module as a global (the culua program opens it).
read_globals = { "cu" }
max_line_length = 120
-- A long message or expected output reads better whole than cut into pieces.
max_string_line_length = false
exclude_files = { "build*/**", "gpu-carry/**", "gpu-build/**" }

-- LuaLS annotations: stubs whose parameters are documentation only.
files["lua/meta/cu.lua"] = { unused_args = false, globals = { "cu" }, max_line_length = false }
-- Generated data tables (one value a line would be unreadable).
files["tests/lua/complex_special_data.lua"] = { max_line_length = false }
