#!/usr/bin/env bash
# Peer mode across ranks (core/peer.h: one GPU per rank of one node, faces and partial sums
# through CUDA IPC) on a machine with 2+ GPUs (device tool; carry build/.libs, build/tests
# and .deps/starpu). First correctness: the operators at 16^4 on one rank per GPU against
# the plain-loop reference (every test and precision, Wilson and clover), and a one-source
# propagator on the ranks with peer mode bitwise equal to the same run through StarPU-MPI
# (TQ_PEER=0) and to one process on one GPU with the same blocks. Then speed: Wilson M_pc
# 32^4, 48^4, 64^4 (single, half), the 48^4 one-source solve and the 32^4 12-source
# propagator, one rank per GPU with and without peer mode, against one GPU.
# With `shared`: only two ranks sharing one GPU (CUDA_VISIBLE_DEVICES=0 for both: CUDA IPC
# on one device) against one rank, Wilson M_pc 32^4 and 64^4 (issue 34: at most 15 % slower).
# Usage: bash bench/rank-peer-check.sh [quick|shared]   Logs under $OUT/rankpeer/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench rankpeer
mpi="$mpi -x TQ_PEER"
export TQ_PEER=1
quick=${1:-}
ok=()
if [ "$quick" = shared ]; then
    export CUDA_VISIBLE_DEVICES=0
    c="--test matpc --where cuda --recon 12 --prec single,half --ncpus 4 --no-check --niter 200"
    for L in 32 64; do
        matpc_row w$L-1rank -- "$tool" dslash --dim $L $L $L $L $c
        matpc_row w$L-2ranks-1gpu -- $mpi -x CUDA_VISIBLE_DEVICES -np 2 "$tool" dslash --dim $L $L $L $L $c --gridsize 1 1 1 2
        matpc_row w$L-2ranks-1gpu-nopeer TQ_PEER=0 -- $mpi -x CUDA_VISIBLE_DEVICES -np 2 "$tool" dslash --dim $L $L $L $L $c --gridsize 1 1 1 2
    done
    # the same under MPS (several processes' kernels on the GPU at once), where the
    # machine has it: CUDA IPC between the ranks allowed on the shared GPU
    if command -v nvidia-cuda-mps-control > /dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/tq-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/tq-mps-log
        mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
        nvidia-cuda-mps-control -d && rows+=("MPS daemon started") || rows+=("MPS daemon did not start")
        m="$mpi -x CUDA_VISIBLE_DEVICES -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY -x TQ_PEER_SHARED_GPU"
        for L in 32 64; do
            matpc_row w$L-1rank-mps -- "$tool" dslash --dim $L $L $L $L $c
            matpc_row w$L-2ranks-1gpu-mps TQ_PEER_SHARED_GPU=1 -- $m -np 2 "$tool" dslash --dim $L $L $L $L $c --gridsize 1 1 1 2
            matpc_row w$L-2ranks-1gpu-mps-nopeer TQ_PEER=0 TQ_PEER_SHARED_GPU=0 -- $m -np 2 "$tool" dslash --dim $L $L $L $L $c --gridsize 1 1 1 2
        done
        echo quit | nvidia-cuda-mps-control
        tail -n 5 $CUDA_MPS_LOG_DIRECTORY/control.log > "$res/mps-control.log" 2>/dev/null
    else rows+=("no nvidia-cuda-mps-control here: MPS rows not run"); fi
    echo "== two ranks on one GPU ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
    printf '%s\n' "${rows[@]}"
    grep -l "peer mode: " "$res"/*.txt | sed 's|.*/|peer mode in: |'
    exit 0
fi
for t in test_peer test_solver_cuda; do   # peer mode in one process, as before
    timeout 120 "$top/build/tests/.libs/$t" > "$res/$t.log" 2>&1
    ok+=("$(printf '%-30s rc %s  %s' "$t" "$?" "$(tail -n1 "$res/$t.log")")")
done
grid="--gridsize 1 1 1 $ng"
d16="--dim 16 16 16 16 --where cuda --ncpus 4 --niter 3 --check --test all --prec all --recon 12 $grid"
dslash_check w16-${ng}ranks $mpi -np $ng "$tool" dslash $d16
dslash_check c16-${ng}ranks $mpi -np $ng "$tool" dslash $d16 --dslash-type clover
one16="--dim 16 16 16 16 --weak-field 0.2 --nsrc 1 --where cuda --ncpus 4 --json"
corr() { grep -o '"correlator": \[[^]]*\]' "$1"; }
timeout 120 $mpi -np $ng "$tool" propagator $one16 $grid > "$res/prop16-peer.json" 2>&1
TQ_PEER=0 timeout 120 $mpi -np $ng "$tool" propagator $one16 $grid > "$res/prop16-nopeer.json" 2>&1
timeout 120 "$tool" propagator $one16 --ncuda 1 --block 16 16 16 $((16 / ng)) > "$res/prop16-1gpu.json" 2>&1
a=$(corr "$res/prop16-peer.json"); b=$(corr "$res/prop16-nopeer.json"); c=$(corr "$res/prop16-1gpu.json")
same() { [ -n "$1" ] && [ "$1" = "$2" ] && echo "bitwise equal" || echo DIFFERENT; }
ok+=("$(printf '%-30s peer vs StarPU-MPI: %s; peer vs 1 GPU, same blocks: %s' prop16-${ng}ranks "$(same "$a" "$b")" "$(same "$a" "$c")")")
ok+=("$(printf '%-30s %s' iterations "$(grep -o '"iterations": [0-9]*' "$res/prop16-peer.json" | head -n1) / $(grep -o '"iterations": [0-9]*' "$res/prop16-nopeer.json" | head -n1) / $(grep -o '"iterations": [0-9]*' "$res/prop16-1gpu.json" | head -n1)")")

c="--test matpc --where cuda --recon 12 --prec single,half --ncpus 8 --no-check --niter 200"
for L in 32 48 64; do
    [ "$quick" = quick ] && [ "$L" = 64 ] && continue
    matpc_row w$L-1gpu -- "$tool" dslash --dim $L $L $L $L $c --ncuda 1
    matpc_row w$L-${ng}ranks -- $mpi -np $ng "$tool" dslash --dim $L $L $L $L $c $grid
    matpc_row w$L-${ng}ranks-nopeer TQ_PEER=0 -- $mpi -np $ng "$tool" dslash --dim $L $L $L $L $c $grid
done
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda"
solve_row solve48-1gpu -- "$tool" propagator $one --ncpus 8 --ncuda 1
solve_row solve48-${ng}ranks -- $mpi -np $ng "$tool" propagator $one --ncpus 4 $grid
solve_row solve48-${ng}ranks-nopeer TQ_PEER=0 -- $mpi -np $ng "$tool" propagator $one --ncpus 4 $grid
if [ "$quick" != quick ]; then
    prop="--dim 32 32 32 32 --weak-field 0.2 --nsrc 12 --warmup --where cuda"
    bench_row "$res" prop12-1gpu 'all solves: [0-9]* iterations, [0-9.]* s' -- "$tool" propagator $prop --ncpus 8 --ncuda 1
    bench_row "$res" prop12-${ng}ranks 'all solves: [0-9]* iterations, [0-9.]* s' -- $mpi -np $ng "$tool" propagator $prop --ncpus 4 $grid
fi
echo "== peer mode across ranks, $ng GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
printf '%s\n' "${ok[@]}"
echo "-- M_pc single, half per application; solve: its iterations; prop12: wall of the 12 solves"
printf '%s\n' "${rows[@]}"
