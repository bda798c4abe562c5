#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu) or here: the
# generator's tests, then the time per heat-bath sweep (+ 1 overrelaxation sweep) at the
# given volumes on the CPU workers and on the GPU, through bench_generator. Logs under $OUT.
# Usage: bash bench/generator-bench.sh [L ...]   (default: 16 32)
set -u
source "$(dirname "$0")/device-env.sh"
for t in test_generator test_generator_cuda; do
    "$top/build/tests/.libs/$t" > "$out/$t.log" 2>&1; echo "$t: rc $? $(tail -n1 "$out/$t.log")"
done
b="$top/build/bench/.libs/bench_generator"; [ -x "$b" ] || b="$top/build/bench/bench_generator"
for L in ${*:-16 32}; do
    for w in cuda cpu; do "$b" --dim $L $L $L $L --sweeps 3 --or 1 --where $w 2>&1 | tail -n 1; done
done
