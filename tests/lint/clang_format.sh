#!/bin/sh
# ctest lint.clang_format: every C++ and CUDA file of the repository is as clang-format (Debian's,
# with the project's .clang-format) lays it out, run from the source directory given as $1.
# src/fuse/nvrtc/ is left out: those headers are the text of generated kernels' prelude, kept as
# written (their bytes are part of every fused kernel's cache key).
cd "${1:?usage: clang_format.sh SOURCE_DIR}" || exit 1
if ! command -v clang-format >/dev/null 2>&1; then
  echo "lint.clang_format: clang-format is not installed: install the Debian package clang-format" \
       "(tools/dev setup does) and run the test again" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' '*.c' | grep -v '^src/fuse/nvrtc/')
else
  files=$(find src include tests bench examples -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \
          -o -name '*.cuh' -o -name '*.h' -o -name '*.c' | grep -v '^src/fuse/nvrtc/')
fi
# shellcheck disable=SC2086
out=$(clang-format --dry-run -Werror $files 2>&1)
status=$?
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$out" | grep 'error:' | cut -d: -f1 | sort | uniq -c >&2
  echo "lint.clang_format: the files above differ from clang-format's layout: run" \
       "'clang-format -i FILE' on them" >&2
fi
exit "$status"
