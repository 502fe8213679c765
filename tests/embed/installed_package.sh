#!/usr/bin/env bash
# Installs a built tree into a fresh prefix, then builds the example application of
# examples/embed against the installed package only, twice in fresh build folders: with CMake's
# find_package(culua) and with pkg-config. Runs both on the host backend.
#   tests/embed/installed_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/culua include/culua/culua.hpp share/lua/5.4/cu/testing.lua share/lua/5.4/cu/meta/cu.lua \
  lib/lua/5.4/cu.so; do
  [[ -e $prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done
# The engine library, which the program, libculua.so and cu.so load (found through their run paths
# relative to the prefix: the checks below run them from there).
if [[ -e $build/libculua_engine.so ]]; then
  engine=$(find "$prefix" -name libculua_engine.so)
  [[ -n $engine ]] || { echo "not installed: libculua_engine.so"; exit 1; }
  for f in "$prefix/bin/culua" "$prefix/lib/lua/5.4/cu.so" "$engine"; do
    echo "$f: $(readelf -d "$f" | grep -o 'R[UN]*PATH.*' || echo 'no run path')"
  done
fi
config=$(find "$prefix" -name culuaConfig.cmake)
pc=$(find "$prefix" -name culua.pc)
lib=$(find "$prefix" -name 'libculua.so*' | head -1)
[[ -n $config && -n $pc && -n $lib ]] || { echo "missing: config=$config pc=$pc lib=$lib"; exit 1; }
echo "installed: $config, $pc, $lib"

# The installed culua program runs.
"$prefix/bin/culua" --backend host -e 'assert(cu.ones(3):sum():item() == 3) print("culua from the prefix: ok")'

# find_package(culua): only the prefix is given, never the build tree.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src/examples/embed" -B "$work/app-cmake" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/app-cmake" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/app-cmake/embed_example" host

# pkg-config, with a plain compiler command line (C++17).
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs culua)
echo "pkg-config: $flags"
c++ -std=c++17 -O1 "$src/examples/embed/main.cpp" $flags -Wl,-rpath,"$(dirname "$lib")" -o "$work/app-pc"
"$work/app-pc" host
# The installed stock-Lua module, found through Lua's own path variables. (A sanitized build's
# cu.so needs the sanitizer runtimes preloaded into lua5.4: CULUA_TEST_LUA_PRELOAD, tests/CMakeLists.txt.)
if command -v lua5.4 >/dev/null; then
  LUA_CPATH="$prefix/lib/lua/5.4/?.so" LUA_PATH="$prefix/share/lua/5.4/?.lua" CULUA_BACKEND=host \
    ${CULUA_TEST_LUA_PRELOAD:+env LD_PRELOAD="$CULUA_TEST_LUA_PRELOAD"} lua5.4 -e 'local cu = require "cu"; assert(cu.arange(4):sum():item() == 6); print("require \"cu\" from the prefix: ok")'
fi
echo "installed package: ok"
