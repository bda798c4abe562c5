#!/usr/bin/env bash
# Idle CPU workers against GPU workers (doc/performance.md, "Idle CPU workers"): Wilson M_pc
# 32^4 (single, half) with --where cuda on one GPU and on every GPU of one process, with 2,
# 8 and 29 CPU workers, under StarPU's default idle back-off (STARPU_BACKOFF_MAX=32 pause
# loops between two polls of the scheduler) and larger ones. Device tool, carry build/.libs
# and .deps/starpu. Usage: bash bench/idle-workers-check.sh [BACKOFFS (default "32 1024 16384";
# "default": unset)]. Also a CPU propagator and a --where any solve per back-off.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench idle
c="--dim 32 32 32 32 --test matpc --where cuda --recon 12 --prec single,half --no-check --niter 1000"
for b in ${1:-32 1024 16384}; do
    # "default": STARPU_BACKOFF_MAX unset (the library's choice, src/core/context.c)
    e="STARPU_BACKOFF_MAX=$b"
    [ "$b" = default ] && e="TQ_UNUSED=1"
    for n in 2 8 29; do
        matpc_row "${ng}gpu-ncpus$n-backoff$b" $e -- "$tool" dslash $c --ncuda $ng --ncpus $n
    done
    matpc_row "1gpu-ncpus29-backoff$b" $e -- "$tool" dslash $c --ncuda 1 --ncpus 29
    # CPU workers doing the work on the GPU machine: what a long back-off could cost them
    bench_row "$res" "cpu-prop16-backoff$b" 'all solves: [0-9]* iterations, [0-9.]* s' $e -- "$tool" propagator \
        --dim 16 16 16 16 --weak-field 0.2 --nsrc 4 --where cpu --ncpus 15
    bench_row "$res" "any-solve32-backoff$b" 'all solves: [0-9]* iterations, [0-9.]* s' $e -- "$tool" propagator \
        --dim 32 32 32 32 --weak-field 0.2 --nsrc 1 --warmup --where any --ncpus 15 --ncuda 1
done
echo "== idle CPU workers, 32^4 Wilson M_pc single / half ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1))"
printf '%s\n' "${rows[@]}"
