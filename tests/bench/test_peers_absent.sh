#!/usr/bin/env bash
# scripts/bench/peers.py where the peer cannot run: without the module, or without a GPU, it
# prints exactly one record {"impl": ..., "absent": reason} and exits 0; bad arguments exit 2.
# Fake modules (tests/bench/fake, FAKE_PEER=missing|nogpu) make both cases happen on any
# machine; where python3 cannot import the real cupy or torch, the real absent path runs too.
#   tests/bench/test_peers_absent.sh [PYTHON]
# Exit status: 0 passed, 1 failed, 77 skipped (no python3).
set -uo pipefail

python=${1:-python3}
readonly SKIP=77
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
here=$(cd "$(dirname "$0")" && pwd)
peers="$here/../../scripts/bench/peers.py"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "SKIPPED: no $python"
  exit $SKIP
fi

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# check_absent IMPL LABEL [env...]: one line of valid JSON, impl right, a non-empty reason.
check_absent() {
  local impl=$1 label=$2 out rc
  shift 2
  out=$(env "$@" "$python" "$peers" --impl "$impl" 2>/dev/null)
  rc=$?
  ((rc == 0)) || fail "$impl ($label): exit status $rc"
  if ! printf '%s\n' "$out" | "$python" -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, "expected one line, got %d: %r" % (len(lines), lines)
rec = json.loads(lines[0])
assert set(rec) == {"impl", "absent"}, rec
assert rec["impl"] == sys.argv[1], rec
assert isinstance(rec["absent"], str) and rec["absent"], rec
print("ok:", sys.argv[2], lines[0])
' "$impl" "$label"; then
    fail "$impl ($label): not one absent record: $out"
  fi
}

for impl in cupy torch; do
  check_absent "$impl" "fake module missing" PYTHONPATH="$here/fake" FAKE_PEER=missing
  check_absent "$impl" "fake module, no GPU" PYTHONPATH="$here/fake" FAKE_PEER=nogpu
  if ! "$python" -c "import $impl" >/dev/null 2>&1; then
    check_absent "$impl" "real environment, no $impl"
  fi
done

# Bad arguments: status 2, nothing on standard output.
bad_args=("--impl mxnet" "" "--impl cupy --ops launch,nope" "--impl torch --reps 0"
  "--impl cupy --bw-sizes 4K,12Q" "--impl torch --matmul-sizes 1K" "--impl cupy --launches"
  "--impl cupy --unknown")
for a in "${bad_args[@]}"; do
  # shellcheck disable=SC2086 # the words of $a are the arguments
  out=$(PYTHONPATH="$here/fake" FAKE_PEER=missing "$python" "$peers" $a 2>/dev/null)
  rc=$?
  ((rc == 2)) || fail "'$a': exit status $rc, expected 2"
  [[ -z $out ]] || fail "'$a': printed on standard output: $out"
done

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "passed"
