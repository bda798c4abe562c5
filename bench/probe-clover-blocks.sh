#!/usr/bin/env bash
# One-off: the clover 4-block set-up abort on the GPU (StarPU prio-list assertion).
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/probe; mkdir -p "$res"
tool=$top/build/.libs/taskqcd
run() { local name=$1; shift; local t0=$(date +%s.%N)
  env "$@" > "$res/$name.txt" 2>&1; local rc=$?
  printf '%-28s rc=%-4s %5.1fs %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$(grep -m1 -o 'Assertion.*\|time .* ms per application' "$res/$name.txt")"; }
c32="$tool dslash --dim 32 32 32 32 --dslash-type clover --where cuda --test matpc --niter 20 --prec single --recon 12 --ncpus 4"
run c32-b4 $c32 --block 32 32 16 16
run c32-b4-again $c32 --block 32 32 16 16
run c32-b4-nochain TQ_CHAIN=0 $c32 --block 32 32 16 16
run c32-b4-eager STARPU_SCHED=eager $c32 --block 32 32 16 16
run c32-b4-ncpu0 $c32 --block 32 32 16 16 --ncpus 0
run c32-b4-noprefetch STARPU_PREFETCH=0 $c32 --block 32 32 16 16
run c32-b2 $c32 --block 32 32 32 16
run c32-b8 $c32 --block 32 16 16 16
run c16-b4 $tool dslash --dim 16 16 16 16 --dslash-type clover --where cuda --test matpc --niter 20 --prec single --recon 12 --ncpus 4 --block 16 16 8 8
if command -v gdb >/dev/null; then
  timeout 120 gdb -batch -ex run -ex bt --args $c32 --block 32 32 16 16 > "$res/gdb.txt" 2>&1
  grep -n -A25 "SIGABRT" "$res/gdb.txt" | head -40
else echo "no gdb"; fi
