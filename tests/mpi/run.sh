#!/bin/sh
# Runs culua under mpirun: run.sh CULUA NP SCRIPT [ARGS...] on the backend $CULUA_MPI_BACKEND
# (default host). Exit 77 (skipped) without mpirun, or for the cuda backend without a GPU (or with
# fewer than $CULUA_MPI_MIN_DEVICES).
culua=$1 np=$2
shift 2
backend=${CULUA_MPI_BACKEND:-host}
command -v mpirun >/dev/null 2>&1 || { echo "skip: mpirun not found"; exit 77; }
if [ "$backend" = cuda ]; then
  "$culua" --backend cuda -e '' >/dev/null 2>&1
  [ $? = 69 ] && { echo "skip: no GPU"; exit 77; }
  # CULUA_MPI_MIN_DEVICES=N: a script that needs N GPUs (one per rank) is skipped with fewer.
  if [ -n "${CULUA_MPI_MIN_DEVICES:-}" ]; then
    "$culua" --backend cuda -e "os.exit(#cu.devices() >= ${CULUA_MPI_MIN_DEVICES} and 0 or 1)" >/dev/null 2>&1 ||
      { echo "skip: fewer than ${CULUA_MPI_MIN_DEVICES} GPUs"; exit 77; }
  fi
fi
# Started from a singleton MPI process (a test that used cu.mpi first): its Open MPI environment
# would make this mpirun a part of that job.
if [ "${OMPI_MCA_ess:-}" = singleton ]; then
  # (PMIx's install folders, set by tools/gpu-env for a carried Open MPI, are kept.)
  for v in $(env | sed -n 's/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(PMIX_[A-Za-z0-9_]*\)=.*/\1/p' |
    grep -Ev '^PMIX_(PREFIX|EXEC_PREFIX|BINDIR|LIBDIR|PKGLIBDIR|DATADIR|PKGDATADIR|SYSCONFDIR)$'); do
    unset "$v"
  done
fi
root=
[ "$(id -u)" = 0 ] && root=--allow-run-as-root
exec mpirun $root --oversubscribe -np "$np" "$culua" --backend "$backend" "$@"
