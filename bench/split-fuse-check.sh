#!/usr/bin/env bash
# A fused solver iteration over several blocks on one GPU (doc/design.md, "A fused iteration
# over several blocks"; device tool, carrying build and .deps/starpu): the split epilogue's
# tests (test_solver_cuda: fused against separate on 8 blocks; test_mpi_dirac's fields and
# solves on 32 blocks in place, through faces (TQ_DIRECT_FACES=0) and on two ranks sharing
# the GPU: bitwise the same), then the 32^4 solve (BiCGstab, one source, weak field) on 1, 2
# and 4 blocks with the fused iteration (default) and with the separate reductions
# (TQ_SPLIT_FUSE=0; on one block TQ_SOLVER_FUSE=0), two runs each, and the 12-source
# propagator on 2 blocks both ways. Usage: bash bench/split-fuse-check.sh   Logs under
# $OUT/split/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/split; mkdir -p "$res"
tool=$top/build/.libs/taskqcd
ok=()
timeout 300 "$top/build/tests/.libs/test_solver_cuda" > "$res/test_solver_cuda.log" 2>&1
ok+=("test_solver_cuda: exit $? | $(tail -n1 "$res/test_solver_cuda.log")")
prog=$top/build/tests/.libs/test_mpi_dirac
timeout 300 "$prog" "$res/direct.out" > "$res/direct.log" 2>&1
ok+=("test_mpi_dirac in place: exit $? | $(tail -n1 "$res/direct.log")")
TQ_DIRECT_FACES=0 timeout 300 "$prog" "$res/faces.out" > "$res/faces.log" 2>&1
ok+=("test_mpi_dirac faces: exit $? | $(tail -n1 "$res/faces.log")")
timeout 300 mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x STARPU_HOME -np 2 "$prog" "$res/np2.out" > "$res/np2.log" 2>&1
ok+=("test_mpi_dirac 2 ranks: exit $? | $(tail -n1 "$res/np2.log")")
cmp -s "$res/direct.out" "$res/faces.out" && ok+=("in place = faces, bitwise") || ok+=("in place != faces")
cmp -s "$res/direct.out" "$res/np2.out" && ok+=("one rank = two ranks, bitwise") || ok+=("one rank != two ranks")

rows=()
one="--dim 32 32 32 32 --weak-field 0.2 --nsrc 1 --warmup --ncpus 15 --where cuda"
for run in 1 2; do
    solve_row "solve-b1-fused-$run" -- "$tool" propagator $one
    solve_row "solve-b1-separate-$run" TQ_SOLVER_FUSE=0 -- "$tool" propagator $one
    for b in "2:32 32 32 16" "4:32 32 16 16"; do
        n=${b%%:*}; blk=${b#*:}
        solve_row "solve-b$n-fused-$run" -- "$tool" propagator $one --block $blk
        solve_row "solve-b$n-separate-$run" TQ_SPLIT_FUSE=0 -- "$tool" propagator $one --block $blk
    done
done
prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --ncpus 15 --where cuda"
p() { local name=$1; shift; bench_row "$res" "$name" 'all solves: [0-9]* iterations, [0-9.]* s' "$@"; }
p prop12-b1 -- "$tool" propagator $prop
p prop12-b2-fused -- "$tool" propagator $prop --block 32 32 32 16
p prop12-b2-separate TQ_SPLIT_FUSE=0 -- "$tool" propagator $prop --block 32 32 32 16

echo "== split fused iteration ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
printf '%s\n' "${ok[@]}"
printf '%s\n' "${rows[@]}"
