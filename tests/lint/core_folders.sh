#!/bin/sh
# ctest lint.core_folders: the folders of src/core keep their direction (docs/design.md, "The core's
# folders"). base (errors, JSON, handles, loaders, host memory) includes nothing else of the core;
# no header outside core/ops includes an ops header (the array operations sit on top of the data
# model, the backend protocol and the runtime). Run from the source directory given as $1.
cd "${1:?usage: core_folders.sh SOURCE_DIR}" || exit 1
status=0
bad=$(grep -rnE '#include "core/(model|backend|runtime|ops)/' src/core/base)
if [ -n "$bad" ]; then
  printf '%s\n' "$bad" >&2
  echo "lint.core_folders: core/base includes another folder of the core (above)" >&2
  status=1
fi
bad=$(grep -rnE '#include "core/ops/' src/core/model src/core/backend src/core/runtime --include='*.hpp')
if [ -n "$bad" ]; then
  printf '%s\n' "$bad" >&2
  echo "lint.core_folders: a header below core/ops includes an ops header (above)" >&2
  status=1
fi
loose=$(find src/core -maxdepth 1 -type f \( -name '*.cpp' -o -name '*.hpp' \))
if [ -n "$loose" ]; then
  printf '%s\n' "$loose" >&2
  echo "lint.core_folders: files directly in src/core (above): each belongs in one of its folders" >&2
  status=1
fi
exit "$status"
