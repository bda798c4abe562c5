#!/usr/bin/env bash
# Runs on the GPU machine (device tool, carrying build and .deps/starpu): where the time of a
# solve goes. The even-odd clover operator's rates (matpc and matpcdagmatpc, every precision,
# recon 12) at the given volume, then single CG (CGNR) and BiCGstab solves with a line per
# iteration (elapsed time), pipelined and one iteration at a time, with StarPU's default CPU
# worker count and with one core left for the application thread. Logs under $OUT; per
# solve the phase line (start / iterations / end) and the mean time per iteration.
# Usage: bash bench/solver-timeline.sh [X Y Z T]
set -u
source "$(dirname "$0")/device-env.sh"
dims=${*:-32 32 32 32}
tq="$top/build/.libs/taskqcd"
"$tq" dslash --dim $dims --dslash-type clover --prec double,single,half --recon 12 --test matpc,matpcdagmatpc \
    --where cuda --niter 50 --no-check > "$out/matpc.txt" 2>&1
grep -E "GFLOPS|matpc" "$out/matpc.txt" | tail -n 8
for ncpu in ${NCPUS:-15 14}; do for pipe in 1 0; do
    for cfg in "cg double double 1e-10" "cg single single 1e-6" "bicgstab double double 1e-10" "bicgstab double half 1e-10"; do
        set -- $cfg
        f="$out/tl_${ncpu}_${pipe}_$1_$2_$3.txt"
        STARPU_NCPU=$ncpu TQ_SOLVER_PIPELINE=$pipe timeout 120 "$tq" propagator --dim $dims --kappa 0.124 --inv-type $1 \
            --prec $2 --prec-sloppy $3 --tol $4 --nsrc 1 --where cuda --verbosity 2 > "$f" 2>&1
        printf "ncpu %2s pipe %s %-9s %-6s %-6s " "$ncpu" "$pipe" "$1" "$2" "$3"
        awk '/iteration [0-9]+:/ { n++; match($0, /\(([0-9.]+) s\)/); t = substr($0, RSTART + 1, RLENGTH - 4) + 0
                                   if (n == 1) t1 = t; last = t }
             /\(start/ { match($0, /[0-9.]+ s \(start [^)]*\)/); ph = substr($0, RSTART, RLENGTH) }
             END { if (n > 1) printf "%s; per iteration %.3f ms after the first (%.1f ms)\n", ph, (last - t1) / (n - 1) * 1e3, t1 * 1e3
                   else print "failed" }' "$f"
    done
done; done
