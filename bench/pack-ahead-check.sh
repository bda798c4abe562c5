#!/usr/bin/env bash
# Packing ahead (core/stencil.h, TQ_STENCIL_PACK_NEXT: M_pc's first hop's exterior packs
# the second hop's faces) on every GPU of the node (device tool; carry build/.libs,
# build/tests/.libs and .deps/starpu):
#   - tests: test_pack_ahead, test_peer (PACK_CHECK_REPEAT times, default 3, and once with
#     TQ_PACK_AHEAD=0), test_solver_cuda, test_dslash_cuda, test_clover_cuda and
#     tests/test_mpi_gpu.sh (two ranks in peer mode through CUDA IPC);
#   - Wilson M_pc (single and half, recon 12) at L^4 for L in EXTENTS (default 32 48 64) on one
#     GPU, then on every GPU in one process and as one rank per GPU with TQ_PACK_AHEAD=0 and
#     1 in turn, twice; clover 32^4 the same.
# Logs under $OUT/packahead/, a table last. Usage: bash bench/pack-ahead-check.sh
# (PACK_CHECK_TESTS=0: the timings only; PACK_CHECK_CLOVER=0: without the clover rows)
set -u
source "$(dirname "$0")/device-env.sh"
multigpu_bench packahead
ok=()
test_row() {   # test_row NAME VAR=VALUE... -- COMMAND...
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout 300 "$@" > "$res/$name.txt" 2>&1
    ok+=("$(printf '%-26s rc %-4s %s' "$name" "$?" "$(grep -v '^ *$' "$res/$name.txt" | tail -n1 | cut -c1-100)")")
}
t=$top/build/tests/.libs
[ "${PACK_CHECK_TESTS:-1}" = 0 ] || {
test_row test_pack_ahead -- "$t/test_pack_ahead"
for i in $(seq 1 "${PACK_CHECK_REPEAT:-3}"); do test_row "test_peer-$i" -- "$t/test_peer"; done
test_row test_peer-noahead TQ_PACK_AHEAD=0 -- "$t/test_peer"
for name in test_solver_cuda test_dslash_cuda test_clover_cuda; do test_row "$name" -- "$t/$name"; done
test_row test_mpi_gpu.sh TQ_BUILDDIR="$top/build" TQ_CLI="$top/build/.libs/taskqcd" -- sh "$top/tests/test_mpi_gpu.sh"
}

common="--test matpc --prec single,half --recon 12 --where cuda --ncpus 4 --niter ${NITER:-500} --no-check"
for tag in ${EXTENTS:-32 48 64}; do
    dims="$tag $tag $tag $tag"
    matpc_row "w$tag-1gpu" -- "$tool" dslash --dim $dims $common --ncuda 1
    for rep in 1 2; do
        for a in 0 1; do
            matpc_row "w$tag-${ng}gpu-ahead$a-$rep" TQ_PACK_AHEAD=$a -- "$tool" dslash --dim $dims $common --ncuda "$ng"
            matpc_row "w$tag-${ng}rank-ahead$a-$rep" -- $mpi -x TQ_PACK_AHEAD=$a -np "$ng" "$tool" dslash --dim $dims $common --ncuda 1
        done
    done
done
[ "${PACK_CHECK_CLOVER:-1}" = 0 ] || matpc_row "c32-1gpu" -- "$tool" dslash --dim 32 32 32 32 $common --dslash-type clover --ncuda 1
for a in $([ "${PACK_CHECK_CLOVER:-1}" = 0 ] || echo 0 1 0 1); do
    matpc_row "c32-${ng}gpu-ahead$a" TQ_PACK_AHEAD=$a -- "$tool" dslash --dim 32 32 32 32 $common --dslash-type clover --ncuda "$ng"
done
echo "== packing ahead ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1) x $ng, commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'))"
printf '%s\n' "${ok[@]}"
echo "M_pc, ms per application (single, half)"
printf '%s\n' "${rows[@]}"
