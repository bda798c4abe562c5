#!/usr/bin/env bash
# On the GPU machine (device tool, carrying build and .deps/starpu): calibrates StarPU's
# performance models and bus under a fixed host name (STARPU_HOSTNAME=$SIMGRID_HOST, default
# tq- and the GPU's model in lower case: tq-h200 on an H200, tq-h100 on an H100) in a fresh
# STARPU_HOME, with the task sizes the simulated runs will ask for, and packs the sampling
# directory into $OUT/simgrid-sampling.tgz for scripts/simgrid-expand-gpus and a
# --with-simgrid build (doc/performance.md, "Simulated GPUs"):
#   - Wilson M_pc, single and half, recon 12: 32^4 on 1, 2, 4 blocks, 64^4 on 1, 2, 4 blocks
#     (a lattice's blocks on 1, 2 and 4 GPUs);
#   - the 48^4 solve (the propagator's clover BiCGstab, double with single sloppy and
#     reliable updates, one source) on 1, 2, 4 blocks.
# Faces, not in-place neighbours (TQ_DIRECT_FACES=0): on several GPUs blocks have different
# owners. Two forms (FORM=...):
#   entries (the default): chains as run by default, each chain entry's GPU time into its
#     codelet's model (TQ_ENTRY_TIMES=1, codelets/entry_times.h): what a codelet costs where
#     owner chains run kernels back to back; host name tq-<gpu>gpu (tq-h200gpu);
#   tasks: no chains (TQ_CHAIN=0), StarPU's own timing of each task on the host (launch and
#     synchronisation included); host name tq-<gpu> (tq-h200).
# The solve is also run as one GPU runs it by default (chains, one block): the measured
# reference of the predictions.
#   Usage: [FORM=entries|tasks] bash bench/simgrid-calibrate.sh [dslash|solve|all]   (default all)
set -u
source "$(dirname "$0")/device-env.sh"
part=${1:-all}
gpu_model=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | grep -o 'H[0-9]\+' | head -n1 | tr H h)
form=${FORM:-entries}
case $form in
    entries) form_env="TQ_ENTRY_TIMES=1 TQ_DIRECT_FACES=0" suffix=gpu ;;
    tasks) form_env="TQ_CHAIN=0 TQ_DIRECT_FACES=0" suffix= ;;
    *) echo "simgrid-calibrate: FORM is entries or tasks"; exit 1 ;;
esac
export STARPU_HOSTNAME=${SIMGRID_HOST:-tq-${gpu_model:-gpu}$suffix} STARPU_HOME=$out/simhome STARPU_CALIBRATE=1
rm -rf "$STARPU_HOME"; mkdir -p "$STARPU_HOME"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}
if [ "$part" != solve ]; then
common="--test matpc --where cuda --niter 60 --recon 12 --prec single,half --ncpus 4 --dslash-type wilson"
for c in "32:32 32 32 32" "32:32 32 32 16" "32:32 32 16 16" "64:64 64 64 64" "64:64 64 64 32" "64:64 64 32 32"; do
    L=${c%%:*} blk=${c#*:}
    env $form_env timeout 300 "$tool" dslash --dim $L $L $L $L --block $blk $common > "$out/cal-$L-$(echo $blk | tr ' ' x).txt" 2>&1
    echo "$L^4 blocks $blk: exit $? $(grep -h 'ms per' "$out/cal-$L-$(echo $blk | tr ' ' x).txt" | awk '{print $2}' | tr '\n' ' ')"
done
fi
if [ "$part" != dslash ]; then
solve="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --where cuda --ncpus 4"
for blk in "48 48 48 48" "48 48 48 24" "48 48 24 24"; do
    f=$out/cal-solve48-$(echo $blk | tr ' ' x).txt
    env $form_env timeout 300 "$tool" propagator $solve --block $blk --warmup > "$f" 2>&1
    echo "48^4 solve blocks $blk ($form): exit $? $(grep -E 'solve +0 ' "$f" | tail -n1)"
done
f=$out/ref-solve48.txt
timeout 300 "$tool" propagator $solve --warmup > "$f" 2>&1
echo "48^4 solve, 1 block, as run by default (reference): exit $? $(grep -E 'solve +0 ' "$f" | tail -n1)"
fi
echo "host name of the models: $STARPU_HOSTNAME"
tar czf "$out/simgrid-sampling.tgz" -C "$STARPU_HOME/.starpu" sampling
ls -la "$out/simgrid-sampling.tgz"
