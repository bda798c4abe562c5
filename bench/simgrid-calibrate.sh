#!/usr/bin/env bash
# On the GPU machine (device tool, carrying build and .deps/starpu): calibrates StarPU's
# performance models and bus under a fixed host name (STARPU_HOSTNAME=tq-h100) in a fresh
# STARPU_HOME, with the task sizes the simulated runs will ask for (Wilson M_pc, single and
# half, recon 12: 32^4 on 1, 2, 4 blocks and 64^4 on 1, 2 blocks, i.e. a 64^4 lattice's blocks
# on 1 and 2 GPUs), and packs the sampling directory into $OUT/simgrid-sampling.tgz for
# scripts/simgrid-expand-gpus and a --with-simgrid build (doc/performance.md).
#   Usage: bash bench/simgrid-calibrate.sh
set -u
source "$(dirname "$0")/device-env.sh"
export STARPU_HOSTNAME=tq-h100 STARPU_HOME=$out/simhome STARPU_CALIBRATE=1
rm -rf "$STARPU_HOME"; mkdir -p "$STARPU_HOME"
tool=$top/build/.libs/taskqcd
common="--test matpc --where cuda --niter 60 --recon 12 --prec single,half --ncpus 4 --dslash-type wilson"
for c in "32:32 32 32 32" "32:32 32 32 16" "32:32 32 16 16" "64:64 64 64 64" "64:64 64 64 32"; do
    L=${c%%:*} blk=${c#*:}
    timeout 300 "$tool" dslash --dim $L $L $L $L --block $blk $common > "$out/cal-$L-$(echo $blk | tr ' ' x).txt" 2>&1
    echo "$L^4 blocks $blk: exit $? $(grep -h 'ms per' "$out/cal-$L-$(echo $blk | tr ' ' x).txt" | awk '{print $2}' | tr '\n' ' ')"
done
tar czf "$out/simgrid-sampling.tgz" -C "$STARPU_HOME/.starpu" sampling
ls -la "$out/simgrid-sampling.tgz"
tar tzf "$out/simgrid-sampling.tgz" | head -40
