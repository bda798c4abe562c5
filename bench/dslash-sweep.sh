#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): the Wilson and
# Wilson-clover operators at one volume in every precision and compression on the CUDA
# worker, next to the device copy bandwidth measured in the same run. Full outputs under
# $OUT. Wilson dslash rows also time the bare interior kernel (--bare: launched directly on
# the same data) and print the task graph's overhead per application.
# Usage: [NITER=400] [TYPES="wilson clover"] [PRECS="double single half"] [RECONS="18 12 8"] [TESTS="dslash matpc"]
#        (one taskqcd process per type; TESTS may also hold mat, matpcdagmatpc)
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
# one process per operator: every precision, compression and test on one gauge field and
# source (made once; at 64^4 making them takes longer than the timing)
precs=$(echo ${PRECS:-double single half} | tr ' ' ,)
recons=$(echo ${RECONS:-18 12 8} | tr ' ' ,)
tests=$(echo ${TESTS:-dslash matpc} | tr ' ' ,)
for ty in ${TYPES:-wilson clover}; do
    f="$out/dslash_${ty}.txt"
    extra=()
    [ "$ty" = wilson ] && [[ ",$tests," == *,dslash,* ]] && extra=(--bare)
    "$tq" dslash --dslash-type "$ty" --dim $dims --prec "$precs" --recon "$recons" --test "$tests" --niter ${NITER:-400} \
        --where cuda --no-check --quiet "${extra[@]}" > "$f" 2>&1 || echo "$ty: exit $? (see $f)"
    awk -v y="$ty" '
        function flush() { if (row != "") print row; row = "" }
        /^taskqcd dslash:/ { flush()
                             for (i = 2; i <= NF; i++) {
                                 if ($i == "recon") { p = $(i - 1); r = $(i + 1); sub(",", "", r) }
                                 if ($i ~ /^(dslash|mat|matpc|matpcdagmatpc),?$/) { t = $i; sub(",", "", t) } } }
        /^  time/ { row = sprintf("%-6s %-6s %2s %-6s %8s %8s %8s %8s", y, p, r, t, $2, $6, $8, $13) }
        /^  bare kernel/ { for (i = 1; i <= NF; i++) { if ($i == "time") bt = $(i + 1); if ($i == "GFLOPS,") bg = $(i - 1); if ($i == "overhead") bo = $(i + 1) }
                           row = row sprintf("  | %8s %8s %7s", bt, bg, bo) }
        END { flush() }' "$f" | sort -s -k4,4
done
