#!/usr/bin/env bash
# On a GPU machine with two or more GPUs (device tool, carrying build and .deps/starpu):
# where the time of a small M_pc goes in peer mode. Wilson M_pc 32^4 (DIMS), single, on one
# and on two GPUs: the wall time per application, the task log (TQ_TASK_LOG, summarised by
# bench/plot-tasks.py: chain task durations and the gaps between them), and the GPU
# timeline (bench/cupti_trace.c injected, summarised by bench/gpu-timeline.py: busy time and
# idle gaps per GPU, kernel durations, time in CUDA calls per host thread).
# Usage: bash bench/latency-probe.sh   (DIMS="X Y Z T", NITER, PREC, NCPUS to change the row)
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/latency; mkdir -p "$res"
bin=$top/build/.libs/taskqcd
dims=${DIMS:-32 32 32 32} niter=${NITER:-400} prec=${PREC:-single}
ncpus=${NCPUS:+--ncpus $NCPUS}
inject=$top/build/bench/libtq_cupti_trace.so
[ -f "$inject" ] || inject=
nvidia-smi topo -m > "$res/topo.txt" 2>&1
rows=()
for ng in 1 2; do
    for peer in 1 0; do
        [ "$ng" = 1 ] && [ "$peer" = 0 ] && continue
        tag="g${ng}_p$peer"
        TQ_PEER=$peer TQ_TASK_LOG="$res/$tag.tasks" timeout 120 "$bin" dslash --dim $dims --test matpc --prec "$prec" \
            --recon 12 --where cuda --ncuda "$ng" --niter "$niter" $ncpus --no-check > "$res/$tag.txt" 2>&1
        python3 "$top/bench/plot-tasks.py" "$res/$tag.tasks" > "$res/$tag.summary" 2>&1
        rows+=("$(printf '%-8s %s' "$tag" "$(grep -o 'time [0-9.]* ms' "$res/$tag.txt")")")
        if [ -n "$inject" ]; then   # each run under a time limit: a hung exit must not eat the call
            TQ_PEER=$peer CUDA_INJECTION64_PATH=$inject TQ_CUPTI_TRACE="$res/$tag.gpu.tsv" timeout 120 "$bin" dslash \
                --dim $dims --test matpc --prec "$prec" --recon 12 --where cuda --ncuda "$ng" --niter 200 $ncpus \
                --no-check > "$res/$tag.gpu.log" 2>&1
            python3 "$top/bench/gpu-timeline.py" "$res/$tag.gpu.tsv" --png "$res/$tag.gpu.png" --span 1500 \
                > "$res/$tag.gpu.summary" 2>&1
            gzip -f "$res/$tag.gpu.tsv"
        fi
    done
done
echo "== M_pc $dims $prec, ms per application"
printf '%s\n' "${rows[@]}"
for f in "$res"/*.summary; do echo "== $(basename "$f")"; head -n 40 "$f"; done
