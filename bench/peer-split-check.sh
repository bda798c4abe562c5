#!/usr/bin/env bash
# Split epilogues (the solvers' fused iteration on blocks with faces) in peer mode (device
# tool; carry build/.libs, build/tests/.libs and .deps/starpu). On 2 x H200 (2026-11-29, at
# 5a5818e) test_solver_cuda stopped with "a solver has waited 60 s for the task that writes
# its scalars" after its one-block-per-GPU solves had passed. This runs what can show where:
#   - with two or more GPUs: test_solver_cuda unbuffered (the last line names the case), the
#     same with TQ_SPLIT_FUSE=0, then one-source BiCGstab solves (reliable updates) of a
#     small weak field on one and on four blocks per GPU, each way; one that hangs again
#     under bench/hang-probe.sh with each flush's chain runs on stderr (TQ_CHAIN_TRACE=1) and
#     every thread's stack; each against the same blocks on one GPU (bitwise correlator);
#   - with two or more GPUs also test_peer PEER_CHECK_REPEAT times (default 10) each way:
#     split epilogues with CUDA's lazy kernel loading (CUDA_MODULE_LOADING=LAZY, the
#     driver's default), with the library's default since 2026-11-29 (EAGER, src/core/
#     context.c) and without split epilogues; each run at most 15 s (it takes 3). At d5c85d5
#     (lazy) it hung in 4 of 20 runs with split epilogues, in none of 18 without. The first
#     hang of each way again under bench/hang-probe.sh with TQ_CHAIN_TRACE=1 (the chain runs
#     of every flush on stderr, every thread's stack: a thread inside libcuda's module
#     loading would confirm the lazy-loading deadlock);
#   - on one GPU: the same solves on two ranks sharing it in peer mode (TQ_PEER_SHARED_GPU=1
#     under MPS where the machine has it), one and four blocks per rank, each against the
#     same blocks on one rank (bitwise correlator).
# A run longer than PEER_CHECK_TIMEOUT seconds (default 60) counts as hung. Logs under
# $OUT/peersplit/, a table last. Usage: bash bench/peer-split-check.sh
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench peersplit
ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
lim=${PEER_CHECK_TIMEOUT:-60}
ok=()
# run NAME VAR=VALUE... -- COMMAND...: COMMAND with the variables set (at most $lim s), its
# output in $res/NAME.txt; a row with the exit status (124: hung) and its last line
run() {
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout "$lim" stdbuf -o0 "$@" > "$res/$name.txt" 2>&1
    local rc=$?
    ok+=("$(printf '%-34s rc %-4s %s' "$name" "$rc" "$(grep -v '^ *$' "$res/$name.txt" | tail -n1 | cut -c1-110)")")
    return $rc
}
small="propagator --dim 8 8 8 16 --weak-field 0.2 --nsrc 1 --where cuda --ncpus 4 --json"
if [ "$ng" -ge 2 ]; then
    run test_solver_cuda -- "$top/build/tests/.libs/test_solver_cuda"
    run test_solver_cuda-nosplit TQ_SPLIT_FUSE=0 -- "$top/build/tests/.libs/test_solver_cuda"
    # test_peer again and again: how often it hangs, each way
    for way in "split1-lazy 1 LAZY" "split1 1 EAGER" "split0 0 EAGER"; do
        set -- $way
        hung=0 first=
        for i in $(seq 1 "${PEER_CHECK_REPEAT:-10}"); do
            CUDA_MODULE_LOADING=$3 TQ_SPLIT_FUSE=$2 timeout 15 "$top/build/tests/.libs/test_peer" > "$res/test_peer-$1-$i.txt" 2>&1
            [ $? = 124 ] && hung=$((hung + 1)) && first=${first:-$i}
        done
        ok+=("$(printf '%-34s %s' "test_peer-$1" "hung in $hung of ${PEER_CHECK_REPEAT:-10} runs (15 s each)")")
        [ -n "$first" ] && HANG_PROG="$top/build/tests/.libs/test_peer" CUDA_MODULE_LOADING=$3 TQ_SPLIT_FUSE=$2 \
            TQ_CHAIN_TRACE=1 bash "$top/bench/hang-probe.sh" 5 20 | tail -n 5 && mv "$out/hang" "$out/hang-$1" 2>/dev/null
    done
    for b in "1:8 8 8 8" "4:4 8 4 8" "4x2:8 8 8 2"; do
        n=${b%%:*}; blk=${b#*:}
        for s in 1 0; do
            # a hang again with each flush's runs on stderr and every thread's stack
            # (bench/hang-probe.sh, logs under $OUT/hang/)
            run "solve-$n-per-gpu-split$s" TQ_SPLIT_FUSE=$s -- "$tool" $small --ncuda 2 --block $blk ||
                TQ_SPLIT_FUSE=$s TQ_CHAIN_TRACE=1 bash "$top/bench/hang-probe.sh" 1 "$lim" $small --ncuda 2 --block $blk |
                    tail -n 5
            # the same blocks on one GPU: the same correlator, bitwise
            run "solve-$n-one-gpu-split$s" TQ_SPLIT_FUSE=$s -- "$tool" $small --ncuda 1 --block $blk
            a=$(grep -o '"correlator": \[[^]]*\]' "$res/solve-$n-per-gpu-split$s.txt")
            [ -n "$a" ] && [ "$a" = "$(grep -o '"correlator": \[[^]]*\]' "$res/solve-$n-one-gpu-split$s.txt")" ] &&
                ok+=("  2 GPUs = 1 GPU, bitwise") || ok+=("  2 GPUs != 1 GPU (or no correlator)")
        done
    done
else
    mpi="$mpi -x TQ_PEER -x TQ_PEER_SHARED_GPU -x TQ_SPLIT_FUSE -x TQ_CHAIN_TRACE"
    if command -v nvidia-cuda-mps-control > /dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/tq-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/tq-mps-log
        mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
        nvidia-cuda-mps-control -d && ok+=("MPS daemon started") || ok+=("MPS daemon did not start")
        mpi="$mpi -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
    fi
    for b in "1:8 8 8 8" "4:4 8 4 8" "4x2:8 8 8 2"; do
        n=${b%%:*}; blk=${b#*:}
        for s in 1 0; do
            run "solve-2ranks-$n-per-rank-split$s" TQ_PEER=1 TQ_PEER_SHARED_GPU=1 TQ_SPLIT_FUSE=$s -- \
                $mpi -np 2 "$tool" $small --gridsize 1 1 1 2 --block $blk ||
                run "solve-2ranks-$n-per-rank-split$s-trace" TQ_PEER=1 TQ_PEER_SHARED_GPU=1 TQ_SPLIT_FUSE=$s TQ_CHAIN_TRACE=1 -- \
                    $mpi -np 2 "$tool" $small --gridsize 1 1 1 2 --block $blk
            # the same blocks on one rank: the same correlator, bitwise
            run "solve-1rank-$n-split$s" TQ_SPLIT_FUSE=$s -- "$tool" $small --ncuda 1 --block $blk
            a=$(grep -o '"correlator": \[[^]]*\]' "$res/solve-2ranks-$n-per-rank-split$s.txt")
            [ -n "$a" ] && [ "$a" = "$(grep -o '"correlator": \[[^]]*\]' "$res/solve-1rank-$n-split$s.txt")" ] &&
                ok+=("  2 ranks = 1 rank, bitwise") || ok+=("  2 ranks != 1 rank (or no correlator)")
        done
    done
    command -v nvidia-cuda-mps-control > /dev/null && echo quit | nvidia-cuda-mps-control
fi
echo "== peer mode with split epilogues ($ng GPU(s), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
printf '%s\n' "${ok[@]}"
