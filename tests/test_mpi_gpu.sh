#!/bin/sh
# Peer mode across ranks (src/core/peer.h): two ranks, each driving one GPU, exchange faces
# and partial sums through CUDA IPC (on a machine with one GPU both drive it and keep to
# StarPU-MPI: the test then checks that they do, and the same results). The
# propagator's correlator on the two ranks must be bitwise the same as through StarPU-MPI
# (TQ_PEER=0) and as one rank with the same global blocks, the run must say it used peer
# mode, and dslash on the two ranks must agree with the plain-loop reference in every
# precision, Wilson and clover; the HISQ propagator's correlators likewise bitwise. With four
# GPUs, two ranks driving two GPUs each: peer mode between the four, the same bits; with two
# or more, one process driving them all, the same bits.
# Skips (77) without mpirun, MPI or a GPU (run it on the GPU machine: bench/device-run.sh).
here=$(cd "$(dirname "$0")" && pwd)
builddir=${TQ_BUILDDIR:-$here/..}
tool=${TQ_CLI:-$builddir/taskqcd}
command -v mpirun >/dev/null 2>&1 || { echo "test_mpi_gpu: SKIP: no mpirun"; exit 77; }
# (the libtool wrapper, or on the GPU machine, where only build/tests/.libs travels, the binary)
[ -x "$builddir/tests/test_mpi_dirac" ] || [ -x "$builddir/tests/.libs/test_mpi_dirac" ] || { echo "test_mpi_gpu: SKIP: TaskQCD built without MPI"; exit 77; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpu:-0}" -ge 1 ] || { echo "test_mpi_gpu: SKIP: no GPU here (run on the GPU machine)"; exit 77; }
unset STARPU_NCPU STARPU_NCPUS STARPU_SCHED
extra="--oversubscribe -x LD_LIBRARY_PATH -x TQ_PEER"
[ -n "${STARPU_HOME:-}" ] && extra="$extra -x STARPU_HOME"
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
checks=0
bad() { echo "test_mpi_gpu: FAIL: $*"; fail=1; }
good() { echo "test_mpi_gpu: $*"; checks=$((checks + 1)); }
corr() { grep -o '"correlator": \[[^]]*\]' "$1"; }

# 16x16x16x16 split in t over 2 ranks, 4 blocks per rank, one GPU each (--ncuda 1: with more
# GPUs each rank would take its share; the faces between a rank's own blocks stay StarPU
# handles on its GPU; those between ranks go through CUDA IPC)
args="--dim 16 16 16 16 --block 16 16 8 8 --weak-field 0.2 --nsrc 2 --where cuda --ncpus 2 --json"
export TQ_PEER=1
timeout 300 mpirun $extra -np 2 "$tool" propagator $args --gridsize 1 1 1 2 --ncuda 1 > "$tmp/peer.json" 2> "$tmp/peer.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/peer.err"; bad "propagator on 2 ranks (exit $rc)"; }
if [ "$ngpu" -ge 2 ]; then
    grep -q "peer mode: .* 2 ranks through CUDA IPC" "$tmp/peer.err" && good "2 ranks, 2 GPUs: peer mode across ranks in use" ||
        { cat "$tmp/peer.err"; bad "2 ranks, 2 GPUs: peer mode across ranks not in use"; }
else   # two ranks time-slicing one GPU keep to StarPU-MPI (src/core/peer.c)
    grep -q "peer mode" "$tmp/peer.err" && bad "2 ranks on one GPU: peer mode in use" || good "2 ranks on one GPU: no peer mode"
fi
TQ_PEER=0 timeout 300 mpirun $extra -np 2 "$tool" propagator $args --gridsize 1 1 1 2 --ncuda 1 > "$tmp/mpi.json" 2> "$tmp/mpi.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/mpi.err"; bad "propagator on 2 ranks through StarPU-MPI (exit $rc)"; }
grep -q "peer mode" "$tmp/mpi.err" && bad "TQ_PEER=0: peer mode still in use"
timeout 300 "$tool" propagator $args --ncuda 1 > "$tmp/one.json" 2> "$tmp/one.err" || { cat "$tmp/one.err"; bad "propagator on one rank"; }
a=$(corr "$tmp/peer.json")
[ -n "$a" ] || bad "no correlator from the 2 ranks"
[ -n "$a" ] && [ "$a" = "$(corr "$tmp/mpi.json")" ] && good "correlator through CUDA IPC bitwise the same as through StarPU-MPI" ||
    bad "correlator through CUDA IPC differs from StarPU-MPI's"
[ -n "$a" ] && [ "$a" = "$(corr "$tmp/one.json")" ] && good "correlator on 2 ranks bitwise the same as one rank with the same blocks" ||
    bad "correlator on 2 ranks differs from one rank's"
# one process driving every GPU with the same 2 x 4 blocks: faces and the solvers' split
# epilogue partials (the fused iteration on blocks with faces) between its GPUs in peer
# mode, the same bits
if [ "$ngpu" -ge 2 ]; then
    timeout 300 "$tool" propagator $args > "$tmp/gpus.json" 2> "$tmp/gpus.err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/gpus.err"; bad "propagator in one process on $ngpu GPUs (exit $rc)"; }
    [ -n "$a" ] && [ "$a" = "$(corr "$tmp/gpus.json")" ] && good "correlator on $ngpu GPUs of one process bitwise the same" ||
        bad "correlator on $ngpu GPUs of one process differs"
fi
# with 4 GPUs each of the 2 ranks drives two: four peer units (the faces between a rank's
# own GPUs and across ranks GPU to GPU), the same bits
if [ "$ngpu" -ge 4 ]; then
    timeout 300 mpirun $extra -np 2 "$tool" propagator $args --gridsize 1 1 1 2 > "$tmp/two.json" 2> "$tmp/two.err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/two.err"; bad "propagator on 2 ranks with 2 GPUs each (exit $rc)"; }
    grep -q "peer mode: .* 4 GPUs of 2 ranks through CUDA IPC" "$tmp/two.err" &&
        good "2 ranks with 2 GPUs each: peer mode between the 4 GPUs" ||
        { cat "$tmp/two.err"; bad "2 ranks with 2 GPUs each: peer mode not in use"; }
    [ -n "$a" ] && [ "$a" = "$(corr "$tmp/two.json")" ] && good "correlator on 2 ranks with 2 GPUs each bitwise the same" ||
        bad "correlator on 2 ranks with 2 GPUs each differs"
fi

# the improved staggered operator (HISQ, two masses in mixed precision) on the same 2
# ranks: its faces between the ranks go through CUDA IPC too, and the correlators are
# bitwise those through StarPU-MPI and of one rank with the same blocks
ks="propagator --dslash-type hisq --dim 8 8 8 16 --block 8 8 8 4 --weak-field 0.2 --nsrc 1 --masses 0.1,0.3 --where cuda --ncpus 2"
ks_corr() { grep -E '^ +[0-9]+  [0-9]' "$1"; }
TQ_PEER=1 timeout 300 mpirun $extra -np 2 "$tool" $ks --gridsize 1 1 1 2 --ncuda 1 > "$tmp/ks-peer.log" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/ks-peer.log"; bad "HISQ propagator on 2 ranks (exit $rc)"; }
if [ "$ngpu" -ge 2 ]; then
    grep -q "peer mode: .* 2 ranks through CUDA IPC" "$tmp/ks-peer.log" && good "HISQ, 2 ranks, 2 GPUs: peer mode across ranks in use" ||
        { cat "$tmp/ks-peer.log"; bad "HISQ, 2 ranks, 2 GPUs: peer mode across ranks not in use"; }
fi
TQ_PEER=0 timeout 300 mpirun $extra -np 2 "$tool" $ks --gridsize 1 1 1 2 --ncuda 1 > "$tmp/ks-mpi.log" 2>&1 || { cat "$tmp/ks-mpi.log"; bad "HISQ propagator on 2 ranks through StarPU-MPI"; }
timeout 300 "$tool" $ks --ncuda 1 > "$tmp/ks-one.log" 2>&1 || { cat "$tmp/ks-one.log"; bad "HISQ propagator on one rank"; }
a=$(ks_corr "$tmp/ks-peer.log")
[ "$(printf '%s\n' "$a" | grep -c .)" -eq 32 ] || bad "HISQ on 2 ranks: not 2 x 16 correlator lines"
[ -n "$a" ] && [ "$a" = "$(ks_corr "$tmp/ks-mpi.log")" ] && good "HISQ correlators through CUDA IPC bitwise the same as through StarPU-MPI" ||
    bad "HISQ correlators through CUDA IPC differ from StarPU-MPI's"
[ -n "$a" ] && [ "$a" = "$(ks_corr "$tmp/ks-one.log")" ] && good "HISQ correlators on 2 ranks bitwise the same as one rank with the same blocks" ||
    bad "HISQ correlators on 2 ranks differ from one rank's"
if [ "$ngpu" -ge 4 ]; then   # two GPUs per rank
    timeout 300 mpirun $extra -np 2 "$tool" $ks --gridsize 1 1 1 2 > "$tmp/ks-two.log" 2>&1 || { cat "$tmp/ks-two.log"; bad "HISQ propagator on 2 ranks with 2 GPUs each"; }
    [ -n "$a" ] && [ "$a" = "$(ks_corr "$tmp/ks-two.log")" ] && good "HISQ correlators on 2 ranks with 2 GPUs each bitwise the same" ||
        bad "HISQ correlators on 2 ranks with 2 GPUs each differ"
fi

# dslash on 2 ranks against the plain-loop reference, every test and precision
for op in wilson clover; do
    timeout 300 mpirun $extra -np 2 "$tool" dslash --dim 8 8 8 16 --gridsize 1 1 1 2 --dslash-type $op --where cuda \
        --ncpus 2 --niter 2 --check --test all --prec all > "$tmp/d.log" 2>&1
    rc=$?
    n_ok=$(grep -c '(ok,' "$tmp/d.log")
    n_bad=$(grep -c 'FAILED\|(failed' "$tmp/d.log")
    if [ $rc -eq 0 ] && [ "$n_ok" -ge 12 ] && [ "$n_bad" -eq 0 ]; then good "dslash $op on 2 ranks: $n_ok checks against the reference"
    else cat "$tmp/d.log"; bad "dslash $op on 2 ranks (exit $rc, $n_ok ok, $n_bad failed)"; fi
done
[ $fail -eq 0 ] || exit 1
echo "test_mpi_gpu: $checks checks, 0 failed"
