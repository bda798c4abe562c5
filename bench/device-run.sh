#!/usr/bin/env bash
# Runs on the GPU machine (the device tool): every test binary (the CUDA ones run there
# instead of skipping), then the staggered and BLAS benchmarks; full logs under $OUT, a
# short table last.
# Prepare here with:  bash scripts/build && make -C build check TESTS= && make -C build bench
# and carry build/.libs, build/tests/.libs, build/bench/.libs, build/examples/.libs and
# .deps/starpu (all of build/ is over the 64 MiB limit).  Usage: bash bench/device-run.sh [bench_blas args]
set -u
source "$(dirname "$0")/device-env.sh"
for d in "$top/shared/data" "$top/../shared/data"; do
    [ -d "$d" ] && export TQ_SHARED_DATA="$d" && break
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "GPU: $(head -n1 "$out/gpu.txt")"

summary=()
for t in "$top"/build/tests/.libs/test_* "$top"/build/examples/.libs/solve_*; do
    name=$(basename "$t")
    [ -x "$t" ] || continue
    start=$(date +%s.%N)
    timeout 300 "$t" > "$out/$name.log" 2>&1
    rc=$?
    dur=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in 0) res=PASS ;; 77) res=SKIP ;; *) res="FAIL($rc)" ;; esac
    summary+=("$(printf '%-24s %-8s %6ss  %s' "$name" "$res" "$dur" "$(tail -n1 "$out/$name.log")")")
done

# the command-line tests (they compare the propagator on CPU and GPU workers there, and run
# bench_dslash_bare on the GPU); the binaries themselves, not the libtool wrappers of this
# machine's paths
# (test_mpi_gpu.sh: two ranks on the GPUs, peer mode across ranks through CUDA IPC)
for script in test_cli test_mpi_gpu; do
    start=$(date +%s.%N)
    TQ_BUILDDIR="$top/build" TQ_CLI="$top/build/.libs/taskqcd" TQ_BENCH_DSLASH_BARE="$top/build/bench/.libs/bench_dslash_bare" \
        timeout 600 sh "$top/tests/$script.sh" > "$out/$script.log" 2>&1
    rc=$?
    dur=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    case $rc in 0) res=PASS ;; 77) res=SKIP ;; *) res="FAIL($rc)" ;; esac
    summary+=("$(printf '%-24s %-8s %6ss  %s' $script.sh "$res" "$dur" "$(tail -n1 "$out/$script.log")")")
done

# the main job on the GPU machine
"$top/build/.libs/taskqcd" propagator > "$out/propagator.txt" 2>&1 || echo "propagator failed: see propagator.txt"
"$top/build/.libs/taskqcd" demo > "$out/demo.txt" 2>&1 || echo "demo failed: see demo.txt"

bench="$top/build/bench/.libs/bench_blas"
[ -x "$bench" ] || bench="$top/build/bench/bench_blas"
if [ -x "$bench" ]; then
    STARPU_CALIBRATE=1 "$bench" "$@" > "$out/bench_blas.txt" 2>&1 || echo "bench_blas failed: see bench_blas.txt"
fi

# the improved staggered operator and link builds (issue 36)
ksb="$top/build/bench/.libs/bench_staggered"
[ -x "$ksb" ] && { timeout 300 "$ksb" --dim 32 32 32 32 > "$out/bench_staggered.txt" 2>&1 || echo "bench_staggered failed: see bench_staggered.txt"; }

echo "== tests"
printf '%s\n' "${summary[@]}"
echo "== propagator (default job)"
grep -E "all solves|^ +[0-9]+  " "$out/propagator.txt" | head -n 6
echo "== demo (BLAS rows)"
grep -E "plaquette|cuda|any" "$out/demo.txt" | head -n 20
echo "== bench_staggered (32^4: link build and D per precision)"
grep -E "^  (double|single|half|CG|multi-shift)" "$out/bench_staggered.txt" 2>/dev/null
echo "== bench_blas"
cat "$out/bench_blas.txt" 2>/dev/null | tail -n 30
