#!/usr/bin/env bash
# Issue 34's heterogeneous rule on the GPU machine (device tool, carrying build and
# .deps/starpu): 1 GPU + 15 CPU workers (--where any) never more than 3 % slower than the GPU
# alone (--where cuda), in every row, from the first run. Single runs spread by about 10 %,
# so each row runs R rounds of both settings, alternating which goes first, in one fresh
# StarPU home (the first --where any run meets uncalibrated CPU models); it prints the first
# round's ratio and the medians' ratio (any / cuda). Full outputs under $OUT/het/.
# The 12-source propagator row only with HET_PROP12=1 (3 rounds of everything: about 9
# minutes with it, 8 without, on an H100 machine).
#   Usage: bash bench/het-check.sh [R]   (default 3)
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/het; mkdir -p "$res"
export STARPU_HOME=$res/home; rm -rf "$STARPU_HOME"; mkdir -p "$STARPU_HOME"
tool=$top/build/.libs/taskqcd
rounds=${1:-3}
# time NAME WHERE ARGS...: one run; prints its time (ms per M_pc, or s of the timed solves)
one() {
    local log=$res/$1-$2.txt kind=$3; shift 3
    timeout 300 "$tool" "$@" > "$log" 2>&1 || { echo nan; return; }
    if [ "$kind" = dslash ]; then sed -n 's/.*time \([0-9.]*\) ms per application.*/\1/p' "$log" | head -n1
    else sed -n 's/.*all solves: .* \([0-9.]*\) s, .*wall clock.*/\1/p' "$log" | head -n1; fi
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() {   # NAME KIND ARGS...
    local name=$1 kind=$2; shift 2
    local c=() a=() r
    for r in $(seq 1 "$rounds"); do
        if [ $((r % 2)) -eq 1 ]; then
            c+=("$(one "$name-r$r" cuda $kind "$@" --where cuda)"); a+=("$(one "$name-r$r" any $kind "$@" --where any)")
        else
            a+=("$(one "$name-r$r" any $kind "$@" --where any)"); c+=("$(one "$name-r$r" cuda $kind "$@" --where cuda)")
        fi
    done
    local mc ma
    mc=$(median "${c[@]}"); ma=$(median "${a[@]}")
    awk -v n="$name" -v c1="${c[0]}" -v a1="${a[0]}" -v mc="$mc" -v ma="$ma" -v all="cuda ${c[*]} | any ${a[*]}" \
        'BEGIN { printf "%-24s first %6.3f / %6.3f (%+5.1f %%)  median %6.3f / %6.3f (%+5.1f %%)   [%s]\n",
                 n, a1, c1, 100 * (a1 / c1 - 1), ma, mc, 100 * (ma / mc - 1), all }'
}
echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), $rounds rounds"
echo "row                      any / cuda: first round, medians (ms per M_pc; s of the timed solves)"
ds="dslash --dim 32 32 32 32 --test matpc --niter 200 --recon 12 --ncpus 15"
for op in wilson clover; do
    for p in single half; do row "$op-32-$p" dslash $ds --dslash-type $op --prec $p; done
done
one_solve="propagator --dim 32 32 32 32 --weak-field 0.2 --nsrc 1 --warmup --ncpus 15"
row solve-b1 prop $one_solve
row solve-b2 prop $one_solve --block 32 32 32 16
row solve-b4 prop $one_solve --block 32 32 16 16
if [ "${HET_PROP12:-0}" = 1 ]; then row prop12-b1 prop propagator --dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --ncpus 15; fi
