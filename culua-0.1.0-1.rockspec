-- The `cu` module for stock Lua 5.4 (cu.so), built by the project's CMake with only that target:
--   luarocks --lua-version 5.4 make            (from the repository root; docs/guide/module.md)
-- Build dependencies are Debian packages (tools/dev setup); CUDA is used when nvcc is found, as in
-- the project's own build (CULUA_CUDA=OFF in the environment builds the host backend alone).
rockspec_format = "3.0"
package = "culua"
version = "0.1.0-1"
source = {
   url = "git+file://.",
}
description = {
   summary = "CUDA device arrays, streams, events and kernels for Lua 5.4, with a CPU host backend",
   detailed = [[
      `local cu = require "cu"`: the module of the culua program for a stock Lua 5.4 interpreter.
      Without a usable GPU it runs on the host backend, with the same asynchronous semantics.
   ]],
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "Release",
      CMAKE_INSTALL_PREFIX = "$(PREFIX)",
      CULUA_MODULE_ONLY = "ON",
      CULUA_BUILD_TESTS = "OFF",
      CULUA_LUA_CMOD_DIR = "$(LIBDIR)",
      LUA_INCLUDE_DIR = "$(LUA_INCDIR)",
   },
}
