#!/usr/bin/env bash
# Where the time of a solve iteration on several GPUs goes (issue 34: the non-operator part
# of an iteration does not shrink with more GPUs), on a machine with 2+ GPUs (device tool;
# carry build/.libs and .deps/starpu): the 48^4 clover solve (BiCGstab double with
# single-precision reliable updates) on one GPU (fused iteration, and the 9-task form
# several blocks use, TQ_SOLVER_FUSE=0), on every GPU in one process and on one rank per
# GPU, a 16^4 solve (latency alone) on one and on every GPU, and Wilson M_pc 32^4; each with
# its task log (TQ_TASK_LOG, tasks/task_log.c) and the log's summary (bench/plot-tasks.py).
# HUGE=1 adds Wilson M_pc at 96^3x192 on every GPU in one process (set-up progress on stderr).
# Usage: bash bench/solve-latency.sh     Logs under $OUT/latency/ (packed), a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench latency
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda --ncpus 8"
small="--dim 16 16 16 16 --weak-field 0.2 --nsrc 1 --warmup --where cuda --ncpus 8"
c="--test matpc --where cuda --recon 12 --prec single --ncpus 8 --no-check --niter 100"
log() { echo "TQ_TASK_LOG=$res/$1.tasks"; }
solve_row solve48-1gpu "$(log solve48-1gpu)" -- "$tool" propagator $one --ncuda 1
solve_row solve48-1gpu-nofuse "$(log solve48-1gpu-nofuse)" TQ_SOLVER_FUSE=0 -- "$tool" propagator $one --ncuda 1
solve_row solve48-${ng}gpu "$(log solve48-${ng}gpu)" -- "$tool" propagator $one --ncuda $ng
solve_row solve16-1gpu "$(log solve16-1gpu)" -- "$tool" propagator $small --ncuda 1
solve_row solve16-1gpu-nofuse "$(log solve16-1gpu-nofuse)" TQ_SOLVER_FUSE=0 -- "$tool" propagator $small --ncuda 1
solve_row solve16-${ng}gpu "$(log solve16-${ng}gpu)" -- "$tool" propagator $small --ncuda $ng
matpc_row w32-1gpu "$(log w32-1gpu)" -- "$tool" dslash --dim 32 32 32 32 $c --ncuda 1
matpc_row w32-${ng}gpu "$(log w32-${ng}gpu)" -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
solve_row solve48-${ng}ranks -- $mpi -x TQ_TASK_LOG=$res/solve48-${ng}ranks.tasks -np $ng "$tool" propagator ${one/--ncpus 8/--ncpus 4}
if command -v python3 > /dev/null; then
    for f in "$res"/*.tasks*; do python3 "$top/bench/plot-tasks.py" "$f" > "$f.summary" 2>&1; done
fi
if [ "${HUGE:-0}" = 1 ]; then
    timeout 400 "$tool" dslash --dim 96 96 96 192 --dslash-type wilson $c --ncuda $ng > "$res/w96x192-${ng}gpu.txt" 2>&1
    rows+=("$(printf '%-30s %s' "w96x192-${ng}gpu" "$(grep -o 'time [0-9.]* ms' "$res/w96x192-${ng}gpu.txt" | tr '\n' ' ')")")
    grep "taskqcd dslash:" "$res/w96x192-${ng}gpu.txt"
fi
echo "== solve latency (commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
printf '%s\n' "${rows[@]}"
