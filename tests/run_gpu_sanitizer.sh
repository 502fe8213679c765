#!/usr/bin/env bash
# Runs the GPU tests under compute-sanitizer (API errors reported too) from an already-built build
# folder, like tests/run_gpu_tests.sh (relative paths only, so a build carried to a GPU machine by
# tools/stage-gpu works):
#   tests/run_gpu_sanitizer.sh [BUILD_DIR [NAME_REGEX]]   (default: build, every test)
# Environment: TOOLS (the sanitizer's tools to run, one pass each over the tests: memcheck,
# racecheck, synccheck, initcheck, or "all" for the first three; default memcheck),
# COMPUTE_SANITIZER (default: on the PATH, else /usr/local/cuda/bin), JOBS (tests run at once,
# default 1: some tests measure free device memory), TEST_TIMEOUT (seconds a test, 1200).
# The tests run with CULUA_UNDER_SANITIZER=1: the sanitizer makes every kernel launch wait for the
# device's earlier work, so the checks that a launch returns while work is still queued (and the
# timing ratios of test_bench_gpu) only print a note there.
# Some tests provoke CUDA errors on purpose (out of memory, a graph update the driver refuses, a
# capture with unjoined work, a device that does not exist); the sanitizer reports them as API errors. They are counted apart,
# as expected, only for the test and the error named in EXPECTED below; every other error counts.
# gpu.fatal_error (an illegal address on purpose) is left out.
# Writes one log a tool, $OUT/gpu-sanitizer-TOOL.log when OUT is set (the device tool), else
# gpu-sanitizer-TOOL.log.
# Exit status: 0 when every test passed with no unexpected sanitizer error under every tool, 1
# otherwise.
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
# A build carried by tools/stage-gpu brings the Open MPI runtime (every culua links libmpi).
if [[ -d $build/mpi ]]; then
  # shellcheck source=tools/gpu-env
  . tools/gpu-env "$build"
fi
filter=${2:-.}
jobs=${JOBS:-1}
timeout_s=${TEST_TIMEOUT:-1200}
tools=${TOOLS:-memcheck}
[[ $tools == all ]] && tools="memcheck racecheck synccheck"
for tool in $tools; do
  case $tool in
    memcheck | racecheck | synccheck | initcheck) ;;
    *)
      echo "TOOLS: unknown tool '$tool' (memcheck, racecheck, synccheck, initcheck or all)" >&2
      exit 1
      ;;
  esac
done
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [[ ! -x $sanitizer ]]; then
  echo "compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
  exit 1
fi
export CULUA_UNDER_SANITIZER=1

# test name (regex), then the CUDA error names it provokes on purpose.
EXPECTED=(
  "lua\.cuda\.test_memory|gpu\.lua\.test_gpu_memory|gpu\.catch cudaErrorMemoryAllocation"
  "lua\.cuda\.test_graph|gpu\.lua\.test_graph_gpu cudaErrorGraphExecUpdateFailure cudaErrorStreamCaptureUnjoined"
  # test_fft_api makes, on purpose, a plan cuFFT can only make by synchronizing the context during a
  # capture (a Bluestein length): cuCtxSynchronize inside cufftMakePlanMany64 invalidates it.
  "lua\.cuda\.test_fft_api CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED cudaErrorStreamCaptureInvalidated"
  # the DeviceScope test asks for a device that does not exist
  "gpu\.catch CUDA_ERROR_INVALID_DEVICE"
  # NCCL probes its kernels with cudaFuncGetAttributes when it builds a plan; those compiled for
  # other architectures answer this, and NCCL handles it (seen in libnccl.so.2's frames, H200).
  "lua\.cuda\.test_nccl|gpu\.lua\.test_nccl_multi|mpi\..* cudaErrorNoKernelImageForDevice"
)

names=()
commands=()
add() {
  [[ $1 =~ $filter ]] || return 0
  names+=("$1")
  shift
  commands+=("$(printf '%q ' "$@")")
}
lib_path="$build/lib-extra:${LD_LIBRARY_PATH:-}"
add gpu.catch "$build/tests/culua_gpu_tests" --warn NoTests
add gpu.embed env "LD_LIBRARY_PATH=$lib_path" "$build/tests/culua_embed_gpu_tests" --warn NoTests
# Tests in SPLIT run one case a run (the case name is the filter cu.testing takes as its first
# argument): under the sanitizer the whole of test_experiments runs past any sensible timeout, its
# cases side by side (JOBS) do not.
SPLIT=(test_experiments)
for t in tests/lua/test_*.lua; do
  base=$(basename "$t" .lua)
  if [[ " ${SPLIT[*]} " == *" $base "* ]]; then
    i=0
    while IFS= read -r case_name; do
      i=$((i + 1))
      add "lua.cuda.$base.$i" "$build/culua" --backend cuda "$t" "$case_name"
    done < <(sed -n 's/^T\.case("\([^"]*\)".*/\1/p' "$t")
  else
    add "lua.cuda.$base" "$build/culua" --backend cuda "$t"
  fi
done
for t in tests/gpu/test_*.lua; do add "gpu.lua.$(basename "$t" .lua)" "$build/culua" --backend cuda "$t"; done
add module.cuda.stock_lua_host env CULUA_BACKEND=cuda "$build/tests/stock_lua_host" "$build/module" \
  tests/module/test_module.lua
add quickstart.cuda "$build/culua" --backend cuda scripts/quickstart.lua
add experiment.streams_overlap "$build/culua" --backend cuda scripts/streams_overlap.lua --quick \
  --results "trace=${TMPDIR:-/tmp}/streams_overlap.sanitizer.json"
# Two ranks under mpirun: the sanitizer follows the child processes (--target-processes all, its
# default). Not yet run on a GPU: should it print a summary a process, only the first is counted.
# (The singleton MPI test, tests/gpu/test_mpi_gpu.lua, runs above as gpu.lua.test_mpi_gpu.)
add mpi.cuda.np2 env CULUA_MPI_BACKEND=cuda sh tests/mpi/run.sh "$build/culua" 2 tests/mpi/test_mpi.lua

work_root=$(mktemp -d)
trap 'rm -rf "$work_root"' EXIT

# One test under the sanitizer: its output in $work/<i>.log, its summary line in $work/<i>.sum.
run_one() {
  local i=$1 name=${names[$1]} start=$SECONDS
  local out="$work/$i.log"
  # shellcheck disable=SC2086
  eval "timeout $timeout_s \"\$sanitizer\" --tool $tool --report-api-errors explicit \
        --print-limit 100000 ${commands[$i]}" >"$out" 2>&1
  local rc=$?
  local total expected=0
  # memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N
  # hazards displayed (E errors, W warnings)", where warnings are hazards too.
  total=$(sed -n 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$out" | head -1)
  if [[ -z $total ]]; then
    total=$(sed -n 's/^========= RACECHECK SUMMARY: .*(\([0-9]*\) errors\?, \([0-9]*\) warnings\?).*/\1 + \2/p' "$out" | head -1)
    [[ -n $total ]] && total=$((total))
  fi
  # racecheck's summary counts hazards only, not the API errors it reports as well.
  [[ $tool == racecheck ]] || for entry in "${EXPECTED[@]}"; do
    local pattern=${entry%% *} errors=${entry#* }
    [[ $name =~ ^($pattern)$ ]] || continue
    for e in $errors; do
      expected=$((expected + $(grep -c "^========= Program hit $e " "$out")))
    done
  done
  local status
  if [[ -z $total ]]; then
    status="FAILED (exit $rc, no error summary)"
  else
    local real=$((total - expected))
    if ((rc == 69)); then
      status="SKIPPED (exit 69: not on this machine, e.g. fewer GPUs than it needs)"
    elif ((rc != 0)) && [[ $tool != memcheck ]] && ((real == 0)); then
      # racecheck and synccheck slow kernels by orders of magnitude: the tests' timing checks (a
      # copy returns within 0.1 s, cu.bench reaches 3 samples in 0.5 s) and TEST_TIMEOUT do not
      # hold. The tool found nothing in what ran; the test itself is checked under memcheck.
      status="no findings, but the test did not pass under $tool (exit $rc: timing, see the log)"
    elif ((rc != 0)); then
      status="FAILED (exit $rc)"
    elif ((real > 0)); then
      status="FAILED"
    else
      status="ok"
    fi
    status="$status: $real error(s)$( ((expected)) && echo ", $expected expected")"
  fi
  printf '%-40s %s (%ds)\n' "$name" "$status" $((SECONDS - start)) >"$work/$i.sum"
}

all_ok=1
for tool in $tools; do
  echo "== compute-sanitizer --tool $tool"
  work=$work_root/$tool
  mkdir -p "$work"
  log=${OUT:-.}/gpu-sanitizer-$tool.log
  for i in "${!names[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
    run_one "$i" &
  done
  wait

  : >"$log"
  failed=()
  for i in "${!names[@]}"; do
    cat "$work/$i.sum"
    { echo "=== ${names[$i]}: ${commands[$i]}"; cat "$work/$i.log"; cat "$work/$i.sum"; } >>"$log"
    grep -q ' ok: \| SKIPPED \| no findings, ' "$work/$i.sum" || failed+=("${names[$i]}")
  done
  echo "$tool: ${#names[@]} run, ${#failed[@]} failed${failed:+: ${failed[*]}}"
  echo "log: $log"
  ((${#names[@]} > 0 && ${#failed[@]} == 0)) || all_ok=0
done
((all_ok))
