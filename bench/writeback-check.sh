#!/usr/bin/env bash
# StarPU's background write-backs (STARPU_MINIMUM_CLEAN_BUFFERS / STARPU_TARGET_CLEAN_BUFFERS,
# 5 % and 10 % by StarPU's default; TaskQCD sets both to 0 in tq_init unless the user set
# them) against TaskQCD's setting, on the GPU machine: clover 32^4 on 4 blocks, the set-up
# that aborted intermittently in StarPU's _starpu_data_request_prio_list_deinit, N runs per
# setting, each in a fresh StarPU home (first runs were also the slow ones).
#   Usage: bash bench/writeback-check.sh [N]   (default 6)
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/writeback; mkdir -p "$res"
tool=$top/build/.libs/taskqcd
n=${1:-6}
c32="$tool dslash --dim 32 32 32 32 --dslash-type clover --where cuda --test matpc --niter 50 --prec single --recon 12 --ncpus 4 --block 32 32 16 16"
for setting in starpu taskqcd; do
    for i in $(seq 1 "$n"); do
        home=$res/home-$setting-$i; mkdir -p "$home"
        if [ $setting = starpu ]; then set -- STARPU_MINIMUM_CLEAN_BUFFERS=5 STARPU_TARGET_CLEAN_BUFFERS=10; else set --; fi
        t0=$(date +%s.%N)
        env "$@" STARPU_HOME="$home" timeout 120 $c32 > "$res/$setting-$i.txt" 2>&1
        rc=$?
        printf '%-8s run %d rc=%-4s %5.1fs %s\n' $setting "$i" $rc "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" \
            "$(grep -m1 -o 'Assertion.*\|time [0-9.]* ms per application' "$res/$setting-$i.txt")"
    done
done
