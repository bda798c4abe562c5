#!/usr/bin/env bash
# On the GPU machine (device tool, carrying build and .deps/starpu): where the time of M_pc
# on several blocks of one GPU goes. For 1, 2 and 4 blocks of a 32^4 lattice (Wilson,
# recon 12, single and half): the wall time per M_pc through StarPU (taskqcd dslash), and
# the GPU time of its hopping kernels alone as Nsight Compute measures each launch
# (gpu__time_duration, kernels serialised); their difference is what the task graph adds
# (launch gaps, StarPU), the kernels' sum against one block's is what smaller kernels cost.
# Table on stdout and in $OUT/kernel-times/summary.txt; ncu's CSV under $OUT/kernel-times/.
# Usage: bash bench/kernel-times.sh [X Y Z T]   (default 32 32 32 32; KT_NCU=0: wall times only)
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/kernel-times; mkdir -p "$res"
dims=${*:-32 32 32 32}
read -r X Y Z T <<< "$dims"
ncu=$([ "${KT_NCU:-1}" = 0 ] || command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
bin=$top/build/.libs/taskqcd
sum=$res/summary.txt
printf "%-10s %-6s %12s %14s %12s %10s\n" blocks prec "wall/M_pc" "kernels/M_pc" "per kernel" kernels > "$sum"
for blk in "$X $Y $Z $T" "$X $Y $Z $((T / 2))" "$X $Y $((Z / 2)) $((T / 2))"; do
    nb=$(( X * Y * Z * T / ($(echo "$blk" | tr ' ' '*')) ))
    for prec in single half; do
        tag="b${nb}_$prec"
        "$bin" dslash --dim $dims --block $blk --test matpc --prec $prec --recon 12 --where cuda --niter 400 \
            --no-check > "$res/$tag.wall.log" 2>&1
        wall=$(grep -oE "[0-9.]+ ms" "$res/$tag.wall.log" | head -n1 | awk '{print $1}')
        kern="-" per="-" n=0
        if [ -n "$ncu" ]; then
            "$ncu" --metrics gpu__time_duration.sum --kernel-name regex:dslash_wilson --csv \
                "$bin" dslash --dim $dims --block $blk --test matpc --prec $prec --recon 12 --where cuda --niter 10 \
                --no-check > "$res/$tag.ncu.csv" 2>"$res/$tag.ncu.err"
            # each launch's duration (ns in the last column); the mean per launch times the
            # launches of one M_pc (two hopping terms per block)
            read -r n per <<< "$(grep gpu__time_duration "$res/$tag.ncu.csv" | awk -F'","' '{v=$NF; u=$(NF-1); gsub(/[",]/,"",v); f=u ~ /^us/ ? 1000 : u ~ /^ms/ ? 1e6 : 1; s+=v*f; n++} END {if (n) printf "%d %.2f", n, s/n/1000; else print "0 -"}')"
            [ "$per" != "-" ] && kern=$(awk -v p="$per" -v nb="$nb" 'BEGIN {printf "%.3f", p * 2 * nb / 1000}')
        fi
        printf "%-10s %-6s %12s %14s %12s %10s\n" "$nb" "$prec" "${wall:-?} ms" "$kern ms" "$per us" "$n" >> "$sum"
    done
done
cat "$sum"
