#!/usr/bin/env bash
# Chain tasks that wait take their owner's next runs (tasks/submit.c; doc/design.md "A
# waiting chain task takes the next runs of its owner"), measured against TQ_CHAIN_EXTEND=0
# on the GPU machine (device tool; carry build/.libs and .deps/starpu, or a stripped copy of
# the library and the command named by TQ_LIBDIR and TQ_TOOL): Wilson M_pc (single and
# half, recon 12) at L^4 for L in EXTENTS (default 32 48 64), on one GPU and on every GPU of
# the node in one process, then the weak row (32^3 x 32 per GPU, split in t), the joins off
# and on in turn, REPEAT rounds (default 2). Logs under $OUT/chainjoin/, a table last.
# Usage: bash bench/chain-join-check.sh   (EXTENTS, REPEAT, NITER to change the rows)
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench chainjoin
common="--test matpc --prec single,half --recon 12 --where cuda --ncpus 8 --niter ${NITER:-400} --no-check --dslash-type wilson"
for rep in $(seq 1 "${REPEAT:-2}"); do
    for x in 0 1; do
        for L in ${EXTENTS:-32 48 64}; do
            matpc_row "w$L-1gpu-extend$x-$rep" TQ_CHAIN_EXTEND=$x -- "$tool" dslash --dim $L $L $L $L $common --ncuda 1
            matpc_row "w$L-${ng}gpu-extend$x-$rep" TQ_CHAIN_EXTEND=$x -- "$tool" dslash --dim $L $L $L $L $common --ncuda "$ng"
        done
        matpc_row "weak-${ng}gpu-extend$x-$rep" TQ_CHAIN_EXTEND=$x -- "$tool" dslash --dim 32 32 32 $((32 * ng)) $common --ncuda "$ng"
    done
done
echo "== waiting chains join ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1) x $ng, commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "M_pc, ms per application (single, half); extend0: TQ_CHAIN_EXTEND=0"
printf '%s\n' "${rows[@]}"
