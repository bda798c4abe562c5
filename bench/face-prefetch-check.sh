#!/usr/bin/env bash
# Faces sent on as soon as they are packed (tq_task_prefetch; by default faces of 1 MiB or
# more, TQ_FACE_PREFETCH=1 every face) against faces fetched when their exterior task
# starts (TQ_FACE_PREFETCH=0), on a machine with 2+ GPUs (device tool;
# carry build/.libs and .deps/starpu): Wilson M_pc single/half r12 at 32^4 and 64^4 on one
# GPU and on all of them in one process, the 48^4 clover solve (BiCGstab double with
# single-precision reliable updates), and 32^4 M_pc on one rank per GPU.
# Usage: bash bench/face-prefetch-check.sh     Logs under $OUT/prefetch/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench prefetch
c="--test matpc --where cuda --recon 12 --prec single,half --ncpus 8 --no-check --niter 100"
m() { matpc_row "$@"; }          # M_pc single, half
s() { solve_row "$@"; }          # solve iterations
m w32-1gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda 1
m w32-${ng}gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w32-${ng}gpu-noprefetch TQ_FACE_PREFETCH=0 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w32-${ng}gpu-allprefetch TQ_FACE_PREFETCH=1 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w64-1gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda 1
m w64-${ng}gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
m w64-${ng}gpu-noprefetch TQ_FACE_PREFETCH=0 -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda --ncpus 8"
s solve48-${ng}gpu -- "$tool" propagator $one --ncuda $ng
s solve48-${ng}gpu-noprefetch TQ_FACE_PREFETCH=0 -- "$tool" propagator $one --ncuda $ng
m w32-${ng}ranks -- $mpi -np $ng "$tool" dslash --dim 32 32 32 32 ${c/--ncpus 8/--ncpus 4}
m w32-${ng}ranks-noprefetch -- $mpi -x TQ_FACE_PREFETCH=0 -np $ng "$tool" dslash --dim 32 32 32 32 ${c/--ncpus 8/--ncpus 4}
echo "== face prefetch, $ng GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)); M_pc single, half per application; solve: its iterations"
printf '%s\n' "${rows[@]}"
