#!/usr/bin/env bash
# Simulated scaling (issue 34): the Wilson M_pc rows of bench/scaling.sh on 1, 2 and 4
# simulated GPUs, from the models bench/simgrid-calibrate.sh measured on one GPU (kept in
# bench/simgrid/sampling; tq-2... and tq-4... made from the one-GPU host by
# scripts/simgrid-expand-gpus with 450 GB/s GPU-GPU links, the two-H200 machine's NV18).
# Needs a build configured with
#   scripts/install-deps-simgrid && mkdir build-simgrid && cd build-simgrid &&
#   ../configure --with-simgrid --disable-shared --enable-static && make taskqcd
# Two forms, as calibrated (FORM=...):
#   default (the default): the path the library runs by default, owner chains and peer
#     faces: models of each codelet's GPU time inside a chain (host tq-h200gpu, calibrated
#     with FORM=entries), and none of StarPU's per-task costs, which chained entries do not
#     pay (STARPU_SIMGRID_CUDA_QUEUE_COST=0: 10 us per task; STARPU_SIMGRID_FETCHING_INPUT_COST=0:
#     1 us per buffer); a face is a copy over the GPU-GPU link (its bandwidth and latency);
#   handles: StarPU's graph with faces as handles (TQ_PEER=0 on real GPUs), every task
#     timed on the host, StarPU's simulated per-task costs (host tq-h200, FORM=tasks);
#     SIMGRID_HOST=tq-h100 for the H100's models of this form.
# Both run the tasks apart (TQ_CHAIN=0) over faces (TQ_DIRECT_FACES=0): SimGrid runs one
# task at a time per GPU, so what a chain overlaps on one GPU (a pack beside an interior, an
# exterior beside the next interior) is not simulated. Times are StarPU's simulated clock.
# Parts: dslash (Wilson M_pc, 32^4 and 64^4), solve (the 48^4 clover
# BiCGstab solve, 71 iterations as measured: a simulated solve runs --maxiter iterations),
# stalls (64^4 M_pc on 2 GPUs with TQ_OWNERS=0, i.e. blocks left to the scheduler as before
# owner computes, under lws, eager and dmda), systems (the 48^4 solve with 4 sources: one
# GPU, together and one after another; 2 and 4 GPUs with each system on one GPU, and on 2
# with every system over both, TQ_SYSTEM_OWNERS=0; about 15 minutes), all (default, the
# parts before systems; about 15 minutes on 2 cores).
# The dslash and solve rows also go into PRED_TSV (default $TMPDIR/simgrid-predict.tsv) in
# bench/scaling.sh's table format and row names (wilson-L-Ngpu, solve48-Ngpu: a block per
# simulated GPU), for SIMULATED=FILE of bench/scaling.sh and --simulated of
# bench/plot-scaling.py (kept: doc/data/simulated-h200gpu.tsv: `dslash`, then `solve`, into
# one PRED_TSV; the rows are added to what the file holds: remove it to start afresh).
# Usage: [FORM=default|handles] bash bench/simgrid-predict.sh [dslash|solve|stalls|systems|all] [BUILD_DIR]   (default build-simgrid)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
part=${1:-all}
tool=${2:-$top/build-simgrid}/taskqcd
[ -x "$tool" ] || { echo "simgrid-predict: $tool not built (see the header)"; exit 1; }
export STARPU_PERF_MODEL_DIR=$top/bench/simgrid/sampling STARPU_HOME=${TMPDIR:-/tmp}/taskqcd-simgrid-home
export TQ_CHAIN=0 TQ_DIRECT_FACES=0 STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
case ${FORM:-default} in
    default) export STARPU_SIMGRID_CUDA_QUEUE_COST=0 STARPU_SIMGRID_FETCHING_INPUT_COST=0; h1=${SIMGRID_HOST:-tq-h200gpu} ;;
    handles) h1=${SIMGRID_HOST:-tq-h200} ;;
    *) echo "simgrid-predict: FORM is default or handles"; exit 1 ;;
esac
h2=${h1/tq-/tq-2} h4=${h1/tq-/tq-4}
[ -f "$STARPU_PERF_MODEL_DIR/bus/$h1.config" ] || { echo "simgrid-predict: no models of $h1 in $STARPU_PERF_MODEL_DIR"; exit 1; }
for n in 2 4; do
    h=${h1/tq-/tq-$n}
    [ -f "$STARPU_PERF_MODEL_DIR/bus/$h.platform.v4.xml" ] ||
        python3 "$top/scripts/simgrid-expand-gpus" "$STARPU_PERF_MODEL_DIR" "$h1" "$h" "$n" --peer-gbps 450 --dup-models
done
pred=${PRED_TSV:-${TMPDIR:-/tmp}/simgrid-predict.tsv}
[ -s "$pred" ] || printf 'row\tsetting\tvalue\tunit\n' > "$pred"   # parts run one by one add to it
matpc() {   # HOST L BLOCK [taskqcd dslash options]: simulated ms per M_pc, single and half
    local h=$1 L=$2 blk=$3; shift 3
    STARPU_HOSTNAME=$h timeout 600 "$tool" dslash --dim $L $L $L $L --block $blk --test matpc --where cuda --niter 50 \
        --recon 12 --prec single,half --ncpus 4 "$@" 2>/dev/null | sed -n 's/.*time \([0-9.]*\) ms per.*/\1/p' | tr '\n' ' '
}
if [ "$part" = all ] || [ "$part" = dslash ]; then
printf '%-10s %-6s %-14s %s\n' machine L blocks "simulated ms per M_pc (single, half)"
for c in "$h1:32:32 32 32 32" "$h1:32:32 32 32 16" "$h2:32:32 32 32 16" "$h1:32:32 32 16 16" "$h4:32:32 32 16 16" \
         "$h1:64:64 64 64 64" "$h1:64:64 64 64 32" "$h2:64:64 64 64 32" "$h1:64:64 64 32 32" "$h4:64:64 64 32 32"; do
    IFS=: read -r h L blk <<< "$c"
    t=$(matpc $h $L "$blk")
    printf '%-10s %-6s %-14s %s\n' "$h" "$L^4" "$(echo $blk | tr ' ' x)" "$t"
    # a block per simulated GPU: the row bench/scaling.sh measures on that many GPUs
    n=${h%%h*}; n=${n#tq-}; n=${n:-1}
    nb=$(( (L / ${blk%% *}) * (L / $(echo $blk | cut -d' ' -f2)) * (L / $(echo $blk | cut -d' ' -f3)) * (L / ${blk##* }) ))
    if [ "$nb" -eq "$n" ]; then
        read -r ts th <<< "$t"
        printf 'wilson-%s-%sgpu\tsingle recon 12\t%s\tms\nwilson-%s-%sgpu\thalf recon 12\t%s\tms\n' $L $n "$ts" $L $n "$th" >> "$pred"
    fi
done
fi
if [ "$part" = all ] || [ "$part" = solve ]; then
printf '%-10s %-14s %s\n' machine blocks "simulated 48^4 solve, 71 iterations: s of the iterations"
for c in "$h1:48 48 48 48" "$h1:48 48 48 24" "$h2:48 48 48 24" "$h1:48 48 24 24" "$h4:48 48 24 24"; do
    IFS=: read -r h blk <<< "$c"
    t=$(STARPU_HOSTNAME=$h timeout 600 "$tool" propagator --dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --where cuda --ncpus 4 \
        --maxiter 71 --block $blk 2>/dev/null | sed -n 's/.*solve  0 .*iterations \([0-9.]*\) s,.*/\1/p')
    printf '%-10s %-14s %s\n' "$h" "$(echo $blk | tr ' ' x)" "$t"
    n=${h%%h*}; n=${n#tq-}; n=${n:-1}
    nb=$(( (48 / ${blk%% *}) * (48 / $(echo $blk | cut -d' ' -f2)) * (48 / $(echo $blk | cut -d' ' -f3)) * (48 / ${blk##* }) ))
    [ "$nb" -eq "$n" ] && printf 'solve48-%sgpu\tsum of iteration times\t%s\ts\n' $n "$t" >> "$pred"
done
fi
if [ "$part" = all ] || [ "$part" = stalls ]; then
printf '%-10s %-14s %-8s %s\n' machine blocks sched "64^4 ms per M_pc (single, half): owners, TQ_OWNERS=0"
for s in lws eager dmda; do
    for blk in "64 64 64 32" "64 64 32 32"; do
        printf '%-10s %-14s %-8s %s| %s\n' $h2 "$(echo $blk | tr ' ' x)" $s "$(matpc $h2 64 "$blk" --sched $s)" \
            "$(TQ_OWNERS=0 matpc $h2 64 "$blk" --sched $s)"
    done
done
fi
if [ "$part" = systems ]; then
# wall of the 4 solves (the propagator's "all solves" line), simulated
sys4() {   # HOST [propagator options]
    local h=$1; shift
    STARPU_HOSTNAME=$h timeout 900 "$tool" propagator --dim 48 48 48 48 --weak-field 0.2 --nsrc 4 --where cuda --ncpus 4 \
        --maxiter 71 "$@" 2>/dev/null | sed -n 's/.*all solves: [0-9]* iterations, \([0-9.]*\) s,.*/\1/p'
}
printf '%-10s %-44s %s\n' machine "48^4, 4 sources, 71 iterations each" "simulated s, all solves"
printf '%-10s %-44s %s\n' $h1 "together (one block)" "$(sys4 $h1)"
printf '%-10s %-44s %s\n' $h1 "one after another (--batch 1)" "$(sys4 $h1 --batch 1)"
printf '%-10s %-44s %s\n' $h2 "each system on one GPU (one block)" "$(sys4 $h2)"
printf '%-10s %-44s %s\n' $h2 "every system over both (TQ_SYSTEM_OWNERS=0)" "$(TQ_SYSTEM_OWNERS=0 sys4 $h2 --block 48 48 48 24)"
printf '%-10s %-44s %s\n' $h4 "each system on one GPU (one block)" "$(sys4 $h4)"
fi
