#!/bin/sh
# ctest lint.luacheck: luacheck (Debian's lua-check) over scripts/, lua/ and tests/ with the
# project's .luacheckrc, run from the source directory given as $1. Any warning or error fails.
cd "${1:?usage: luacheck.sh SOURCE_DIR}" || exit 1
if ! command -v luacheck >/dev/null 2>&1; then
  echo "lint.luacheck: luacheck is not installed: install the Debian package lua-check" \
       "(tools/dev setup does) and run the test again" >&2
  exit 1
fi
# --quiet: only the files with warnings, then the total; luacheck exits 1 on warnings, 2 on errors.
luacheck --no-color --quiet --codes scripts lua tests
status=$?
if [ "$status" -ne 0 ]; then
  echo "lint.luacheck: fix the warnings above (or, for a deliberate one, add an inline" \
       "'-- luacheck: ignore NNN (reason)'); run 'luacheck scripts lua tests' to check" >&2
fi
exit "$status"
