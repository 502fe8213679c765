#!/usr/bin/env bash
# scripts/bench/peers.py's whole control flow on fake cupy and torch modules (tests/bench/fake:
# no GPU needed): the record format of docs/performance.md, every operation and size once, the
# absent operations, an out-of-memory error that frees its arrays before the next measurement,
# device work only on the non-blocking stream after the context, no TF32 for f32 matmul, graphs
# captured on that stream (nothing a capture refuses inside) and launched outside the capture.
#   tests/bench/test_peers_fake.sh [PYTHON]
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
export PYTHONPATH="$here/fake" FAKE_PEER=gpu FAKE_MEM=$((600 << 20))

# The checker of one run's records: standard input, arguments IMPL GROUPS.
read -r -d '' checker <<'PY'
import json, sys
impl, groups = sys.argv[1], sys.argv[2].split(",")
recs = [json.loads(line) for line in sys.stdin.read().splitlines()]
assert all(isinstance(r, dict) and r["impl"] == impl for r in recs), recs
assert "info" in recs[0] and recs[0]["info"]["device"] == "Fake GPU", recs[0]
KB, MB = 1 << 10, 1 << 20
want = []
if "startup" in groups:
    want += [("context", None), ("first_kernel", None)]
if "launch" in groups:
    want += [(p + "_rtc%d" % k, None) for k in (0, 4, 8) for p in ("launch", "enqueue")]
    want += [("sync_empty", None)]
if "add1k" in groups:
    want += [(p + "_add1k", None) for p in ("launch", "enqueue", "sync")]
GRAPH_OPS = [p + k for k in ("empty", "add1k")
             for p in ("graph_", "graph_capture_", "graph_instantiate_")]
if "graph" in groups:
    want += [(op, None) for op in GRAPH_OPS]
if "bandwidth" in groups:
    want += [(op, s) for s in (4 * KB, 256 * MB) for op in ("copy", "add", "sum", "cast")]
if "transfer" in groups:
    want += [(d + "_" + m, s) for s in (4 * KB, MB)
             for d in ("h2d", "d2h") for m in ("pinned", "pageable")]
if "alloc" in groups:
    want += [("alloc", s) for s in (4 * KB, 64 * KB)]
if "matmul" in groups:
    want += [("matmul_" + t, n) for n in (16, 32) for t in ("f32", "bf16", "f64")]
got = [(r["op"], r.get("size")) for r in recs[1:]]
assert sorted(got, key=str) == sorted(want, key=str), (got, want)
if "startup" in groups:
    assert got[:2] == [("context", None), ("first_kernel", None)], got
if impl == "torch":
    absent = {(p + "_rtc%d" % k, None) for p in ("launch", "enqueue") for k in (0, 4, 8)}
    absent |= {("sync_empty", None), ("graph_empty", None), ("graph_capture_empty", None)}
else:
    absent = {("cast", 4 * KB), ("cast", 256 * MB), ("matmul_bf16", 16), ("matmul_bf16", 32)}
absent |= {("graph_instantiate_empty", None), ("graph_instantiate_add1k", None)}
errors = {("add", 256 * MB)}  # 3 x 256 MiB in 600 MiB; sum after it shows its arrays were freed
units = {"context": "ms", "first_kernel": "ms", "copy": "GB/s", "add": "GB/s", "sum": "GB/s",
         "cast": "GB/s", "alloc": "us", "graph_capture_empty": "ms", "graph_capture_add1k": "ms"}
for r in recs[1:]:
    key = (r["op"], r.get("size"))
    if key in absent and key in want:
        assert set(r) - {"size"} == {"impl", "op", "absent"} and r["absent"], r
        continue
    if key in errors and key in want:
        assert set(r) == {"impl", "op", "size", "error"}, r
        assert r["error"].startswith("OutOfMemoryError"), r
        continue
    assert "error" not in r and "absent" not in r, r
    op = r["op"]
    unit = units.get(op) or ("TFLOP/s" if op.startswith("matmul") else
                             "GB/s" if op[:3] in ("h2d", "d2h") else "us")
    assert r["unit"] == unit, r
    n = 1 if op in ("context", "first_kernel") else 3
    assert r["n"] == n and r["min"] <= r["median"] <= r["max"] and r["min"] > 0, r
    assert isinstance(r["how"], str) and r["how"], r
    if op in GRAPH_OPS:  # --launches 50: one replay of the 1000 nodes per repetition
        assert r["nodes"] == 1000, r
        replayed = op in ("graph_empty", "graph_add1k")
        assert r.get("batch") == (1000 if replayed else None), r
        continue
    batched = op in ("copy", "add", "sum", "cast") or op.startswith("matmul")
    assert ("batch" in r) == batched and (not batched or 1 <= r["batch"] <= 2000), r
    if op == "matmul_f32":
        assert "tf32" in r["how"].lower(), r
        if impl == "cupy":
            assert "removed" in r["how"], r
print("ok: %s --ops %s: %d records" % (impl, ",".join(groups), len(recs)))
PY

failures=0
# run IMPL OPS...: runs peers.py with small sizes and checks its records.
run() {
  local impl=$1 ops=$2 out rc
  out=$(CUPY_TF32=1 "$python" "$peers" --impl "$impl" --ops "$ops" --reps 3 --launches 50 \
    --bw-sizes 4K,256M --transfer-sizes 4K,1M --alloc-sizes 4K,64K --matmul-sizes 16,32 2>/dev/null)
  rc=$?
  if ((rc != 0)); then
    echo "FAIL: $impl --ops $ops: exit status $rc"
    failures=$((failures + 1))
    return
  fi
  if ! printf '%s\n' "$out" | "$python" -c "$checker" "$impl" "$ops"; then
    echo "FAIL: $impl --ops $ops: records do not follow the contract:"
    printf '%s\n' "$out"
    failures=$((failures + 1))
  fi
}

all=launch,add1k,graph,bandwidth,transfer,alloc,matmul,startup
for impl in cupy torch; do
  run "$impl" "$all"
  run "$impl" alloc          # no startup group: no context record, the context made anyway
  run "$impl" matmul,startup # startup first whatever the order
  run "$impl" graph          # graphs first: the capture needs no earlier group's state
done

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "passed"
