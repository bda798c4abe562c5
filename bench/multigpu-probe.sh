#!/usr/bin/env bash
# Where the time of M_pc on several GPUs of one process goes (device tool, a machine with
# 2+ GPUs; carry build/.libs and .deps/starpu). Wilson single r12 at 32^4 and 64^4 on one
# GPU and on all of them:
#   - StarPU's bus and worker statistics (which memory nodes the faces travel between:
#     GPU to GPU directly or through host memory; how many tasks each worker ran);
#   - the same rows under other StarPU settings (CUDA pipeline depth, scheduler);
#   - when Nsight Systems is on the machine, a timeline of 20 applications exported to
#     SQLite ($OUT/probe/*.sqlite; bench/timeline-gaps.py reads it here).
# Usage: bash bench/multigpu-probe.sh     Logs under $OUT/probe/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench probe
c="--test matpc --where cuda --recon 12 --prec single --ncpus 8 --no-check"
row() { local name=$1; shift; bench_row "$res" "$name" '[0-9.]* ms per application' "$@"; }
row w32-1gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda 1 --niter 200
row w32-${ng}gpu-stats STARPU_BUS_STATS=1 STARPU_WORKER_STATS=1 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng --niter 200
row w32-${ng}gpu-pipe0 STARPU_CUDA_PIPELINE=0 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng --niter 200
row w32-${ng}gpu-pipe8 STARPU_CUDA_PIPELINE=8 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng --niter 200
row w32-${ng}gpu-dmda STARPU_SCHED=dmda -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng --niter 200
row w32-${ng}gpu-nodirect STARPU_ENABLE_CUDA_GPU_GPU_DIRECT=0 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng --niter 200
row w64-${ng}gpu-stats STARPU_BUS_STATS=1 STARPU_WORKER_STATS=1 -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng --niter 50

nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys 2>/dev/null | head -n1)
if [ -n "$nsys" ]; then
    for L in 32 64; do
        timeout 150 "$nsys" profile -t cuda,osrt --sample none --cpuctxsw none -o "$res/w$L-${ng}gpu" --force-overwrite true \
            "$tool" dslash --dim $L $L $L $L $c --ncuda $ng --niter 20 > "$res/w$L-nsys.txt" 2>&1 || echo "nsys $L failed: see $res/w$L-nsys.txt"
        timeout 120 "$nsys" export --type sqlite -o "$res/w$L-${ng}gpu.sqlite" --force-overwrite true "$res/w$L-${ng}gpu.nsys-rep" \
            >> "$res/w$L-nsys.txt" 2>&1
        rm -f "$res/w$L-${ng}gpu.nsys-rep"
    done
else
    echo "no nsys on this machine: no timeline"
fi

echo "== multi-GPU probe, $ng GPUs: Wilson M_pc single r12 (commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
printf '%s\n' "${rows[@]}"
echo "== bus (32^4, $ng GPUs)"
grep -iE "bus|->|GB|transfer" "$res/w32-${ng}gpu-stats.txt" | head -n 30
echo "== workers (32^4)"
grep -iE "worker|task" "$res/w32-${ng}gpu-stats.txt" | head -n 20
