#!/usr/bin/env bash
# Runs the tests labelled gpu (`ctest -L gpu`) of a build folder on a GPU machine. A build made
# elsewhere comes as a bundle (tools/stage-gpu, unpacked by tools/unpack-gpu into gpu-build, its
# CTest files pointed at this copy of the tree), so the list of GPU tests is ctest's, kept in
# tests/CMakeLists.txt only.
#   tests/run_gpu_tests.sh [BUILD_DIR [CTEST_ARGS...]]   (default build folder: gpu-build)
# CTEST_ARGS narrow or widen the run: -R REGEX, -E REGEX, -j N (tests that time the device or read
# its free memory still run alone: RUN_SERIAL in tests/CMakeLists.txt), ... A test that needs what the
# machine lacks (two GPUs, lua5.4, jupyter_client) is reported as skipped by ctest.
# Writes the log to $OUT/gpu-tests.log when OUT is set (the device tool), else gpu-tests.log.
# Exit status: ctest's (0 when every test that ran passed).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-gpu-build}
shift || true
if [[ ! -f $build/CTestTestfile.cmake ]]; then
  echo "run_gpu_tests.sh: $build has no CTest files: build it, or run tools/unpack-gpu on a carried bundle" >&2
  exit 2
fi
# A build carried by tools/stage-gpu brings the Open MPI runtime (every culua links libmpi) and the
# libraries the GPU machine lacks: tools/gpu-env points the loader and Open MPI at them.
if [[ -d $build/lib-extra ]]; then
  # shellcheck source=tools/gpu-env
  . tools/gpu-env "$build"
fi
log=${OUT:-.}/gpu-tests.log
ctest --test-dir "$build" -L gpu --output-on-failure --no-tests=error "$@" >"$log" 2>&1
rc=$?
# The per-test lines and the summary (the log has every failing test's output).
grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|The following tests|^\s+[0-9]+ - ' "$log"
echo "log: $log"
exit "$rc"
