#!/bin/sh
# Runs test_mpi_blas on 2 MPI ranks (reductions through StarPU-MPI and MPI_Allreduce).
# Skips (77) when TaskQCD was built without MPI or mpirun is missing.
here=$(cd "$(dirname "$0")" && pwd)
builddir=${TQ_BUILDDIR:-$here/..}
prog=$builddir/tests/test_mpi_blas
[ -x "$prog" ] || { echo "test_mpi: SKIP: $prog not built (TaskQCD built without MPI)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "test_mpi: SKIP: no mpirun"; exit 77; }
unset STARPU_NCPU STARPU_NCPUS STARPU_SCHED
# root in containers (CI) needs --allow-run-as-root; 2 ranks may exceed the core count
extra="--oversubscribe"
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
out=$(timeout 300 mpirun $extra -np 2 "$prog" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ]; then echo "test_mpi: FAIL (mpirun exit $rc)"; exit 1; fi
n=$(echo "$out" | grep -c "checks, 0 failed")
if [ "$n" -ne 2 ]; then echo "test_mpi: FAIL: expected 2 ranks to pass, got $n"; exit 1; fi
echo "test_mpi: 2 ranks passed"
