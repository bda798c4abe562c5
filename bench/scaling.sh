#!/usr/bin/env bash
# Distribution benchmark (issue 34), run on the GPU machine through the device tool (carry
# build and .deps/starpu, as for bench/device-run.sh): what one GPU and its host can show
# now, and later the same rows on several GPUs.
#   - owner-computes overhead: Wilson and clover M_pc (single r12, half r12) with 1, 2 and 4
#     blocks on the one GPU (--where cuda), at 32^4 and 64^4;
#   - two MPI ranks sharing the one GPU, each with half the lattice (split in t), against
#     one rank with the whole lattice (faces through StarPU-MPI);
#   - the 32^4 12-source propagator (weak field): 1 block, 2 and 4 blocks, --where any
#     (GPU + CPU workers) and 2 ranks, against --where cuda.
# Full outputs under $OUT/scaling/, the table (also $OUT/scaling/table.tsv) last.
#   - GPU + CPU workers (--where any) against the GPU alone: M_pc and one BiCGstab solve
#     (double with single-precision reliable updates) on 1, 2 and 4 blocks.
#   - gpus: every GPU of the node against one (one process and one rank per GPU).
#   - weak: 32^4 per GPU on 1, 2, 4 (and 8) GPUs; huge: 96^3x192 on every GPU of the node.
#   Usage: bash bench/scaling.sh [all|dslash|prop|quick|big|het|blocks|gpus|weak|huge]   (quick: the 32^4
#   dslash rows, big: the 64^4 ones and the 64^4 solve on 1, 2 and 4 blocks, het: the --where any rows and the one-source solves,
#   blocks: the 32^4 rows of several blocks on the GPU alone: M_pc, one solve, 12 sources;
#   a part appends to the table of an earlier part in the same $OUT)
#   SIMULATED=FILE: the predictions printed beside the measured rows (default
#   doc/data/simulated-h200gpu.tsv, bench/simgrid-predict.sh's PRED_TSV).
#   SCALING_TAG=-x: appended to every row's name (the same rows under another setting in one
#   table, e.g. TQ_CHAIN=0 SCALING_TAG=-nochain).
set -u
source "$(dirname "$0")/device-env.sh"
res=$out/scaling
mkdir -p "$res"
tool=${TQ_TOOL:-$top/build/.libs/taskqcd}   # TQ_TOOL: another build of the command (with TQ_LIBDIR)
part=${1:-all}
# --bind-to none: mpirun binds each of two ranks to one core by default; the library gives
# each rank its share of the node (src/core/context.c)
mpi="mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x STARPU_HOME -x STARPU_SILENT${TQ_CHAIN:+ -x TQ_CHAIN}${STARPU_MINIMUM_CLEAN_BUFFERS:+ -x STARPU_MINIMUM_CLEAN_BUFFERS -x STARPU_TARGET_CLEAN_BUFFERS}${CUDA_MPS_PIPE_DIRECTORY:+ -x CUDA_MPS_PIPE_DIRECTORY}"
nvidia-smi --query-gpu=name --format=csv,noheader > "$res/gpu.txt" 2>&1
echo "GPU: $(head -n1 "$res/gpu.txt"), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
table=$res/table.tsv
[ -f "$table" ] || printf 'row\tsetting\tvalue\tunit\n' > "$table"

# dslash NAME NP ARGS...: one taskqcd dslash run (NP ranks); a row per precision with the time
# per application
dslash() {
    local name=$1${SCALING_TAG:-} np=$2
    shift 2
    local log=$res/$name.txt
    if [ "$np" -gt 1 ]; then timeout ${SCALING_TIMEOUT:-300} $mpi -np "$np" stdbuf -o0 "$tool" dslash "$@" > "$log" 2>&1
    else timeout ${SCALING_TIMEOUT:-300} stdbuf -o0 "$tool" dslash "$@" > "$log" 2>&1; fi
    [ $? -eq 0 ] || echo "$name failed: see $log"
    awk -v n="$name" '/^taskqcd dslash:/ { p = $0; sub(/.* (double|single|half) recon/, "", p); split($0, w, ", ");
                          for (i in w) if (w[i] ~ /recon/) prec = w[i] }
                      /time .* ms per application/ { for (i = 1; i <= NF; i++) if ($i == "ms") t = $(i - 1);
                          printf "%s\t%s\t%s\tms\n", n, prec, t }' "$log" >> "$table"
}

# propagator NAME NP ARGS...: the wall clock of the timed solves and the sum of their iterations' times
propagator() {
    local name=$1${SCALING_TAG:-} np=$2
    shift 2
    local log=$res/$name.txt
    # unbuffered: a run that hangs shows how far it got
    if [ "$np" -gt 1 ]; then timeout ${SCALING_TIMEOUT:-300} $mpi -np "$np" stdbuf -o0 "$tool" propagator "$@" > "$log" 2>&1
    else timeout ${SCALING_TIMEOUT:-300} stdbuf -o0 "$tool" propagator "$@" > "$log" 2>&1; fi
    [ $? -eq 0 ] || echo "$name failed: see $log"
    awk -v n="$name" '/iterations .* s, .* GFLOPS; iterations/ { for (i = 1; i <= NF; i++) if ($i == "iterations" && $(i - 1) == "GFLOPS;") it += $(i + 1) }
                      /all solves:/ { for (i = 1; i <= NF; i++) if ($i == "s,") w = $(i - 1) }
                      END { printf "%s\twall of the solves\t%s\ts\n%s\tsum of iteration times\t%.4f\ts\n", n, w, n, it }' "$log" >> "$table"
}

common="--test matpc --where cuda --niter 200 --recon 12 --prec single,half --ncpus 4"
case $part in   # the one-GPU block rows: only in these parts
    all|dslash) dims="32 64" ;;
    quick|blocks) dims=32 ;;
    big) dims=64 ;;
    *) dims= ;;
esac
for L in $dims; do
    h=$((L / 2)); q=$((L / 4))
    for op in wilson clover; do
        dslash "$op-$L-b1" 1 --dim $L $L $L $L --dslash-type $op $common
        dslash "$op-$L-b2" 1 --dim $L $L $L $L --block $L $L $L $h --dslash-type $op $common
        dslash "$op-$L-b4" 1 --dim $L $L $L $L --block $L $L $h $h --dslash-type $op $common
    done
    # two ranks on the one GPU, each half the lattice (one block each), against one rank
    dslash "wilson-$L-2ranks" 2 --dim $L $L $L $L --gridsize 1 1 1 2 --dslash-type wilson $common
done

if [ "$part" = all ] || [ "$part" = prop ]; then
prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --ncpus 15"
propagator prop-cuda-b1 1 $prop --where cuda
propagator prop-cuda-b2 1 $prop --where cuda --block 32 32 32 16
propagator prop-cuda-b4 1 $prop --where cuda --block 32 32 16 16
propagator prop-any-b1 1 $prop --where any
propagator prop-cuda-2ranks 2 --dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --ncpus 4 --where cuda --gridsize 1 1 1 2
fi

if [ "$part" = blocks ]; then
one="--dim 32 32 32 32 --weak-field 0.2 --nsrc 1 --warmup --ncpus 15 --where cuda"
propagator solve-cuda-b1 1 $one
propagator solve-cuda-b2 1 $one --block 32 32 32 16
propagator solve-cuda-b4 1 $one --block 32 32 16 16
prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --ncpus 15 --where cuda"
propagator prop-cuda-b1 1 $prop
propagator prop-cuda-b2 1 $prop --block 32 32 32 16
fi

if [ "$part" = big ]; then
# the one-source solve at 64^4 on 1, 2 and 4 blocks of the GPU (issue 34: at most 5 % slower)
one="--dim 64 64 64 64 --weak-field 0.2 --nsrc 1 --warmup --ncpus 15 --where cuda"
propagator solve-cuda-64-b1 1 $one
propagator solve-cuda-64-b2 1 $one --block 64 64 64 32
propagator solve-cuda-64-b4 1 $one --block 64 64 32 32
fi

if [ "$part" = all ] || [ "$part" = het ]; then
# the GPU alone and with 15 CPU workers: M_pc, then one solve (the propagator with one source)
for op in wilson clover; do
    dslash "$op-32-b1-cuda" 1 --dim 32 32 32 32 --dslash-type $op --test matpc --where cuda --niter 200 --recon 12 --prec single,half --ncpus 15
    dslash "$op-32-b1-any" 1 --dim 32 32 32 32 --dslash-type $op --test matpc --where any --niter 200 --recon 12 --prec single,half --ncpus 15
done
one="--dim 32 32 32 32 --weak-field 0.2 --nsrc 1 --warmup --ncpus 15"
for w in cuda any; do
    propagator solve-$w-b1 1 $one --where $w
    propagator solve-$w-b2 1 $one --where $w --block 32 32 32 16
    propagator solve-$w-b4 1 $one --where $w --block 32 32 16 16
done
fi

if [ "$part" = gpus ]; then
# every GPU of the node against one: one process driving NG GPUs (--ncuda NG, one block per
# GPU by default) and NG ranks, one per GPU (src/core/context.c gives each local rank its
# GPUs); Wilson M_pc at 32^4, 48^4, 64^4, clover at 48^4, the 48^4 solve (the propagator
# with one source: clover BiCGstab, double with single-precision reliable updates), the
# 32^4 12-source propagator (on ranks also as a split grid, NAME-split), and --where any
# (GPUs + every CPU core) at 64^4 and 32^4 and for the 48^4 solve; with 4 or more GPUs also
# two ranks driving half of them each (NAME-2xN).
# A run longer than SCALING_TIMEOUT seconds (default 300) is cut.
ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ng" -ge 1 ] || ng=1
g="--where cuda --niter 200 --recon 12 --prec single,half --ncpus 8 --test matpc"
# wilson_rows L: Wilson M_pc on one GPU, on all of them in one process, and one rank per GPU
wilson_rows() {
    local L=$1
    dslash "wilson-$L-1gpu" 1 --dim $L $L $L $L --dslash-type wilson $g --ncuda 1
    dslash "wilson-$L-${ng}gpu" 1 --dim $L $L $L $L --dslash-type wilson $g --ncuda $ng
    dslash "wilson-$L-${ng}ranks" $ng --dim $L $L $L $L --dslash-type wilson $g
    # two ranks driving half of the GPUs each (the layout of two nodes, one process per node)
    [ "$ng" -ge 4 ] && dslash "wilson-$L-2x$((ng / 2))" 2 --dim $L $L $L $L --dslash-type wilson $g
}
# the most telling rows first, so that a call cut short still has them
wilson_rows 64
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda"
propagator solve48-1gpu 1 $one --ncpus 8 --ncuda 1
propagator solve48-${ng}gpu 1 $one --ncpus 8 --ncuda $ng
propagator solve48-${ng}ranks $ng $one --ncpus 4
[ "$ng" -ge 4 ] && propagator solve48-2x$((ng / 2)) 2 $one --ncpus 4
prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --where cuda --ncpus 8"
propagator prop12-1gpu 1 $prop --ncuda 1
propagator prop12-${ng}gpu 1 $prop --ncuda $ng
wilson_rows 32
# GPUs + every CPU core (no --ncpus: StarPU's default, all cores but the application's)
any="--where any --niter 200 --recon 12 --prec single,half --test matpc --ncuda $ng"
dslash "wilson-64-${ng}gpu-any" 1 --dim 64 64 64 64 --dslash-type wilson $any
dslash "clover-48-1gpu" 1 --dim 48 48 48 48 --dslash-type clover $g --ncuda 1
dslash "clover-48-${ng}gpu" 1 --dim 48 48 48 48 --dslash-type clover $g --ncuda $ng
dslash "clover-48-${ng}ranks" $ng --dim 48 48 48 48 --dslash-type clover $g
propagator prop12-${ng}ranks $ng $prop
# the ranks as a split grid: each its own copy of the lattice and an equal share of the sources
[ "$ng" -gt 1 ] && propagator prop12-${ng}ranks-split $ng $prop --split-grid 1 1 1 $ng
wilson_rows 48
dslash "wilson-32-${ng}gpu-any" 1 --dim 32 32 32 32 --dslash-type wilson $any
propagator solve48-${ng}gpu-any 1 --dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where any --ncuda $ng
fi

if [ "$part" = weak ] || [ "$part" = huge ]; then
ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ng" -ge 1 ] || ng=1
g="--where cuda --niter 200 --recon 12 --prec single,half --ncpus 8 --test matpc"
fi

if [ "$part" = weak ]; then
# weak scaling, 32^4 per GPU: the lattice grows in t, then z, then y with the GPUs
# (1: 32^4, 2: 32^3x64, 4: 32^2x64^2, 8: 32x64^3); one process and one rank per GPU
for n in 1 2 4 8; do
    [ "$n" -le "$ng" ] || break
    case $n in 1) d="32 32 32 32";; 2) d="32 32 32 64";; 4) d="32 32 64 64";; 8) d="32 64 64 64";; esac
    dslash "weak-wilson-${n}gpu" 1 --dim $d --dslash-type wilson $g --ncuda $n
    # one GPU per rank (--ncuda 1): with more GPUs than ranks each rank would take several
    [ "$n" -gt 1 ] && dslash "weak-wilson-${n}ranks" $n --dim $d --dslash-type wilson $g --ncuda 1
    dslash "weak-clover-${n}gpu" 1 --dim $d --dslash-type clover $g --ncuda $n
done
fi

if [ "$part" = huge ]; then
# 96^3x192 (issue 31: on 4 and 8 GPUs): every GPU in one process and one rank per GPU
# (each rank makes only its part of the weak field and source); set-up is most of the time
d="96 96 96 192"
dslash "wilson-96x192-${ng}gpu" 1 --dim $d --dslash-type wilson $g --ncuda $ng --no-check
dslash "wilson-96x192-${ng}ranks" $ng --dim $d --dslash-type wilson $g --no-check
fi

echo "== scaling (commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
# (the GPU machine has no column(1)); beside each row StarPU SimGrid's prediction where
# SIMULATED (default doc/data/simulated-h200gpu.tsv, from bench/simgrid-predict.sh) has it
sim=${SIMULATED:-$top/doc/data/simulated-h200gpu.tsv}
[ -f "$sim" ] || sim=/dev/null
awk -F '\t' 'FNR == NR { if (FNR > 1) p[$1 FS $2] = $3; next }
              FNR == 1 { printf "%-26s %-22s %12s %-4s %10s %8s\n", $1, $2, $3, $4, "simulated", "error"; next }
              { k = $1 FS $2; s = (k in p) ? p[k] : ""; e = (s != "" && $3 > 0) ? sprintf("%+.1f %%", 100 * (s - $3) / $3) : ""
                printf "%-26s %-22s %12s %-4s %10s %8s\n", $1, $2, $3, $4, s, e }' "$sim" "$table"
