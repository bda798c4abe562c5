#!/bin/sh
# Runs the MPI tests: test_mpi_blas (reductions through StarPU-MPI and MPI_Allreduce) and
# test_mpi_agree (one rank's failure reaches every rank, no hang; lattices of one rank each)
# on 2 ranks, test_mpi_groups (lattices over groups of 2 ranks) on 4. Skips (77) when
# TaskQCD was built without MPI or mpirun is missing.
here=$(cd "$(dirname "$0")" && pwd)
builddir=${TQ_BUILDDIR:-$here/..}
command -v mpirun >/dev/null 2>&1 || { echo "test_mpi: SKIP: no mpirun"; exit 77; }
unset STARPU_NCPU STARPU_NCPUS STARPU_SCHED
# root in containers (CI) needs --allow-run-as-root; 2 ranks may exceed the core count
extra="--oversubscribe"
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
for c in test_mpi_blas:2 test_mpi_agree:2 test_mpi_groups:4; do
    t=${c%:*} np=${c#*:}
    prog=$builddir/tests/$t
    [ -x "$prog" ] || { echo "test_mpi: SKIP: $prog not built (TaskQCD built without MPI)"; exit 77; }
    out=$(timeout 300 mpirun $extra -np "$np" "$prog" 2>&1)
    rc=$?
    echo "$out"
    if [ $rc -eq 124 ]; then echo "test_mpi: FAIL: $t did not finish in 300 s (a rank left waiting?)"; exit 1; fi
    if [ $rc -ne 0 ]; then echo "test_mpi: FAIL: $t (mpirun exit $rc)"; exit 1; fi
    n=$(echo "$out" | grep -c "checks, 0 failed")
    if [ "$n" -ne "$np" ]; then echo "test_mpi: FAIL: $t: expected $np ranks to pass, got $n"; exit 1; fi
    echo "test_mpi: $t: $np ranks passed"
done
