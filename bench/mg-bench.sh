#!/usr/bin/env bash
# Multigrid against the plain solvers on the GPU machine (device tool, carrying build and
# .deps/starpu): the propagator job's solves with two-level multigrid GCR (cycle on the
# GPUs), BiCGstab (double, single reliable updates) and plain GCR, same lattice, kappa and
# sources; beside the default two-level row (red-black smoothers, even-odd coarsest solves)
# the same without the red-black smoother, with level 1 on CPU workers (--mg-where 1 cpu),
# and three levels (then 2^4 aggregates, NVEC vectors on level 1); a table of iterations
# and the solves' wall clock last, logs in $OUT/mg.
# Knobs: DIM (default "16 16 16 16"), KAPPA (0.1245), NSRC (2), NVEC (12), BLOCK (4 4 4 4),
# WHERE (any; multigrid's row), NCUDA (the GPUs every row may use; default all).
# Usage: bash bench/mg-bench.sh
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/mg
mkdir -p "$res"
tool=$top/build/.libs/taskqcd
dim=${DIM:-16 16 16 16}
common="propagator --dim $dim --weak-field 0.3 --kappa ${KAPPA:-0.1245} --nsrc ${NSRC:-2} --ncpus 8${NCUDA:+ --ncuda $NCUDA}"
mg="--inv-multigrid --mg-nvec 0 ${NVEC:-12} --mg-block-size 0 ${BLOCK:-4 4 4 4} --where ${WHERE:-any}"
rows=()
mg_row() {
    local name=$1; shift
    timeout 150 "$@" > "$res/$name.txt" 2>&1 || echo "$name failed: see $res/$name.txt"
    rows+=("$(printf '%-28s %s | %s' "$name" "$(grep -o 'all solves: [0-9]* iterations, [0-9.]* s' "$res/$name.txt")" \
        "$(grep -o 'null vectors.*s$' "$res/$name.txt" | head -n1)")")
}
# shellcheck disable=SC2086
{
    mg_row multigrid-gpu-cycle "$tool" $common $mg --mg-verbosity 1
    mg_row multigrid-smoother-on-M "$tool" $common $mg --mg-verbosity 1 --mg-smoother-eo 0
    mg_row multigrid-level1-cpu "$tool" $common $mg --mg-verbosity 1 --mg-where 1 cpu
    mg_row multigrid-3-levels "$tool" $common $mg --mg-verbosity 1 --mg-levels 3 --mg-nvec 1 "${NVEC:-12}" \
        --mg-block-size 1 2 2 2 2
    mg_row bicgstab-single-rel "$tool" $common --where cuda
    mg_row gcr-plain "$tool" $common --inv-type gcr --solve-type direct --where cuda
}
echo "== multigrid vs plain solvers ($dim, kappa ${KAPPA:-0.1245}, ${NSRC:-2} sources, ${NCUDA:-all} GPU(s))"
printf '%s\n' "${rows[@]}"
