#!/usr/bin/env bash
# A chain task per owner (tasks/submit.c: each GPU's tasks between faces and reductions go
# as one task) against one task per kernel (TQ_CHAIN=0, the behaviour before them for
# blocks on several GPUs), on a machine with 2+ GPUs (device tool; carry build/.libs and
# .deps/starpu): Wilson M_pc single/half r12 at 32^4 and 64^4 on one GPU and on all of them
# in one process, clover M_pc at 48^4, the 48^4 clover solve (BiCGstab double with
# single-precision reliable updates; one GPU also without its fused iteration,
# TQ_SOLVER_FUSE=0, the form several blocks use; two GPUs also with one copy of the solver's
# scalars, TQ_SCALAR_REPLICAS=0, and with one set of faces, TQ_FACE_SETS=1), the 32^4
# 12-source propagator, and one rank per GPU (also with one set of faces and one task per
# kernel). Usage: bash bench/owner-chains-check.sh     Logs under $OUT/chains/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench chains
c="--test matpc --where cuda --recon 12 --prec single,half --ncpus 8 --no-check --niter 200"
m() { matpc_row "$@"; }          # M_pc single, half
s() { solve_row "$@"; }          # solve iterations
p() { local name=$1; shift; bench_row "$res" "$name" 'all solves: [0-9]* iterations, [0-9.]* s' "$@"; }
m w64-1gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda 1
m w64-${ng}gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
m w64-${ng}gpu-nochain TQ_CHAIN=0 -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda --ncpus 8"
s solve48-1gpu -- "$tool" propagator $one --ncuda 1
s solve48-1gpu-nofuse TQ_SOLVER_FUSE=0 -- "$tool" propagator $one --ncuda 1
s solve48-${ng}gpu -- "$tool" propagator $one --ncuda $ng
s solve48-${ng}gpu-nochain TQ_CHAIN=0 -- "$tool" propagator $one --ncuda $ng
s solve48-${ng}gpu-onecopy TQ_SCALAR_REPLICAS=0 -- "$tool" propagator $one --ncuda $ng
s solve48-${ng}gpu-oneset TQ_FACE_SETS=1 -- "$tool" propagator $one --ncuda $ng
m w32-1gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda 1
m w32-${ng}gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w32-${ng}gpu-nochain TQ_CHAIN=0 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m c48-1gpu -- "$tool" dslash --dim 48 48 48 48 --dslash-type clover $c --ncuda 1
m c48-${ng}gpu -- "$tool" dslash --dim 48 48 48 48 --dslash-type clover $c --ncuda $ng
prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --where cuda --ncpus 8"
p prop12-1gpu -- "$tool" propagator $prop --ncuda 1
p prop12-${ng}gpu -- "$tool" propagator $prop --ncuda $ng
s solve48-${ng}ranks -- $mpi -np $ng "$tool" propagator ${one/--ncpus 8/--ncpus 4}
m w64-${ng}ranks -- $mpi -np $ng "$tool" dslash --dim 64 64 64 64 ${c/--ncpus 8/--ncpus 4}
m w64-${ng}ranks-oneset -- $mpi -x TQ_FACE_SETS=1 -np $ng "$tool" dslash --dim 64 64 64 64 ${c/--ncpus 8/--ncpus 4}
m w64-${ng}ranks-nochain -- $mpi -x TQ_CHAIN=0 -np $ng "$tool" dslash --dim 64 64 64 64 ${c/--ncpus 8/--ncpus 4}
echo "== chains per owner, $ng GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)); M_pc single, half per application; solve: its iterations"
printf '%s\n' "${rows[@]}"
