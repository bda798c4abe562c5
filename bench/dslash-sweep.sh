#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): the Wilson and
# Wilson-clover operators at one volume in every precision and compression on the CUDA
# worker, next to the device copy bandwidth measured in the same run. Full outputs under
# $OUT. Wilson dslash rows come from bench/bench_dslash_bare, which also times the bare
# interior kernel (launched directly on the same data) and prints the task graph's overhead
# per application; the other rows from taskqcd dslash.
# Usage: [NITER=400] [TYPES="wilson clover"] [PRECS="double single half"] [RECONS="18 12 8"] [TESTS="dslash matpc"]
#        (one taskqcd process per type, and bench_dslash_bare for the Wilson dslash; TESTS may
#        also hold mat, matpcdagmatpc)
#        bash bench/dslash-sweep.sh [X Y Z T] (default 32^4)
set -u
source "$(dirname "$0")/device-env.sh"
dims=${*:-32 32 32 32}
tq="$top/build/.libs/taskqcd"
bench="$top/build/bench/.libs/bench_blas"
"$bench" --dim 64 64 64 64 --niter 5 --op copy --prec single > "$out/copy.txt" 2>&1
grep -i "copy bandwidth" "$out/copy.txt"
echo "dims $dims; columns: type prec recon test, ms per application, GFLOPS, GB/s QUDA model, GB/s minimal;"
echo "  wilson dslash: + bare kernel ms, GFLOPS, task-graph overhead us per application"
# one process per program and operator: every precision, compression and test on one gauge
# field and source (made once; at 64^4 making them takes longer than the timing)
precs=$(echo ${PRECS:-double single half} | tr ' ' ,)
recons=$(echo ${RECONS:-18 12 8} | tr ' ' ,)
tests=$(echo ${TESTS:-dslash matpc} | tr ' ' ,)
bare="$top/build/bench/.libs/bench_dslash_bare"
[ -x "$bare" ] || bare="$top/build/bench/bench_dslash_bare"
# one table row per "time" line of either program's output ($1: type, $2: file)
rows() {
    awk -v y="$1" '
        function flush() { if (row != "") print row; row = "" }
        /^(taskqcd dslash|bench_dslash_bare):/ { flush()
                             for (i = 2; i <= NF; i++) {
                                 if ($i == "recon") { p = $(i - 1); r = $(i + 1); sub(",", "", r) }
                                 if ($i ~ /^(dslash|mat|matpc|matpcdagmatpc),?$/) { t = $i; sub(",", "", t) } } }
        /^  time/ { row = sprintf("%-6s %-6s %2s %-6s %8s %8s %8s %8s", y, p, r, t, $2, $6, $8, $13) }
        /^  bare kernel/ { for (i = 1; i <= NF; i++) { if ($i == "time") bt = $(i + 1); if ($i == "GFLOPS,") bg = $(i - 1); if ($i == "overhead") bo = $(i + 1) }
                           row = row sprintf("  | %8s %8s %7s", bt, bg, bo) }
        END { flush() }' "$2"
}
for ty in ${TYPES:-wilson clover}; do
    f="$out/dslash_${ty}.txt"
    files=()
    ty_tests=$tests
    if [ "$ty" = wilson ] && [[ ",$tests," == *,dslash,* ]]; then
        # the Wilson dslash: task graph and bare kernel on the same data, in one process
        fb="$out/dslash_${ty}_bare.txt"
        "$bare" --dim $dims --prec "$precs" --recon "$recons" --niter ${NITER:-400} --quiet > "$fb" 2>&1 ||
            echo "$ty dslash (bench_dslash_bare): exit $? (see $fb)"
        files+=("$fb")
        ty_tests=$(echo ",$tests," | sed 's/,dslash,/,/g; s/^,//; s/,$//')
    fi
    if [ -n "$ty_tests" ]; then
        "$tq" dslash --dslash-type "$ty" --dim $dims --prec "$precs" --recon "$recons" --test "$ty_tests" --niter ${NITER:-400} \
            --where cuda --no-check --quiet > "$f" 2>&1 || echo "$ty: exit $? (see $f)"
        files+=("$f")
    fi
    for g in "${files[@]}"; do rows "$ty" "$g"; done | sort -s -k4,4
done
