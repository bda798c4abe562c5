#!/usr/bin/env bash
# Simulated scaling (issue 34): the Wilson M_pc rows of bench/scaling.sh on 1, 2 and 4
# simulated H100s, from the models bench/simgrid-calibrate.sh measured on one H100 (kept in
# bench/simgrid/sampling, host tq-h100; tq-2h100 and tq-4h100 made from it by
# scripts/simgrid-expand-gpus with 450 GB/s GPU-GPU links). Needs a build configured with
#   scripts/install-deps-simgrid && mkdir build-simgrid && cd build-simgrid &&
#   ../configure --with-simgrid --disable-shared --enable-static && make taskqcd
# Faces and no chains (TQ_DIRECT_FACES=0 TQ_CHAIN=0), as calibrated. Times are StarPU's
# simulated clock. Usage: bash bench/simgrid-predict.sh [BUILD_DIR]   (default build-simgrid)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tool=${1:-$top/build-simgrid}/taskqcd
[ -x "$tool" ] || { echo "simgrid-predict: $tool not built (see the header)"; exit 1; }
export STARPU_PERF_MODEL_DIR=$top/bench/simgrid/sampling STARPU_HOME=${TMPDIR:-/tmp}/taskqcd-simgrid-home
export TQ_CHAIN=0 TQ_DIRECT_FACES=0 STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
for h in tq-2h100 tq-4h100; do
    n=${h%h100}; n=${n#tq-}
    [ -f "$STARPU_PERF_MODEL_DIR/bus/$h.platform.v4.xml" ] ||
        python3 "$top/scripts/simgrid-expand-gpus" "$STARPU_PERF_MODEL_DIR" tq-h100 "$h" "$n" --peer-gbps 450 --dup-models
done
printf '%-10s %-6s %-14s %s\n' machine L blocks "simulated ms per M_pc (single, half)"
for c in "tq-h100:32:32 32 32 32" "tq-h100:32:32 32 32 16" "tq-2h100:32:32 32 32 16" "tq-4h100:32:32 32 16 16" \
         "tq-h100:64:64 64 64 64" "tq-2h100:64:64 64 64 32"; do
    IFS=: read -r h L blk <<< "$c"
    t=$(STARPU_HOSTNAME=$h timeout 300 "$tool" dslash --dim $L $L $L $L --block $blk --test matpc --where cuda --niter 50 \
        --recon 12 --prec single,half --ncpus 4 2>/dev/null | sed -n 's/.*time \([0-9.]*\) ms per.*/\1/p' | tr '\n' ' ')
    printf '%-10s %-6s %-14s %s\n' "$h" "$L^4" "$(echo $blk | tr ' ' x)" "$t"
done
