#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): Nsight Compute on
# one launch of the Wilson interior kernel, when ncu is installed there (skipped otherwise).
# Report under $OUT/ncu_<prec>_<recon>.txt.
# Usage: bash bench/profile-dslash.sh [PREC [RECON [X Y Z T]]]   (default half 12 32^4)
# BLOCK="X Y Z T": that block extent (several blocks: the in-place kernel), report
# ncu_<prec>_<recon>_b<blocks>.txt.
set -u
source "$(dirname "$0")/device-env.sh"
prec=${1:-half} recon=${2:-12}
shift 2 2>/dev/null || shift $#
dims=${*:-32 32 32 32}
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
if [ -z "$ncu" ]; then echo "profile-dslash: no ncu on this machine (skipped)"; exit 0; fi
blockarg= tag=
if [ -n "${BLOCK:-}" ]; then
    blockarg="--block $BLOCK"
    tag=_b$(( $(echo "$dims" | tr ' ' '*') / ($(echo "$BLOCK" | tr ' ' '*')) ))
fi
f="$out/ncu_${prec}_${recon}${tag}.txt"
"$ncu" --kernel-name regex:dslash_wilson_interior --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section InstructionStats --section LaunchStats \
    "$top/build/.libs/taskqcd" dslash --dim $dims $blockarg --prec "$prec" --recon "$recon" --niter 2 --where cuda \
    --no-check --quiet > "$f" 2>&1
grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Executed Ipc|Issue Slots Busy|Stall|L1/TEX Hit|L2 Hit" "$f" | head -n 30
