#!/usr/bin/env bash
# Runs one workload under every StarPU scheduling policy, REPEAT times each, and writes
# OUTDIR/sweep.csv (makespan median/min/max, idle fraction, bytes moved, lower bounds from
# the exported task graph, ratio to the bound) and OUTDIR/sweep.png. doc/policy-sweep.md
# explains the columns and the bounds.
#
# Knobs (environment):
#   WORKLOAD   matpc | solve | prop12 | mg                                  (matpc)
#   POLICIES   space-separated StarPU policies                   (every one, below)
#   REPEAT     timed runs per policy                                             (3)
#   OUTDIR     where the CSV, plot, graphs, logs and the private STARPU_HOME go
#                                                 (policy-sweep-WORKLOAD-DATE here)
#   TASKQCD    the tool                                  (build/taskqcd of this tree)
#   DIM        lattice "X Y Z T"          (matpc, solve: 8 8 8 8; prop12, mg: 4 4 4 8)
#   NITER      matpc: timed applications per run                               (100)
#   TQ_OPTS    extra taskqcd options, appended (e.g. "--ncpus 1", "--prec double")
#   CALIBRATE_RUNS  runs that fill the performance models first                    (3)
#   STATS      1: StarPU's worker and bus statistics (STARPU_PROFILING=1) in every
#              timed run; 0: off, the idle and bytes columns NA                    (1)
#   RUN_TIMEOUT  seconds before one run is killed and counted as failed          (600)
#   PYTHON     python3 for bench/graph_bounds.py                           (python3)
#   PLOT_PYTHON  a python3 with matplotlib for the plot (skipped without)  (PYTHON)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
die() { echo "policy-sweep: $*" >&2; exit 1; }
note() { echo "policy-sweep: $*" >&2; }

WORKLOAD=${WORKLOAD:-matpc}
REPEAT=${REPEAT:-3}
TASKQCD=${TASKQCD:-$top/build/taskqcd}
NITER=${NITER:-100}
TQ_OPTS=${TQ_OPTS:-}
CALIBRATE_RUNS=${CALIBRATE_RUNS:-3}
STATS=${STATS:-1}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
PYTHON=${PYTHON:-python3}
PLOT_PYTHON=${PLOT_PYTHON:-$PYTHON}
# Every policy StarPU 1.3.10 registers that fits one process's workers, from eager to the
# modular ones. "heft" is left out: StarPU 1.3 only keeps it as an alias of dmda (with a
# warning), and taskqcd's --sched accepts only the registered names.
POLICIES=${POLICIES:-eager prio random ws lws dm dmda dmdar dmdas peager pheft modular-eager modular-prio modular-heft}

case $WORKLOAD in
    matpc | solve) DIM=${DIM:-8 8 8 8} ;;
    prop12 | mg) DIM=${DIM:-4 4 4 8} ;;
    *) die "WORKLOAD must be matpc, solve, prop12 or mg (got '$WORKLOAD')" ;;
esac
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive integer (got '$REPEAT')"
[[ $NITER =~ ^[1-9][0-9]*$ ]] || die "NITER must be a positive integer (got '$NITER')"
[[ $CALIBRATE_RUNS =~ ^[0-9]+$ ]] || die "CALIBRATE_RUNS must be a non-negative integer"
read -r -a dim <<<"$DIM"
[ ${#dim[@]} -eq 4 ] || die "DIM must be four extents, e.g. \"8 8 8 8\" (got '$DIM')"
[ -n "$POLICIES" ] || die "POLICIES is empty"
[ -x "$TASKQCD" ] || die "the tool $TASKQCD is missing or not executable (build it, or set TASKQCD)"
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed for bench/graph_bounds.py; set PYTHON)"
have_timeout=0
command -v timeout >/dev/null 2>&1 && have_timeout=1

OUTDIR=${OUTDIR:-policy-sweep-$WORKLOAD-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUTDIR/runs" || die "cannot create $OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
# A private STARPU_HOME: the calibration below never touches the user's models, and every
# later run schedules with the same models the bounds come from.
export STARPU_HOME=$OUTDIR/starpu-home
mkdir -p "$STARPU_HOME"
# StarPU's variables win over --sched; the policy under test must be the one asked for
if [ -n "${STARPU_SCHED:-}" ]; then note "ignoring STARPU_SCHED=$STARPU_SCHED"; fi
unset STARPU_SCHED STARPU_CALIBRATE STARPU_PROFILING STARPU_WORKER_STATS STARPU_BUS_STATS
export STARPU_SILENT=1

# The workload's command (timed runs get --sched and, for the graphs, --export-graph).
# Solves run with --warmup: the timed solves are the steady state, and the graph of a run
# without it marks where they start (below).
read -r -a extra <<<"$TQ_OPTS"
weak=(--weak-field 0.2)
case $WORKLOAD in
    matpc) cmd=(dslash --test matpc --dim "${dim[@]}" --prec single --recon 12 --no-check) ;;
    solve) cmd=(propagator --dim "${dim[@]}" "${weak[@]}" --nsrc 1) ;;
    prop12) cmd=(propagator --dim "${dim[@]}" "${weak[@]}" --nsrc 12) ;;
    mg) cmd=(propagator --dim "${dim[@]}" "${weak[@]}" --nsrc 1 --block 4 4 4 4 --inv-multigrid
             --mg-block-size 0 2 2 2 2 --mg-nvec 0 6) ;;
esac
cmd+=(${extra[@]+"${extra[@]}"})
if [ "$WORKLOAD" = matpc ]; then
    timed=(--niter "$NITER")
    covers="one matpc application (mean of $NITER)"
else
    timed=(--warmup)
    covers="the solves' wall clock (after an untimed warm-up solve)"
fi

# run NAME ARGS...: taskqcd with ARGS and the variables in run_env, stdout/stderr in
# runs/NAME.out/.err; returns its exit status
run_env=()
run() {
    local name=$1
    shift
    local t=()
    [ $have_timeout = 1 ] && t=(timeout "$RUN_TIMEOUT")
    local rc=0
    env ${run_env[@]+"${run_env[@]}"} ${t[@]+"${t[@]}"} "$TASKQCD" "$@" \
        >"$OUTDIR/runs/$name.out" 2>"$OUTDIR/runs/$name.err" || rc=$?
    return $rc
}
# makespan_ms FILE: the workload's own time in ms from the tool's output, or nothing
makespan_ms() {
    awk -v w="$WORKLOAD" '
        w == "matpc" && /^  time .* ms per application/ { v = $2 }
        w != "matpc" && /^  all solves: / { for (i = 1; i < NF; i++) if ($(i + 1) == "s,") v = $i * 1000 }
        END { if (v != "") printf "%.4f\n", v }' "$1"
}
# idle_frac FILE: 1 - executing / total over the workers (STARPU_WORKER_STATS with
# profiling), or NA
idle_frac() {
    awk '/^\ttotal: .* executing: / { for (i = 1; i < NF; i++) { if ($i == "total:") t += $(i + 1); if ($i == "executing:") e += $(i + 1) } }
         END { if (t > 0) printf "%.4f\n", 1 - e / t; else print "NA" }' "$1"
}
# bytes_moved FILE: STARPU_BUS_STATS's total (printed in GB with 4 decimals), or NA
bytes_moved() {
    awk '/^Total transfers: .* GB$/ { v = $3 * 1073741824 } END { if (v != "") printf "%.0f\n", v; else print "NA" }' "$1"
}

{
    echo "# policy-sweep: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "workload=$WORKLOAD dim=\"$DIM\" repeat=$REPEAT tq_opts=\"$TQ_OPTS\""
    echo "command: $TASKQCD ${cmd[*]} ${timed[*]} --sched POLICY"
    echo "covers: $covers"
    echo "machine: $(uname -srm), $(nproc 2>/dev/null || echo '?') cores, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
    # other processes' load skews every timing: recorded at the start and the end
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo NA)"
} >"$OUTDIR/info.txt"
"$TASKQCD" info >>"$OUTDIR/info.txt" 2>&1 || die "'$TASKQCD info' failed (see $OUTDIR/info.txt)"
read -r -a pols <<<"$POLICIES"
for p in "${pols[@]}"; do   # a misspelt policy fails here, not after the calibration
    if ! msg=$("$TASKQCD" info --sched "$p" 2>&1 >/dev/null); then
        die "policy '$p': ${msg:-taskqcd info --sched $p failed}"
    fi
done

# 1. Calibration: dmda places uncalibrated tasks where measurements are missing; a huge
# STARPU_HISTORY_MAX_ERROR keeps the noisy samples of a shared machine instead of
# discarding them.
note "calibrating the performance models ($CALIBRATE_RUNS runs) in $STARPU_HOME"
for ((i = 1; i <= CALIBRATE_RUNS; i++)); do
    run_env=(STARPU_CALIBRATE=1 STARPU_HISTORY_MAX_ERROR=1000000)
    run "calibrate.$i" "${cmd[@]}" "${timed[@]}" --sched dmda ||
        die "calibration run $i failed: $OUTDIR/runs/calibrate.$i.err"
done

# 2. The graphs and the bounds of the timed part. The tool's timer starts after a wait for
# every earlier task, so the timed part is the tasks a longer run has beyond a shorter
# one: matpc, the last NITER of 2 NITER applications (per application: / NITER); the
# solves, the run with --warmup beyond the same run without (its warm-up solve is that
# run's whole solve). graph_bounds.py checks that the shorter graph is the longer's start.
note "exporting the task graphs"
run_env=()
if [ "$WORKLOAD" = matpc ]; then
    short=(--niter "$NITER") long=(--niter $((2 * NITER))) per=$NITER
else
    short=() long=(--warmup) per=1
fi
run graph.short "${cmd[@]}" ${short[@]+"${short[@]}"} --sched dmda --export-graph "$OUTDIR/graph-short.json" ||
    die "graph export failed: $OUTDIR/runs/graph.short.err"
run graph.long "${cmd[@]}" "${long[@]}" --sched dmda --export-graph "$OUTDIR/graph.json" ||
    die "graph export failed: $OUTDIR/runs/graph.long.err"
"$PYTHON" "$here/graph_bounds.py" "$OUTDIR/graph.json" --after "$OUTDIR/graph-short.json" --per "$per" \
    >"$OUTDIR/bounds.txt" || die "bench/graph_bounds.py failed on $OUTDIR/graph.json"
bound_of() { sed -n "s/^$1=//p" "$OUTDIR/bounds.txt"; }
area_ms=$(awk -v v="$(bound_of area_us)" 'BEGIN { printf "%.4f", v / 1000 }')
cp_ms=$(awk -v v="$(bound_of cp_us)" 'BEGIN { printf "%.4f", v / 1000 }')
bound_ms=$(awk -v v="$(bound_of bound_us)" 'BEGIN { printf "%.4f", v / 1000 }')
nocost=$(bound_of tasks_nocost)
note "bounds ($covers): area $area_ms ms, critical path $cp_ms ms over $(bound_of tasks) tasks" \
    "($nocost without a cost, counted as 0)"
[ "$nocost" = 0 ] || note "warning: $nocost tasks have no cost ($(bound_of nocost_codelets)): the bounds are too low" \
    "(more CALIBRATE_RUNS, unless doc/policy-sweep.md \"Known limits\" names the codelet)"
cat "$OUTDIR/bounds.txt" >>"$OUTDIR/info.txt"

# 3. The timed runs, round-robin over the policies so that a slow spell of a shared machine
# spreads over all of them rather than hitting one.
stats_env=()
[ "$STATS" = 1 ] && stats_env=(STARPU_PROFILING=1 STARPU_WORKER_STATS=1 STARPU_BUS_STATS=1)
nruns=$((REPEAT * ${#pols[@]}))
k=0
for ((r = 1; r <= REPEAT; r++)); do
    for p in "${pols[@]}"; do
        k=$((k + 1))
        run_env=(${stats_env[@]+"${stats_env[@]}"})
        if ! run "$p.$r" "${cmd[@]}" "${timed[@]}" --sched "$p"; then
            note "[$k/$nruns] $p run $r failed (exit status; $OUTDIR/runs/$p.$r.err)"
            continue
        fi
        m=$(makespan_ms "$OUTDIR/runs/$p.$r.out")
        [ -n "$m" ] || { note "[$k/$nruns] $p run $r: no timing in its output"; continue; }
        note "[$k/$nruns] $p run $r: $m ms"
    done
done

# 4. The CSV: one row per policy over its successful runs.
csv=$OUTDIR/sweep.csv
echo "policy,makespan_median_ms,makespan_min_ms,makespan_max_ms,runs_ok,idle_frac,bytes_moved,area_bound_ms,cp_bound_ms,bound_ms,ratio_to_bound,covers" >"$csv"
# median [FORMAT] of the numbers on stdin (NA for none)
median() {
    sort -g | awk -v f="${1:-%.4f}" '{ v[NR] = $1 }
        END { if (NR == 0) print "NA"; else if (NR % 2) print v[(NR + 1) / 2]; else printf f "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for p in "${pols[@]}"; do
    ms=() idles=() bytes=()
    for ((r = 1; r <= REPEAT; r++)); do
        out=$OUTDIR/runs/$p.$r.out err=$OUTDIR/runs/$p.$r.err
        [ -f "$out" ] || continue
        m=$(makespan_ms "$out")
        [ -n "$m" ] || continue
        ms+=("$m")
        if [ "$STATS" = 1 ]; then idles+=("$(idle_frac "$err")") bytes+=("$(bytes_moved "$err")"); fi
    done
    if [ ${#ms[@]} -eq 0 ]; then
        echo "$p,NA,NA,NA,0,NA,NA,$area_ms,$cp_ms,$bound_ms,NA,$covers" >>"$csv"
        continue
    fi
    med=$(printf '%s\n' "${ms[@]}" | median)
    min=$(printf '%s\n' "${ms[@]}" | sort -g | head -n1)
    max=$(printf '%s\n' "${ms[@]}" | sort -g | tail -n1)
    idle=NA byt=NA
    if [ ${#idles[@]} -gt 0 ]; then
        idle=$(printf '%s\n' "${idles[@]}" | { grep -v NA || true; } | median)
        byt=$(printf '%s\n' "${bytes[@]}" | { grep -v NA || true; } | median %.0f)
    fi
    ratio=$(awk -v m="$med" -v b="$bound_ms" 'BEGIN { if (b > 0) printf "%.3f", m / b; else print "NA" }')
    echo "$p,$med,$min,$max,${#ms[@]},$idle,$byt,$area_ms,$cp_ms,$bound_ms,$ratio,$covers" >>"$csv"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo NA)" >>"$OUTDIR/info.txt"
note "wrote $csv"
column -s, -t <"$csv" 2>/dev/null || cat "$csv"

# 5. The plot: median makespan per policy with min/max bars, the bounds as lines.
if "$PLOT_PYTHON" -c 'import matplotlib' >/dev/null 2>&1; then
    "$PLOT_PYTHON" - "$csv" "$OUTDIR/sweep.png" "$WORKLOAD" <<'EOF'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["makespan_median_ms"] != "NA"]
if not rows:
    sys.exit("policy-sweep: nothing to plot")
x = range(len(rows))
med = [float(r["makespan_median_ms"]) for r in rows]
lo = [m - float(r["makespan_min_ms"]) for m, r in zip(med, rows)]
hi = [float(r["makespan_max_ms"]) - m for m, r in zip(med, rows)]
fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(rows) + 4), 4.5))
ax.bar(x, med, yerr=[lo, hi], capsize=3, color="#7aa6c2", label="median (min/max)")
r0 = rows[0]
ax.axhline(float(r0["bound_ms"]), color="k", label="lower bound max(area, path)")
ax.axhline(float(r0["area_bound_ms"]), color="C3", ls="--", lw=1, label="area bound")
ax.axhline(float(r0["cp_bound_ms"]), color="C2", ls=":", lw=1, label="critical-path bound")
ax.set_xticks(list(x))
ax.set_xticklabels([r["policy"] for r in rows], rotation=45, ha="right")
ax.set_ylabel("makespan (ms)")
ax.set_title("%s, makespan per StarPU policy\n(%s)" % (sys.argv[3], r0["covers"]), fontsize=10)
ax.set_ylim(bottom=0)
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
EOF
    note "wrote $OUTDIR/sweep.png"
else
    note "no matplotlib in $PLOT_PYTHON: plot skipped (set PLOT_PYTHON to a python3 that has it)"
fi
