#!/usr/bin/env bash
# Issue 28's benchmark: multigrid GCR against mixed-precision BiCGstab and CG on a thermalised
# quenched configuration (beta 6.0, THERM sweeps, generated on the GPU by the first run and
# cached in TASKQCD_CACHE), clover c_sw 1, tolerance 1e-10, at a light kappa (BiCGstab about
# 1000 iterations: kappa_c is near 0.1455 on the 32^4 configuration of 100 sweeps, seed 1)
# and heavier ones. Run on the GPU machine through the device tool (carry build and
# .deps/starpu, as for bench/device-run.sh). Rows per kappa:
#   bicgstab  BiCGstab double with single-precision reliable updates (the default), direct-pc
#   cg        CG on the normal equations (normop-pc), double with single reliable updates
#   mg2       two levels, 4^4 aggregates, NVEC null vectors (set-up timed apart)
#   mg3       three levels, 4^4 then 2^4 aggregates, NVEC vectors on both (paper 000's form)
#   mg2-1     two levels with one source at a time (--mg-solves-at-once 1; the others 4)
#   mg2-double  two levels with the fine cycle and the bases in double (the CPU's default;
#             on GPUs the default is half, as paper 000)
#   mg2-chalf   two levels with the coarse level's links and solves in half (single is the
#             default)
#   mg3-chalf   three levels, coarse links in half
#   mg2-outer-double  two levels with the outer GCR iterating in double (the default: single
#             with reliable updates)
# Each row's log under $OUT/mg-light; the table last: iterations and seconds of all NSRC
# solves, seconds per solve, the set-up, the speed-up over BiCGstab per solve after the
# set-up, and with the set-up amortised over 12 sources.
# Knobs: DIM ("32 32 32 32"), THERM (100), KAPPAS ("0.1452 0.1445 0.1435"), NSRC (2),
# NVEC (24), ROWS ("bicgstab cg mg2 mg3"), NCUDA (1), WHERE (multigrid's placement: any),
# MGX (more options for the multigrid rows), TIMEOUT (seconds per row, 200), PROFILE (a
# row name: that row once more with 2 sources (multigrid: one at a time) under the GPU timeline of
# bench/cupti_trace.c; its busiest kernels printed last, the summary in $OUT/mg-light).
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/mg-light
mkdir -p "$res"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}   # TQ_TOOL: another build of the command (with TQ_LIBDIR)
# the configuration (600 MB at 32^4) outside $OUT, which the device tool brings back
export TASKQCD_CACHE="${TASKQCD_CACHE:-/tmp/taskqcd-cache}"
dim=${DIM:-32 32 32 32}
nsrc=${NSRC:-2}
nvec=${NVEC:-24}
common="propagator --dim $dim --therm ${THERM:-100} --nsrc $nsrc --ncpus 8 --ncuda ${NCUDA:-1} --tol 1e-10 --maxiter 20000"
mg="--inv-multigrid --mg-nvec 0 $nvec --mg-block-size 0 4 4 4 4 --where ${WHERE:-any} --mg-verbosity 1 ${MGX:-}"
table=$res/table.tsv
printf 'kappa\trow\titerations\tsolves_s\tper_solve_s\tsetup_s\n' > "$table"
row() {
    local kappa=$1 name=$2; shift 2
    local log=$res/$name-$kappa.txt
    timeout "${TIMEOUT:-200}" stdbuf -o0 "$tool" $common --kappa "$kappa" "$@" > "$log" 2>&1 || echo "$name at $kappa failed: see $log"
    awk -v k="$kappa" -v n="$name" -v ns="$nsrc" '
        /all solves:/ { for (i = 1; i <= NF; i++) { if ($i == "iterations,") it = $(i - 1); if ($i == "s,") s = $(i - 1) } }
        /^  multigrid set-up:/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/ && $(i + 1) == "s") su = $i }
        END { if (s == "") exit; printf "%s\t%s\t%s\t%s\t%.4f\t%s\n", k, n, it, s, s / ns, su == "" ? "-" : su }' "$log" >> "$table"
}
nvidia-smi --query-gpu=name --format=csv,noheader > "$res/gpu.txt" 2>&1
echo "GPU: $(head -n1 "$res/gpu.txt"), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
# shellcheck disable=SC2086
for kappa in ${KAPPAS:-0.1452 0.1445 0.1435}; do
    for r in ${ROWS:-bicgstab cg mg2 mg3}; do
        case $r in
            bicgstab) row "$kappa" bicgstab --where cuda ;;
            cg) row "$kappa" cg --inv-type cg --solve-type normop-pc --where cuda ;;
            mg2) row "$kappa" mg2 $mg ;;
            mg2-1) row "$kappa" mg2-1 $mg --mg-solves-at-once 1 ;;
            mg2-double) row "$kappa" mg2-double $mg --mg-smoother-prec double --mg-nullvec-prec double ;;
            mg2-chalf) row "$kappa" mg2-chalf $mg --mg-coarse-prec half ;;
            mg2-outer-double) row "$kappa" mg2-outer-double $mg --prec-sloppy double ;;
            mg3-chalf) row "$kappa" mg3-chalf $mg --mg-levels 3 --mg-nvec 1 "$nvec" --mg-block-size 1 2 2 2 2 --mg-coarse-prec half ;;
            mg3) row "$kappa" mg3 $mg --mg-levels 3 --mg-nvec 1 "$nvec" --mg-block-size 1 2 2 2 2 ;;
            *) echo "unknown row $r" ;;
        esac
    done
done
inject=$top/build/bench/libtq_cupti_trace.so
if [ -n "${PROFILE:-}" ] && [ -f "$inject" ]; then
    kappa=${KAPPAS%% *}
    kappa=${kappa:-0.1452}
    # the row's options as the loop above gives them, two sources one after the other
    case $PROFILE in
        mg3) extra="$mg --mg-levels 3 --mg-nvec 1 $nvec --mg-block-size 1 2 2 2 2 --mg-solves-at-once 1" ;;
        mg2-double) extra="$mg --mg-smoother-prec double --mg-nullvec-prec double --mg-solves-at-once 1" ;;
        bicgstab) extra="--where cuda" ;;
        *) extra="$mg --mg-solves-at-once 1" ;;
    esac
    # shellcheck disable=SC2086
    CUDA_INJECTION64_PATH=$inject TQ_CUPTI_API=0 TQ_CUPTI_TRACE=/tmp/mg-light-gpu.tsv timeout "${TIMEOUT:-200}" \
        "$tool" ${common/--nsrc $nsrc/--nsrc 2} --kappa "$kappa" $extra > "$res/profile-$PROFILE.txt" 2>&1 ||
        echo "the profiled $PROFILE row failed: see $res/profile-$PROFILE.txt"
    python3 "$top/bench/gpu-timeline.py" /tmp/mg-light-gpu.tsv --last 0.3 > "$res/profile-$PROFILE.summary" 2>&1
fi
echo "== multigrid against mixed-precision BiCGstab and CG ($dim, quenched beta 6.0, $nsrc sources, ${NCUDA:-1} GPU(s))"
python3 - "$table" <<'PY'
import sys, csv
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("%-7s %-9s %7s %9s %10s %8s %10s %12s" % ("kappa", "row", "iters", "solves_s", "per_solve", "setup_s", "vs_bicg", "vs_bicg_12src"))
for r in rows:
    ref = [q for q in rows if q["kappa"] == r["kappa"] and q["row"] == "bicgstab"]
    per = float(r["per_solve_s"])
    setup = 0.0 if r["setup_s"] == "-" else float(r["setup_s"])
    if ref:
        b = float(ref[0]["per_solve_s"])
        gain, gain12 = "%.2fx" % (b / per), "%.2fx" % (b / (per + setup / 12))
    else:
        gain = gain12 = "-"
    print("%-7s %-9s %7s %9s %10.4f %8s %10s %12s" % (r["kappa"], r["row"], r["iterations"], r["solves_s"], per,
                                                   r["setup_s"], gain, gain12))
PY
if [ -f "$res/profile-${PROFILE:-none}.summary" ]; then
    echo "== GPU timeline of the $PROFILE row (the last 30 % of its GPU activity)"
    head -n 22 "$res/profile-$PROFILE.summary"
fi
