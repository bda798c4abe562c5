#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu) or here: the
# generator's tests, then the time per heat-bath sweep (+ 1 overrelaxation sweep) at the
# given volumes on the CPU workers and on the GPU, through bench_generator (with the times of
# a measurement and a reunitarisation, and the sweep's nominal traffic in GB/s), on the GPU
# also with 2 and 16 blocks (the several-blocks overhead), and the
# GPU's copy bandwidth in the same run (the ceiling). Logs under $OUT.
# Usage: bash bench/generator-bench.sh [L ...]   (default: 16 32)
set -u
source "$(dirname "$0")/device-env.sh"
for t in test_generator test_generator_cuda; do
    "$top/build/tests/.libs/$t" > "$out/$t.log" 2>&1; echo "$t: rc $? $(tail -n1 "$out/$t.log")"
done
b="$top/build/bench/.libs/bench_generator"; [ -x "$b" ] || b="$top/build/bench/bench_generator"
for L in ${*:-16 32}; do
    for w in cuda cpu; do "$b" --dim $L $L $L $L --sweeps 3 --or 1 --where $w 2>&1 | tail -n 1; done
    # blocks on the one GPU: 2 along t, then 16 (cut in every direction: faces and edges)
    h=$((L / 2))
    for blk in "$L $L $L $h" "$h $h $h $h"; do
        "$b" --dim $L $L $L $L --sweeps 3 --or 1 --where cuda --block $blk 2>&1 | tail -n 1
    done
done
"$top/build/.libs/taskqcd" blas --dim 32 32 32 32 --prec double --op copy --where cuda --niter 50 > "$out/copy.txt" 2>&1
echo "ceiling (taskqcd blas --op copy, double, 32^4, GPU):"; tail -n 2 "$out/copy.txt"
