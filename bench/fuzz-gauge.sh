#!/usr/bin/env bash
# The long fuzzing run of the gauge-file readers (make check runs a short one of the same
# program, tests/fuzz_gauge): RUNS mutants for each target (MILC; SciDAC, ILDG, NERSC 3x3 and
# NERSC two-row, each in single and double precision), the targets run JOBS at a time.
# With --asan the readers (src/io) and the fuzzer are compiled again with AddressSanitizer
# and UBSan, so that a read out of bounds that does not crash is caught as well (slower:
# about 3x here). Failing mutants are kept in build/fuzz-gauge-SEED/ for reproduction:
#   build/tests/fuzz_gauge --format TARGET --seed SEED --only INDEX --keep DIR
# Usage: bash bench/fuzz-gauge.sh [--asan] [RUNS [SEED]]
#        (defaults: 1000000 runs, seed = today's date as YYYYMMDD; JOBS defaults to nproc)
# Prints the commit, the command, each target's summary and the total; exit 1 on a failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
asan=0
if [ "${1:-}" = "--asan" ]; then asan=1; shift; fi
runs=${1:-1000000}
seed=${2:-$(date -u +%Y%m%d)}
jobs=${JOBS:-$(nproc)}
[ -f "$build/Makefile" ] || { echo "fuzz-gauge: configure first (bash scripts/build --without-cuda)"; exit 2; }

make -C "$build" -s tests/fuzz_gauge > /dev/null || exit 2
fuzz=$build/tests/fuzz_gauge
if [ "$asan" = 1 ]; then
    # The instrumented readers come first on the link line, so they are the ones called;
    # the rest of the library (observables, errors, the random field) is the built one.
    fuzz=$build/tests/fuzz_gauge_asan
    flags="-DTQ_FUZZ_LEAK_CHECK -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    (cd "$build" && ./libtool --quiet --mode=link gcc -std=c11 $flags -I. -I"$top/include" -I"$top/src" \
        -o tests/fuzz_gauge_asan "$top/tests/fuzz_gauge.c" "$top"/src/io/gauge_io*.c libtaskqcd.la -lm) || exit 2
    export ASAN_OPTIONS=detect_leaks=1:exitcode=7 UBSAN_OPTIONS=print_stacktrace=1
fi
targets=$("$fuzz" --help | sed -n 's/.*or one target://p')
[ -n "$targets" ] || { echo "fuzz-gauge: $fuzz does not run"; exit 2; }
keep=$build/fuzz-gauge-$seed
log=$build/fuzz-gauge-$seed.log
mkdir -p "$keep"
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$top" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (modified)")
{
    echo "fuzz-gauge: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit${dirty:-}, $(uname -m), $jobs jobs, asan $asan"
    echo "fuzz-gauge: $fuzz --runs $runs --seed $seed --quiet --keep $keep --format TARGET"
} | tee "$log"

start=$(date +%s)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%s\n' $targets | xargs -P "$jobs" -I{} sh -c \
    '"$1" --format "$2" --runs "$3" --seed "$4" --quiet --keep "$5" > "$6/$2.out" 2> "$6/$2.err"; echo $? > "$6/$2.rc"' \
    sh "$fuzz" {} "$runs" "$seed" "$keep" "$tmp"
rc=0
total_runs=0
for t in $targets; do
    grep -v "^fuzz_gauge: PASS\|^fuzz_gauge: FAIL$" "$tmp/$t.out" | tee -a "$log"
    if [ -s "$tmp/$t.err" ]; then head -n 20 "$tmp/$t.err" | tee -a "$log"; fi
    [ "$(cat "$tmp/$t.rc")" = 0 ] || rc=1
    n=$(awk -v t="$t" '$2 == t {print $3}' "$tmp/$t.out"); total_runs=$((total_runs + ${n:-0}))
done
secs=$(( $(date +%s) - start ))
[ "$total_runs" = "$(( runs * $(echo $targets | wc -w) ))" ] || rc=1
echo "fuzz-gauge: $total_runs runs in $secs s wall; $([ $rc = 0 ] && echo PASS || echo FAIL); log $log" | tee -a "$log"
rmdir "$keep" 2>/dev/null
exit $rc
