#!/usr/bin/env bash
# Peer faces and peer partial sums (core/stencil.h, src/blas/blas.c, codelets/face_sync.h) on a machine with 2+ GPUs (device tool;
# carry build/.libs, build/tests and .deps/starpu). First correctness: the operators at
# 16^4 on all GPUs against the plain-loop reference (every test, precision, Wilson and
# clover, one block per GPU and two), a one-source propagator with peer faces bitwise
# equal to the same run with StarPU's handles (TQ_PEER=0), and the owner and
# CUDA solver tests with every GPU visible (test_peer first). Then speed: Wilson M_pc 32^4, 48^4, 64^4 and
# clover 48^4 (single, half) and the 48^4 one-source solve, on one GPU and on all of them
# with and without peer faces. Usage: bash bench/peer-faces-check.sh [quick]
# Logs under $OUT/peer/, a table last.
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench peer
quick=${1:-}
ok=()
d16="--dim 16 16 16 16 --where cuda --ncpus 4 --niter 3 --check --test all --prec all --recon 12"
dslash_check w16-${ng}gpu "$tool" dslash $d16 --ncuda $ng
dslash_check c16-${ng}gpu "$tool" dslash $d16 --dslash-type clover --ncuda $ng
dslash_check w16-${ng}gpu-2perGPU "$tool" dslash $d16 --ncuda $ng --block 16 16 16 $((16 / (2 * ng)))
one16="--dim 16 16 16 16 --weak-field 0.2 --nsrc 1 --where cuda --ncpus 4 --json --ncuda $ng"
timeout 120 "$tool" propagator $one16 > "$res/prop16-peer.json" 2>&1
rc1=$?
TQ_PEER=0 timeout 120 "$tool" propagator $one16 > "$res/prop16-nopeer.json" 2>&1
rc2=$?
a=$(grep -o '"correlator": \[[^]]*\]' "$res/prop16-peer.json")
b=$(grep -o '"correlator": \[[^]]*\]' "$res/prop16-nopeer.json")
same=$([ -n "$a" ] && [ "$a" = "$b" ] && echo "bitwise equal" || echo "DIFFERENT")
ok+=("$(printf '%-30s rc %s/%s correlator peer vs handles: %s' prop16-${ng}gpu "$rc1" "$rc2" "$same")")
same_as() {   # NAME FILE: the correlator of FILE against the handles' run
    local c
    c=$(grep -o '"correlator": \[[^]]*\]' "$2")
    ok+=("$(printf '%-30s correlator vs handles: %s' "$1" "$([ -n "$c" ] && [ "$c" = "$b" ] && echo "bitwise equal" || echo DIFFERENT)")")
}
TQ_TASK_LOG=$res/tasks16-peer.tsv timeout 120 "$tool" propagator $one16 > "$res/prop16-log.json" 2>&1
same_as prop16-task-log "$res/prop16-log.json"
TQ_TASK_LOG=$res/tasks16-nopeer.tsv TQ_PEER=0 timeout 120 "$tool" propagator $one16 > /dev/null 2>&1
b4=$(TQ_PEER=0 timeout 120 "$tool" propagator $one16 --block 16 16 16 $((16 / (2 * ng))) 2>&1 | grep -o '"correlator": \[[^]]*\]')
p4=$(timeout 120 "$tool" propagator $one16 --block 16 16 16 $((16 / (2 * ng))) 2>&1 | grep -o '"correlator": \[[^]]*\]')
ok+=("$(printf '%-30s correlator peer vs handles: %s' prop16-2perGPU "$([ -n "$p4" ] && [ "$p4" = "$b4" ] && echo "bitwise equal" || echo DIFFERENT)")")

c="--test matpc --where cuda --recon 12 --prec single,half --ncpus 8 --no-check --niter 200"
m() { matpc_row "$@"; }
s() { solve_row "$@"; }
m w32-1gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda 1
m w32-${ng}gpu -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w32-${ng}gpu-nopeer TQ_PEER=0 -- "$tool" dslash --dim 32 32 32 32 $c --ncuda $ng
m w48-1gpu -- "$tool" dslash --dim 48 48 48 48 $c --ncuda 1
m w48-${ng}gpu -- "$tool" dslash --dim 48 48 48 48 $c --ncuda $ng
m w48-${ng}gpu-nopeer TQ_PEER=0 -- "$tool" dslash --dim 48 48 48 48 $c --ncuda $ng
one="--dim 48 48 48 48 --weak-field 0.2 --nsrc 1 --warmup --where cuda --ncpus 8"
s solve48-1gpu -- "$tool" propagator $one --ncuda 1
s solve48-${ng}gpu -- "$tool" propagator $one --ncuda $ng
s solve48-${ng}gpu-nopeer TQ_PEER=0 -- "$tool" propagator $one --ncuda $ng
if [ "$quick" != quick ]; then
    m w64-1gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda 1
    m w64-${ng}gpu -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
    m w64-${ng}gpu-nopeer TQ_PEER=0 -- "$tool" dslash --dim 64 64 64 64 $c --ncuda $ng
    m c48-1gpu -- "$tool" dslash --dim 48 48 48 48 --dslash-type clover $c --ncuda 1
    m c48-${ng}gpu -- "$tool" dslash --dim 48 48 48 48 --dslash-type clover $c --ncuda $ng
    m c48-${ng}gpu-nopeer TQ_PEER=0 -- "$tool" dslash --dim 48 48 48 48 --dslash-type clover $c --ncuda $ng
    for t in test_peer test_owner test_solver_cuda test_dslash_cuda; do
        timeout 200 "$top/build/tests/.libs/$t" > "$res/$t.log" 2>&1
        ok+=("$(printf '%-30s rc %s  %s' "$t" "$?" "$(tail -n1 "$res/$t.log")")")
    done
fi
echo "== peer faces, $ng GPUs ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
printf '%s\n' "${ok[@]}"
echo "-- M_pc single, half per application; solve: its iterations"
printf '%s\n' "${rows[@]}"
