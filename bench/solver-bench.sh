#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): solver iterations,
# time to solution and GFLOPS for the clover operator at one volume, a heavy and a light
# kappa, BiCGstab and CG (CGNR on the even-odd system), in double, double with single-
# and half-precision reliable updates (tol 1e-10), and uniform single (tol 1e-6) / half
# (tol 1e-3) for the solver-vs-dslash rate; then the 12-source propagator with all solves
# together vs one after another, on the GPU alone and on GPU + CPU workers. Each run solves
# once untimed first (--warmup: the first solves in a process allocate their work fields'
# device memory, about 50 ms at 32^4). Full outputs under $OUT, a table on stdout.
# Usage: [NSRC=12] [KAPPAS="0.125 0.140"] [INVS="bicgstab cg"] [MODES="double single-rel ..."] [PROP=1]
#        [GAUGE=FILE | WEAK=EPS] [THERM=N] bash bench/solver-bench.sh [X Y Z T]
# The gauge field: the propagator's default, a quenched beta 6.0 configuration (THERM sweeps
# of 1 heat bath + 4 overrelaxation, default 100, generated on the GPU by the first run and
# cached); GAUGE: a configuration file instead; WEAK: a weak-field one (as older figures in
# doc/performance.md).
set -u
source "$(dirname "$0")/device-env.sh"
dims=${*:-32 32 32 32}
tq="$top/build/.libs/taskqcd"
# one line per run: kappa inverter mode, then the median over the run's solves (NSRC point
# sources solved one after another in one process; a single solve varies by about 5 % from
# process to process) of iterations, reliable updates, seconds, GFLOPS, and over the
# iterations alone (QUDA's solver time) seconds and GFLOPS; the largest true residual; and
# the median share of the operator's rate (solve / iterations). The operator's rate is the
# bare even-odd operator's in the same run ($out/operator.txt): for uniform precision the
# sloppy operator's GFLOPS; with reliable updates the rate of the mix of applications the
# solve makes, F (a N + U) / (a N t_sloppy + U t_double), with N iterations, U updates, a
# applications per iteration (BiCGstab 2 M_pc, CG 1 M_pc^dag M_pc), one double application
# per update, F the flops and t the same-run times of one application.
row() {
    python3 - "$@" "$out/operator.txt" <<'PY'
import json, statistics, sys
k, inv, mode, f, opfile = sys.argv[1:6]
try:
    solves = json.load(open(f))["solves"]
except Exception:
    print("%-6s %-9s %-11s failed" % (k, inv, mode)); sys.exit()
op = {}
for line in open(opfile):
    test, prec, ms, gflops = line.split()
    op[(test, prec)] = (float(ms) * 1e-3, float(gflops))
unit, a = ("matpc", 2) if inv == "bicgstab" else ("matpcdagmatpc", 1)
sloppy = mode.replace("-rel", "")
def ceiling(s):
    ts, gs = op[(unit, sloppy)]
    tp = op[(unit, "double")][0]
    n, u = s["iterations"], s["reliable_updates"] if mode.endswith("-rel") else 0
    return gs * ts * (a * n + u) / (a * n * ts + u * tp)
med = lambda key: statistics.median(s[key] for s in solves)
share = lambda key: statistics.median(100 * s[key] / ceiling(s) for s in solves)
print("%-6s %-9s %-11s %6d %4d %10.3e %9.6f %9.1f %9.6f %9.1f %7.1f %7.1f %7.1f  (%d solves)" % (
    k, inv, mode, round(med("iterations")), round(med("reliable_updates")), max(s["true_residual"] for s in solves),
    med("seconds"), med("gflops"), med("iter_seconds"), med("iter_gflops"),
    statistics.median(ceiling(s) for s in solves), share("gflops"), share("iter_gflops"), len(solves)))
PY
}
export TASKQCD_CACHE="${TASKQCD_CACHE:-$out/cache}"
if [ -n "${GAUGE:-}" ]; then src=(--gauge "$GAUGE"); gdesc=$GAUGE
elif [ -n "${WEAK:-}" ]; then src=(--dim $dims --weak-field "$WEAK"); gdesc="weak field (epsilon $WEAK)"
else src=(--dim $dims --therm "${THERM:-100}"); gdesc="quenched beta 6.0 (${THERM:-100} sweeps, cached in $TASKQCD_CACHE)"
fi
echo "dims $dims, clover c_sw 1, $gdesc, recon 12 (sloppy recon 12), direct-pc, one source"
"$tq" dslash --dim $dims --dslash-type clover --prec double,single,half --recon 12 --test matpc,matpcdagmatpc \
    --where cuda --niter 200 --no-check > "$out/matpc.txt" 2>&1
echo "the even-odd operator alone (taskqcd dslash, recon 12; the rate the solver rates compare with):"
awk '/^taskqcd dslash:/ { t = $0; sub(/.*even-odd\) /, "", t); sub(/,.*/, "", t)
                         p = $0; sub(/.*blocks [^,]*, /, "", p); sub(/, kappa.*/, "", p) }
     /time .* per application/ { printf "  %-14s %-16s %s ms  %s GFLOPS\n", t, p, $2, $6
                                  split(p, w, " "); print t, w[1], $2, $6 > "'"$out/operator.txt"'" }' "$out/matpc.txt"
echo "medians over NSRC=${NSRC:-12} solves per run (one after another):"
echo "kappa  inverter  mode        iters  rel  true-res    seconds   GFLOPS  it-secs  it-GFLOPS ceiling  %solve  %iters"
for kappa in ${KAPPAS:-0.125 0.140}; do
    for inv in ${INVS:-bicgstab cg}; do
        for mode in ${MODES:-double single-rel half-rel single half}; do
            args=(--prec double --prec-sloppy double --tol 1e-10)
            case $mode in
                single-rel) args=(--prec double --prec-sloppy single --tol 1e-10) ;;
                half-rel) args=(--prec double --prec-sloppy half --tol 1e-10) ;;
                single) args=(--prec single --tol 1e-6) ;;
                half) args=(--prec half --tol 1e-3) ;;
            esac
            f="$out/solve_${kappa}_${inv}_${mode}.json"
            timeout 300 "$tq" propagator "${src[@]}" --kappa "$kappa" --inv-type "$inv" "${args[@]}" --nsrc "${NSRC:-12}" \
                --batch 1 --warmup --maxiter 5000 --where cuda --json --quiet > "$f" 2> "${f%.json}.err"
            row "$kappa" "$inv" "$mode" "$f"
        done
    done
done
if [ "${PROP:-1}" = 1 ]; then
    pk=${PROP_KAPPA:-0.140}
    echo "12-source propagator (kappa $pk, BiCGstab, double with single reliable updates):"
    echo "where  batch  wall-seconds  GFLOPS  iterations   (per-solve phases in prop_*.err)"
    for where in cuda any; do
        # GPU + CPU workers: dmda places tasks by their performance models (lws would hand
        # CPU workers whole 32^4 operator applications)
        sched=; [ $where = any ] && sched="--sched dmda"
        for batch in $([ $where = any ] && echo 1 12 || echo 12 1); do   # any: the batch-1 run calibrates the models first
            f="$out/prop_${where}_${batch}.json"
            timeout ${PROP_TIMEOUT:-150} "$tq" propagator "${src[@]}" --kappa $pk --batch $batch --where $where $sched --warmup --json \
                > "$f" 2> "${f%.json}.err"
            awk -v w="$where" -v b="$batch" '
                /"wall_seconds"/ { match($0, /"wall_seconds": [0-9.e+-]+/); s = substr($0, RSTART + 16, RLENGTH - 16)
                                   match($0, /"gflops": [0-9.e+-]+/); g = substr($0, RSTART + 10, RLENGTH - 10) }
                /"iterations"/ { match($0, /"iterations": [0-9]+/); it += substr($0, RSTART + 14, RLENGTH - 14) }
                END { printf "%-6s %5s  %12s  %6s  %10s\n", w, b, s, g, it }' "$f"
        done
    done
fi
