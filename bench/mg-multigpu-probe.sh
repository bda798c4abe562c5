#!/usr/bin/env bash
# Multigrid over every GPU of one process (doc/performance.md "Known open problems": it can
# hang), on the GPU machine through the device tool (carry build/.libs or a stripped copy
# named by TQ_LIBDIR and TQ_TOOL, and .deps/starpu). Runs a small multigrid propagator
# (16^4 weak field, two levels, 12 vectors, 2 sources; SIZE=32 for the 32^4 quenched one of
# bench/mg-light.sh) under each setting in turn, REPEAT times (default 2), each stopped after
# LIMIT seconds (default 40): the defaults, TQ_PEER=0 (faces and partial sums as StarPU
# handles), TQ_CHAIN_EXTEND=0 (no waiting chains), TQ_CHAIN=0 (one task per kernel). With
# --mg-verbosity 2 each run prints its set-up stages, so a run that stops shows where; where
# gdb is found, a stopped run's threads' stacks go to its log first. Logs under
# $OUT/mgprobe/, a table last.
# Usage: bash bench/mg-multigpu-probe.sh   (SETTINGS: a list of VAR=VALUE or "default";
# EXTRA: more arguments for the command, e.g. "--mg-solves-at-once 1")
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/mgprobe
mkdir -p "$res"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}
ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
export TASKQCD_CACHE="${TASKQCD_CACHE:-/tmp/taskqcd-cache}"
if [ "${SIZE:-16}" = 32 ]; then
    args="--dim 32 32 32 32 --therm 100 --kappa 0.1452 --nsrc 2 --inv-multigrid --mg-nvec 0 24 --mg-block-size 0 4 4 4 4"
else
    args="--dim 16 16 16 16 --weak-field 0.3 --kappa 0.1245 --nsrc 2 --inv-multigrid --mg-nvec 0 12 --mg-block-size 0 4 4 4 4"
fi
args="$args --ncpus 8 --ncuda $ng --where any --mg-verbosity 2 ${EXTRA:-}"
limit=${LIMIT:-40}
table=()
for rep in $(seq 1 "${REPEAT:-2}"); do
    for setting in ${SETTINGS:-default TQ_PEER=0 TQ_CHAIN_EXTEND=0 TQ_CHAIN=0}; do
        name=${setting//=/-}-$rep
        log=$res/$name.txt
        envs=()
        [ "$setting" = default ] || envs=("$setting")
        start=$(date +%s)
        # shellcheck disable=SC2086
        env "${envs[@]}" stdbuf -o0 "$tool" propagator $args > "$log" 2>&1 &
        pid=$!
        while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - start )) -lt "$limit" ]; do sleep 1; done
        state=ended
        if kill -0 "$pid" 2>/dev/null; then
            state=STOPPED
            # gdb, or the CUDA toolkit's cuda-gdb where the machine has no gdb
            dbg=$(command -v gdb || ls /usr/local/cuda*/bin/cuda-gdb 2>/dev/null | head -n1)
            [ -n "$dbg" ] && timeout 90 "$dbg" -p "$pid" -batch -ex "thread apply all bt 16" >> "$log" 2>&1
            kill -9 "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
        last=$(grep -E "set-up: .* done|all solves|multigrid GCR" "$log" | tail -n1 | cut -c1-90)
        table+=("$(printf '%-24s %-8s %4ss  %s' "$name" "$state" "$(( $(date +%s) - start ))" "$last")")
    done
done
echo "== multigrid over $ng GPUs of one process ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
printf '%s\n' "${table[@]}"
