#!/usr/bin/env bash
# Runs every GPU test from an already-built build folder, with relative paths only, so a build
# made elsewhere can be carried to a GPU machine and tested there.
#   tests/run_gpu_tests.sh [BUILD_DIR]      (default: build; run from anywhere)
# Writes one log, $OUT/gpu-tests.log when OUT is set (the device tool), else gpu-tests.log.
# Exit status: 0 when every test passed, 1 otherwise (a skipped test counts as a failure here:
# this script exists to run them; only the lua5.4 run of the stock-Lua module without lua5.4,
# and the REPL test without tmux, are left out, each with a SKIPPED line). A test binary that the
# carried bundle lacks (tools/stage-gpu --part tests) is reported NOT STAGED; with no failure, the
# status is then 2, so that a partial run never reads as a complete one.
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
build=${1:-build}
# A build carried by tools/stage-gpu brings the Open MPI runtime (every culua links libmpi): its
# libraries, plugins, mpirun and help files are found through tools/gpu-env's variables.
if [[ -d $build/mpi ]]; then
  # shellcheck source=tools/gpu-env
  . tools/gpu-env "$build"
fi
log=${OUT:-.}/gpu-tests.log
: >"$log"
passed=0
failed=()
skipped=()
unstaged=()

run() {
  local name=$1
  shift
  local start=$SECONDS
  local arg
  for arg in "$@"; do  # a test binary of the build folder that was not carried
    if [[ $arg == "$build"/tests/* && ! -e $arg ]]; then
      unstaged+=("$name")
      printf '%-40s NOT STAGED: %s\n' "$name" "$arg"
      return
    fi
  done
  {
    echo "=== $name: $*"
    "$@"
  } >>"$log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    passed=$((passed + 1))
    printf '%-40s ok (%ds)\n' "$name" $((SECONDS - start))
  else
    failed+=("$name")
    printf '%-40s FAILED (exit %d)\n' "$name" "$rc"
    echo "=== $name exited $rc" >>"$log"
  fi
}

run gpu.catch "$build/tests/culua_gpu_tests" --warn NoTests
run gpu.fatal_error "$build/tests/culua_gpu_fatal_test"
# The embedding library links the shared C++ Lua: carried in lib-extra where none is installed.
run embed "env" "LD_LIBRARY_PATH=$build/lib-extra:${LD_LIBRARY_PATH:-}" "$build/tests/culua_embed_tests" --warn NoTests
run gpu.embed "env" "LD_LIBRARY_PATH=$build/lib-extra:${LD_LIBRARY_PATH:-}" "$build/tests/culua_embed_gpu_tests" --warn NoTests
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
# Tests of several GPUs in one process: they exit 69 with fewer than 2 GPUs.
MULTI_GPU=(test_multi_gpu test_nccl_multi)
for t in tests/lua/test_*.lua tests/gpu/test_*.lua; do
  base=$(basename "$t" .lua)
  if ((ngpus < 2)) && [[ " ${MULTI_GPU[*]} " == *" $base "* ]]; then
    skipped+=("lua.cuda.$base")
    printf '%-40s SKIPPED: fewer than 2 GPUs\n' "lua.cuda.$base"
    continue
  fi
  run "lua.cuda.$base" "$build/culua" --backend cuda "$t"
done
run cli "$build/culua" tests/cli/test_cli.lua "$build/culua"
# culua as lua 5.4 (the REPL cases then run on the CUDA backend) and the sandbox's CLI cases
run cli.lua_compat "$build/culua" tests/cli/test_lua_compat.lua "$build/culua"
run cli.sandbox "$build/culua" tests/cli/test_sandbox.lua "$build/culua"
# isolated sweep points on the CUDA backend (crashes, exits, timeouts; tests/gpu has the GPU fault)
run cli.sweep_isolate.cuda "$build/culua" --backend host tests/cli/test_sweep_isolate.lua "$build/culua" cuda
# the fuzzer's regression scripts (each must end cleanly)
for t in tests/fuzz/regressions/*.lua; do
  run "fuzz.regression.cuda.$(basename "$t" .lua)" "$build/culua" --backend cuda "$t"
done
# The stock-Lua module cu.so: by Debian's lua5.4 where the machine has it, by stock_lua_host (Lua
# built as C, linked in) everywhere, and by culua (the same script, the same messages).
module_test=tests/module/test_module.lua
if command -v lua5.4 >/dev/null 2>&1; then
  run module.cuda.lua5.4 env CULUA_BACKEND=cuda sh tests/module/run.sh lua5.4 "$build/module" "$module_test"
else
  printf '%-40s SKIPPED: no lua5.4\n' module.cuda.lua5.4
  skipped+=(module.cuda.lua5.4)
fi
run module.cuda.stock_lua_host env CULUA_BACKEND=cuda "$build/tests/stock_lua_host" "$build/module" "$module_test"
run module.cuda.culua "$build/culua" --backend cuda "$module_test"
run quickstart.cuda "$build/culua" --backend cuda scripts/quickstart.lua
# The documentation's examples on the GPU (tests/docs/check_examples.py; python3's standard library
# only): the blocks marked <!-- gpu --> and every other runnable block, and the timing example.
run docs.examples.cuda python3 tests/docs/check_examples.py --culua "$build/culua" --backend cuda
run example.time_kernel "$build/culua" --backend cuda examples/time_kernel.lua
run unit "$build/tests/culua_unit_tests" --warn NoTests
# cuFFT's plan cache, the CUB sorts against a C++ reference, and the Array API functions
# against numpy on the GPU (the GPU machine's python3 has numpy).
run gpu.cufft "$build/tests/culua_gpu_fft_tests" --warn NoTests
run gpu.sort_cub_check "$build/tests/culua_sort_cub_check" 0
for t in tests/numpy/test_*_numpy.lua; do
  run "numpy.cuda.$(basename "$t" .lua)" "$build/culua" --backend cuda "$t"
done
# Every element-wise operation through the run-time-switch kernels (docs/design.md).
run numpy.cuda.elementwise.switch env CULUA_ELEMENTWISE_SWITCH=1 "$build/culua" --backend cuda tests/numpy/test_elementwise_numpy.lua
for name in test_elementwise test_elementwise_api test_layouts_2d; do
  run "lua.cuda.$name.switch" env CULUA_ELEMENTWISE_SWITCH=1 "$build/culua" --backend cuda "tests/lua/$name.lua"
done
# The REPL through a pseudo-terminal needs tmux, which a GPU machine may lack: then it is
# reported as skipped (not failed: the GPU is not the reason).
if command -v tmux >/dev/null 2>&1; then
  run repl.cuda tests/repl/test_repl.sh "$build/culua" cuda
  grep -h "Ctrl-C latency" "$log" || true
else
  skipped+=("repl.cuda")
  printf '%-40s SKIPPED: no tmux\n' "repl.cuda"
  echo "=== repl.cuda: SKIPPED: no tmux" >>"$log"
fi

# MPI on the GPU: a singleton process, and two ranks under mpirun (the carried one, on the PATH).
if [[ -f tests/gpu/test_mpi_gpu.lua ]]; then
  run mpi.cuda.single "$build/culua" --backend cuda tests/gpu/test_mpi_gpu.lua
fi
run mpi.cuda.np2 env CULUA_MPI_BACKEND=cuda sh tests/mpi/run.sh "$build/culua" 2 tests/mpi/test_mpi.lua
# One GPU per rank (cu.nccl.comm_world): NCCL refuses two ranks on one GPU, so it needs two.
if ((ngpus >= 2)); then
  run mpi.cuda.nccl_world env CULUA_MPI_BACKEND=cuda sh tests/mpi/run.sh "$build/culua" 2 tests/mpi/test_nccl_world.lua
  run mpi.cuda.example_normalize env CULUA_MPI_BACKEND=cuda sh tests/mpi/run.sh "$build/culua" 2 examples/mpi/normalize.lua
else
  skipped+=(mpi.cuda.nccl_world mpi.cuda.example_normalize)
  printf '%-40s SKIPPED: fewer than 2 GPUs\n' mpi.cuda.nccl_world
fi

echo "$passed passed, ${#failed[@]} failed${failed:+: ${failed[*]}}${skipped:+, ${#skipped[@]} skipped: ${skipped[*]}}${unstaged:+, ${#unstaged[@]} not staged: ${unstaged[*]}}"
echo "log: $log"
((${#failed[@]} == 0)) || exit 1
((${#unstaged[@]} == 0)) || exit 2
