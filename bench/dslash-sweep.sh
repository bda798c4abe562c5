#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): the Wilson and
# Wilson-clover operators at one volume in every precision and compression on the CUDA
# worker, next to the device copy bandwidth measured in the same run. Full outputs under
# $OUT. Usage: [TYPES="wilson clover"] bash bench/dslash-sweep.sh [X Y Z T] (default 32^4)
set -u
top=$(pwd)
out=${OUT:-/tmp/taskqcd-device}
mkdir -p "$out"
export LD_LIBRARY_PATH="$top/build/.libs:$top/.deps/starpu/lib:${LD_LIBRARY_PATH:-}"
export STARPU_HOME=/tmp/taskqcd-starpu-home STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
dims=${*:-32 32 32 32}
tq="$top/build/.libs/taskqcd"
bench="$top/build/bench/.libs/bench_blas"
"$bench" --dim 64 64 64 64 --niter 5 --op copy --prec single > "$out/copy.txt" 2>&1
grep -i "copy bandwidth" "$out/copy.txt"
echo "dims $dims; columns: type prec recon test, ms per application, GFLOPS, GB/s QUDA model, GB/s minimal"
for ty in ${TYPES:-wilson clover}; do
    for p in double single half; do
        for r in 18 12 8; do
            for t in dslash matpc; do
                f="$out/dslash_${ty}_${p}_${r}_${t}.txt"
                "$tq" dslash --dslash-type "$ty" --dim $dims --prec "$p" --recon "$r" --test "$t" --niter 50 --where cuda \
                    --no-check --quiet > "$f" 2>&1
                awk -v y="$ty" -v p="$p" -v r="$r" -v t="$t" \
                    '/^  time/ { printf "%-6s %-6s %2s %-6s %8s %8s %8s %8s\n", y, p, r, t, $2, $6, $8, $13 }' "$f"
            done
        done
    done
done
