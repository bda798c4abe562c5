#!/usr/bin/env bash
# On the GPU machine (device tool, carrying build and .deps/starpu): the CUDA tests, then
# blocks reading their neighbours in place (TQ_DIRECT_FACES, src/dirac/dslash_wilson.c)
# against faces, bitwise: test_mpi_dirac's fields on one rank (its 32 blocks on the GPU)
# with and without, and on two ranks sharing the GPU (faces between the ranks).
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/direct; mkdir -p "$res"
for t in test_dslash_cuda test_clover_cuda test_solver_cuda; do
    timeout 300 "$top/build/tests/.libs/$t" > "$res/$t.log" 2>&1
    echo "$t: exit $? | $(tail -n1 "$res/$t.log")"
done
prog=$top/build/tests/.libs/test_mpi_dirac
timeout 300 "$prog" "$res/direct.out" > "$res/direct.log" 2>&1; echo "direct: exit $? | $(tail -n1 "$res/direct.log")"
TQ_DIRECT_FACES=0 timeout 300 "$prog" "$res/faces.out" > "$res/faces.log" 2>&1; echo "faces: exit $? | $(tail -n1 "$res/faces.log")"
timeout 300 mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x STARPU_HOME -np 2 "$prog" "$res/np2.out" > "$res/np2.log" 2>&1
echo "2 ranks: exit $? | $(tail -n1 "$res/np2.log")"
cmp "$res/direct.out" "$res/faces.out" && echo "GPU: direct = faces, bitwise"
cmp "$res/direct.out" "$res/np2.out" && echo "GPU: one rank (direct) = two ranks (faces), bitwise"
