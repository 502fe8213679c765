#!/bin/sh
# Runs culua under mpirun: run.sh CULUA NP SCRIPT [ARGS...]. Exit 77 (skipped) without mpirun.
culua=$1 np=$2
shift 2
command -v mpirun >/dev/null 2>&1 || { echo "skip: mpirun not found"; exit 77; }
root=
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
exec mpirun $root --oversubscribe -np "$np" "$culua" --backend host "$@"
