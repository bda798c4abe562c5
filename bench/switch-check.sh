#!/usr/bin/env bash
# One switch of the library (an environment variable, SWITCH, default TQ_BANDS) at each of
# its VALUES (default "0 1") in turn, on the GPU machine (device tool; carry build/.libs and
# .deps/starpu, or a stripped copy of the library and the command named by TQ_LIBDIR and
# TQ_TOOL): Wilson M_pc (single and half, recon 12) at L^4 for L in EXTENTS (default
# 32 48 64) on one GPU and on every GPU of the node in one process, then the weak row
# (32^3 x 32 per GPU, split in t), REPEAT rounds (default 2). Logs under $OUT/switch/, a
# table last.
# Usage: SWITCH=TQ_CHAIN_JOIN VALUES="1 0" bash bench/switch-check.sh
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench switch
sw=${SWITCH:-TQ_BANDS}
common="--test matpc --prec single,half --recon 12 --where cuda --ncpus 8 --niter ${NITER:-400} --no-check --dslash-type wilson"
for rep in $(seq 1 "${REPEAT:-2}"); do
    for v in ${VALUES:-0 1}; do
        for L in ${EXTENTS:-32 48 64}; do
            [ "${ONE_GPU:-1}" = 1 ] && matpc_row "w$L-1gpu-$v-$rep" "$sw=$v" -- "$tool" dslash --dim $L $L $L $L $common --ncuda 1
            matpc_row "w$L-${ng}gpu-$v-$rep" "$sw=$v" -- "$tool" dslash --dim $L $L $L $L $common --ncuda "$ng"
        done
        matpc_row "weak-${ng}gpu-$v-$rep" "$sw=$v" -- "$tool" dslash --dim 32 32 32 $((32 * ng)) $common --ncuda "$ng"
    done
done
echo "== $sw at ${VALUES:-0 1} ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1) x $ng, commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "M_pc, ms per application (single, half); row suffix: the value of $sw, the round"
printf '%s\n' "${rows[@]}"
