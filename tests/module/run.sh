#!/bin/sh
# Runs a script that loads cu.so with a stock Lua (the backend comes from CULUA_BACKEND):
#   tests/module/run.sh lua5.4|valgrind|PATH_OF_stock_lua_host MODULE_DIR SCRIPT
# lua5.4 is Debian's interpreter; valgrind runs it under memcheck (any error or definite leak
# fails); a path runs stock_lua_host. Exits 69 (skipped) when lua5.4 or valgrind is not installed.
set -u
runner=$1
dir=$2
script=$3
export LUA_CPATH="$dir/?.so"
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIPPED: no $1"
    exit 69
  fi
}
case $runner in
  lua5.4)
    need lua5.4
    exec lua5.4 "$script"
    ;;
  valgrind)
    need lua5.4
    need valgrind
    exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
      lua5.4 "$script"
    ;;
  *)
    exec "$runner" "$dir" "$script"
    ;;
esac
