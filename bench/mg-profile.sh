#!/usr/bin/env bash
# Where a multigrid solve's time goes (issue 28), on the GPU machine through the device tool
# (carry build/.libs, build/bench/.libs, build/bench/libtq_cupti_trace.so and .deps/starpu).
# A first run makes the set-up (and the quenched configuration, cached in TASKQCD_CACHE) and
# saves it; a second run loads it and solves one source, one system at a time, with the task
# log (TQ_TASK_LOG) and the GPU timeline (bench/cupti_trace.c). Printed: the solve's window,
# the CUDA worker's busy time in it, and per codelet (a chain by its first..last entry) the
# count, total and mean time; then the busiest GPU kernels. Logs under $OUT/mg-profile.
# Knobs: DIM ("32 32 32 32"), KAPPA (0.1452), NVEC (24), MGX (more multigrid options, e.g.
# "--mg-levels 3 --mg-nvec 1 24 --mg-block-size 1 2 2 2 2").
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/mg-profile
mkdir -p "$res"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}   # TQ_TOOL: another build of the command (with TQ_LIBDIR)
export TASKQCD_CACHE="${TASKQCD_CACHE:-/tmp/taskqcd-cache}"
common="propagator --dim ${DIM:-32 32 32 32} --therm 100 --ncpus 8 --ncuda 1 --tol 1e-10 --maxiter 20000 --kappa ${KAPPA:-0.1452}"
mg="--inv-multigrid --mg-nvec 0 ${NVEC:-24} --mg-block-size 0 4 4 4 4 --where any --mg-verbosity 2 --mg-solves-at-once 1 ${MGX:-}"
# shellcheck disable=SC2086
timeout 300 "$tool" $common $mg --nsrc 1 --mg-save /tmp/mg-profile.set > "$res/setup.txt" 2>&1 || echo "set-up run failed: see $res/setup.txt"
grep -E "multigrid set-up:|all solves" "$res/setup.txt"
inject=$top/build/bench/libtq_cupti_trace.so
[ -f "$inject" ] || { echo "no $inject: GPU timeline left out"; inject=; }
# shellcheck disable=SC2086
env TQ_TASK_LOG="$res/tasks.tsv" ${inject:+CUDA_INJECTION64_PATH=$inject TQ_CUPTI_API=0 TQ_CUPTI_TRACE=/tmp/mg-profile-gpu.tsv} \
    timeout 300 "$tool" $common $mg --nsrc 1 --mg-load /tmp/mg-profile.set > "$res/solve.txt" 2>&1 || echo "profiled run failed: see $res/solve.txt"
grep -E "multigrid GCR|all solves" "$res/solve.txt"
echo "== the solve's tasks (window: from 20 ms before the first coarse iteration to the last task)"
python3 - "$res/tasks.tsv" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader([l for l in open(sys.argv[1]) if not l.startswith("#")], delimiter="\t"))
for x in rows:
    for k in ("submit", "start", "end"):
        x[k] = float(x[k])
lab = lambda x: x["codelet"] if x["first"] == "-" else "chain %s..%s" % (x["first"], x["last"])
# the load's tasks come first; the solve starts with its first coarse solve (a chain that
# begins with a copy), the window a little before it
coarse = [x for x in rows if x["first"] == "tq_copy"]
if not coarse:
    sys.exit("no coarse-solve chain in the log")
t0 = min(x["start"] for x in coarse) - 20000
w = [x for x in rows if x["start"] >= t0]
t1 = max(x["end"] for x in w)
busy = sum(x["end"] - x["start"] for x in w if x["worker"] != "-1")
print("window %.1f ms, workers busy %.1f ms (%.0f %%), %d tasks" % ((t1 - t0) / 1e3, busy / 1e3, 100 * busy / (t1 - t0), len(w)))
c = collections.defaultdict(lambda: [0, 0.0])
for x in w:
    c[lab(x)][0] += 1
    c[lab(x)][1] += x["end"] - x["start"]
print("%-46s %6s %10s %9s" % ("codelet", "count", "total ms", "mean us"))
for k, (n, t) in sorted(c.items(), key=lambda kv: -kv[1][1]):
    print("%-46s %6d %10.1f %9.1f" % (k, n, t / 1e3, t / n))
PY
if [ -n "$inject" ]; then
    echo "== GPU kernels (the last 60 % of the GPU activity)"
    python3 "$top/bench/gpu-timeline.py" /tmp/mg-profile-gpu.tsv --last 0.6 > "$res/gpu-summary.txt" 2>&1
    head -n 24 "$res/gpu-summary.txt"
fi
