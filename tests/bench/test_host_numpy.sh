#!/usr/bin/env bash
# scripts/bench/host_numpy.py, numpy's side of the suite's host group: with numpy (the first of
# python3, /usr/bin/python3 that imports it, as the suite picks), --quick prints an info record
# (numpy's version, its BLAS) and a figure for every operation and size; without numpy (`-S`:
# no site packages) exactly one absent record, status 0; bad arguments exit 2.
#   tests/bench/test_host_numpy.sh
# Exit status: 0 passed, 1 failed, 77 skipped (no python3 with numpy).
set -uo pipefail

readonly SKIP=77
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../scripts/bench/host_numpy.py"
python=
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import numpy' >/dev/null 2>&1; then
    python=$py
    break
  fi
done
if [[ -z $python ]]; then
  echo "SKIPPED: no python3 that imports numpy"
  exit $SKIP
fi

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

out=$("$python" "$script" --quick)
rc=$?
((rc == 0)) || fail "--quick: exit status $rc"
if ! printf '%s\n' "$out" | "$python" -c '
import json, sys
recs = [json.loads(line) for line in sys.stdin.read().splitlines()]
info = recs[0]
assert info["impl"] == "numpy" and info["info"]["numpy"], info
assert isinstance(info["info"]["blas"], dict) and "loaded" in info["info"]["blas"], info
want = {("host_" + op, size) for op in ("copy", "add", "sum", "transpose") for size in (65536, 1048576)}
want |= {("host_matmul_" + t, n) for t in ("f32", "f64") for n in (64, 128)}
got = {}
for r in recs[1:]:
    assert r["impl"] == "numpy" and "error" not in r, r
    assert r["unit"] == ("GFLOP/s" if "matmul" in r["op"] else "GB/s"), r
    assert 0 < r["min"] <= r["median"] <= r["max"] and r["n"] == 3 and r["batch"] >= 1, r
    got[(r["op"], r["size"])] = r
assert set(got) == want, sorted(set(got) ^ want)
print("ok: %d figures, numpy %s" % (len(got), info["info"]["numpy"]))
'; then
  fail "--quick: records incomplete: $out"
fi

# Without numpy: one absent record.
out=$("$python" -S "$script" --quick 2>/dev/null)
rc=$?
((rc == 0)) || fail "without numpy: exit status $rc"
if ! printf '%s\n' "$out" | "$python" -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
rec = json.loads(lines[0])
assert set(rec) == {"impl", "absent"} and rec["impl"] == "numpy" and rec["absent"], rec
print("ok: absent:", rec["absent"])
'; then
  fail "without numpy: not one absent record: $out"
fi

bad_args=("--ops copy,nope" "--reps 0" "--sizes 4K,12Q" "--sizes 6" "--matmul-sizes 1K" "--reps" "--unknown")
for a in "${bad_args[@]}"; do
  # shellcheck disable=SC2086 # the words of $a are the arguments
  out=$("$python" "$script" $a 2>/dev/null)
  rc=$?
  ((rc == 2)) || fail "'$a': exit status $rc, expected 2"
  [[ -z $out ]] || fail "'$a': printed on standard output: $out"
done

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "passed"
