#!/usr/bin/env bash
# The test module.luarocks: the rockspec (culua-<version>-1.rockspec at the root) builds cu.so with
# `luarocks make` into a fresh tree, and Debian's lua5.4 loads it from there through the paths
# `luarocks path` gives. Nothing is downloaded (--deps-mode none). The sources are copied beside
# the build folder (LuaRocks builds in the source folder); ccache serves most of the compilation.
#   luarocks_make.sh BUILD_DIR SOURCE_DIR VERSION CUDA(ON|OFF)
# Exit 77 (skipped) without luarocks or lua5.4.
set -euo pipefail
build=$1 source=$2 version=$3 cuda=$4
for tool in luarocks lua5.4; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "no $tool: skipped (Debian packages luarocks and lua5.4)"
    exit 77
  fi
done
rockspec=culua-$version-1.rockspec
if [[ ! -f $source/$rockspec ]]; then
  echo "FAIL: no $rockspec at the root of the sources: the rockspec's version must be the project's ($version)" >&2
  ls "$source"/*.rockspec >&2 || true
  exit 1
fi

work=$build/luarocks-test
rm -rf "$work"
mkdir -p "$work/src"
excludes=(--exclude='./build*' --exclude=./.git --exclude='./gpu-*')
src_abs=$(cd "$source" && pwd -P) build_abs=$(cd "$build" && pwd -P)
if [[ $build_abs == "$src_abs"/* ]]; then excludes+=(--exclude="./${build_abs#"$src_abs"/}"); fi
tar -C "$source" "${excludes[@]}" -cf - . | tar -C "$work/src" -xf -
tree=$work/tree

# The build's settings: the same CUDA choice; JOBS (else every core) jobs at once (LuaRocks runs
# `cmake --build` without -j, on Makefiles).
export CULUA_CUDA=$cuda
export CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-$(nproc)}
if [[ -z ${CCACHE_BASEDIR:-} ]]; then
  # Paths relative to a folder above both source trees: the copy's objects hit the build's.
  a=$src_abs b=$(cd "$work/src" && pwd -P)
  while [[ $b != "$a"/* && $b != "$a" ]]; do a=$(dirname "$a"); done
  [[ $a == / ]] || export CCACHE_BASEDIR=$a
fi

(cd "$work/src" && luarocks --lua-version 5.4 --tree "$tree" make --deps-mode none "$rockspec")

installed=$(cd "$tree" && find . -path ./lib/luarocks -prune -o -type f -print | sort)
echo "installed in the tree: $installed"
if [[ $installed != "./lib/lua/5.4/cu.so" ]]; then
  echo "FAIL: the rock must install cu.so alone, as lib/lua/5.4/cu.so" >&2
  exit 1
fi

eval "$(luarocks --lua-version 5.4 --tree "$tree" path)"
CULUA_BACKEND=host lua5.4 -e '
  local where = package.searchpath("cu", package.cpath)
  assert(where and where:find("/luarocks-test/tree/", 1, true), "cu found at " .. tostring(where))
  local cu = require "cu"
  assert(cu.ones(3):sum():item() == 3)
  assert(require("cu.testing"), "the embedded Lua modules come with it")
  print("lua5.4: cu from " .. where .. ", backend " .. cu.backend)'
