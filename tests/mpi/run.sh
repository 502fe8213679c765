#!/bin/sh
# Runs culua under mpirun: run.sh CULUA NP SCRIPT [ARGS...]. Exit 77 (skipped) without mpirun.
culua=$1 np=$2
shift 2
command -v mpirun >/dev/null 2>&1 || { echo "skip: mpirun not found"; exit 77; }
# Started from a singleton MPI process (a test that used cu.mpi first): its Open MPI environment
# would make this mpirun a part of that job.
if [ "${OMPI_MCA_ess:-}" = singleton ]; then
  for v in $(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
  done
fi
root=
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
exec mpirun $root --oversubscribe -np "$np" "$culua" --backend host "$@"
