#!/usr/bin/env bash
# Bad arguments of the host group's producers: culua's side (scripts/bench/host.lua) and the native
# loops (culua-host-baseline) exit 2 with a message naming the program, and print no record.
#   tests/bench/test_host_bad_args.sh CULUA CULUA_HOST_BASELINE
set -uo pipefail

culua=$1 native=$2
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../scripts/bench/host.lua"
failures=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
check() { # NAME PREFIX COMMAND...
  local name=$1 prefix=$2 out rc
  shift 2
  out=$("$@" 2>"$err")
  rc=$?
  if ((rc != 2)) || ! grep -q "^$prefix" "$err" || [[ -n $out ]]; then
    echo "FAIL: $name: status $rc, stderr: $(cat "$err"), stdout: $out"
    failures=$((failures + 1))
  fi
}
for a in "--sizes 3" "--sizes 4K,12Q" "--ops nope" "--reps 0" "--reps" "--matmul-sizes 0" "--bogus"; do
  # shellcheck disable=SC2086 # the words of $a are the arguments
  check "host.lua $a" "host.lua: " "$culua" --backend host "$script" $a
  if [[ $a != --matmul-sizes* ]]; then
    # shellcheck disable=SC2086
    check "culua-host-baseline $a" "culua-host-baseline: " "$native" $a
  fi
done
if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "passed"
