#!/usr/bin/env bash
# What one hop and one application boundary cost (device tool; carry build/.libs and
# .deps/starpu): Wilson at DIMS (default 32^4), recon 12, PREC (default single), on 1 GPU and
# on every GPU of the node in one process, applied as one hop (--test dslash), two (matpc)
# and four (matpcdagmatpc), each one chain task per GPU and application. The time per
# application t(h) for h hops is fitted as h * hop + boundary (least squares over the three
# rows): the hop is what the kernels, packs, exteriors and waits between GPUs cost, the
# boundary what StarPU's task-to-task gap adds per application (doc/performance.md, "Two
# H200s at ccf8841"). Logs under $OUT/hopcost/, a table last.
# Usage: bash bench/hop-cost.sh   (DIMS="X Y Z T", PREC, NITER, NCPUS to change the row)
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/hopcost
mkdir -p "$res"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}   # TQ_TOOL: another build of the command (with TQ_LIBDIR)
dims=${DIMS:-32 32 32 32} prec=${PREC:-single} niter=${NITER:-1000} ncpus=${NCPUS:-4}
ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ng" -ge 1 ] || { echo "hop-cost: no GPU here"; exit 1; }
rows=()
for n in 1 $([ "$ng" -gt 1 ] && echo "$ng"); do
    pts=
    for t in "1 dslash" "2 matpc" "4 matpcdagmatpc"; do
        set -- $t
        log=$res/g${n}_$2.txt
        timeout 120 "$tool" dslash --dim $dims --test "$2" --where cuda --ncpus "$ncpus" --ncuda "$n" --niter "$niter" \
            --recon 12 --prec "$prec" --no-check > "$log" 2>&1
        ms=$(sed -n 's/.*time \([0-9.]*\) ms per application.*/\1/p' "$log" | head -n1)
        [ -n "$ms" ] || { echo "hop-cost: $2 on $n GPU(s) failed: see $log"; continue; }
        pts="$pts $1:$ms"
    done
    # least squares t = hop * h + boundary over the points h:t
    fit=$(echo "$pts" | tr ' ' '\n' | awk -F: 'NF == 2 { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2 }
        END { if (n < 2) { print "-"; exit } d = n * sxx - sx * sx; a = (n * sxy - sx * sy) / d; b = (sy - a * sx) / n
              printf "hop %.4f ms, boundary %.4f ms", a, b }')
    rows+=("$(printf '%-7s %-34s %s' "${n}gpu" "$pts" "$fit")")
done
echo "== hop and boundary, Wilson $dims $prec recon 12 ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo "GPUs    hops:ms per application             fit"
printf '%s\n' "${rows[@]}"
