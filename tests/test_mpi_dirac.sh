#!/bin/sh
# Operators and solvers across ranks, bitwise: test_mpi_dirac on 1 rank, on 2 ranks (the
# default grid and a split in x) and on 4 ranks (the default grid, splits in two directions),
# all with the same global blocks (4^4 on 8x8x8x16), must write byte-identical results; each
# run also checks D psi against the plain-loop reference and that the solves converged.
# Bad distributions must fail on every rank with a message and no hang. The tool too: the
# propagator's correlator on 1 and 2 ranks (Wilson; HISQ on 4 too; and as a split grid, each
# rank its share of the sources), dslash on 2 checked. A failure on one rank (a
# NaN in its part of a solve, a gauge file it cannot read) must stop every rank with the same
# error, none left waiting. The generator on 1, 2 and 4 ranks: the same configuration,
# measurements and checkpoints. Gauge files read by parts (test_mpi_gauge_io). A multigrid
# set-up saved on 1 and 2 ranks and read on the other count. CPU workers
# only;
# ranks may outnumber the cores (--oversubscribe). Skips (77) without MPI or mpirun. Quick
# (TQ_TEST_QUICK, the sanitizer run): the rank grids 2x1x1x1 and 1x1x1x4 of test_mpi_dirac,
# the propagator's --gridsize runs and two of its three sources, the HISQ propagator on 4
# ranks and two of the five grids of the gauge reads by parts left out.
here=$(cd "$(dirname "$0")" && pwd)
builddir=${TQ_BUILDDIR:-$here/..}
prog=$builddir/tests/test_mpi_dirac
command -v mpirun >/dev/null 2>&1 || { echo "test_mpi_dirac: SKIP: no mpirun"; exit 77; }
[ -x "$prog" ] || { echo "test_mpi_dirac: SKIP: $prog not built (TaskQCD built without MPI)"; exit 77; }
unset STARPU_NCPU STARPU_NCPUS STARPU_SCHED
extra="--oversubscribe"
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME NP [ARGS...]: one run into $tmp/NAME.out; its status in $rc, its output in $tmp/NAME.log
run() {
    name=$1 np=$2
    shift 2
    timeout 600 mpirun $extra -np "$np" "$prog" "$tmp/$name.out" "$@" > "$tmp/$name.log" 2>&1
    rc=$?
    cat "$tmp/$name.log"
    [ $rc -eq 124 ] && { echo "test_mpi_dirac: FAIL: $name did not finish in 600 s (a rank left waiting?)"; fail=1; }
}

run np1 1 --procs 1 1 1 1
[ $rc -eq 0 ] || { echo "test_mpi_dirac: FAIL: one rank (exit $rc)"; exit 1; }
# np1c2: one rank, two CPU workers (its blocks' tasks spread, not chained on one worker)
quick=${TQ_TEST_QUICK:-}
[ "$quick" = 0 ] && quick=
grids='"np1c2 1 --procs 1 1 1 1 --ncpus 2" "np2 2" "np2x 2 --procs 2 1 1 1" "np4 4" "np4xt 4 --procs 2 1 1 2"'
[ -n "$quick" ] && { grids='"np1c2 1 --procs 1 1 1 1 --ncpus 2" "np2 2" "np4xt 4 --procs 2 1 1 2"'
    echo "test_mpi_dirac: quick: rank grids 2x1x1x1 and 1x1x1x4, the propagator's --gridsize runs and two of its three sources, HISQ on 4 ranks, two grids of the reads by parts left out"; }
eval "set -- $grids"
for c in "$@"; do
    set -- $c
    run "$@"
    name=$1
    if [ $rc -ne 0 ]; then echo "test_mpi_dirac: FAIL: $name (exit $rc)"; fail=1; continue; fi
    n=$(grep -c "checks, 0 failed" "$tmp/$name.log")
    [ "$n" -eq "$2" ] || { echo "test_mpi_dirac: FAIL: $name: $n of $2 ranks passed"; fail=1; continue; }
    if cmp "$tmp/np1.out" "$tmp/$name.out"; then echo "test_mpi_dirac: $name: bitwise the same as one rank"
    else echo "test_mpi_dirac: FAIL: $name differs from one rank"; fail=1; fi
done

# bad distributions: every rank names the mismatch and exits, none hangs
for c in "3 1 1 1:does not divide" "1 1 1 1:2 MPI rank(s)" "1 1 1 2:must be even and divide"; do
    grid=${c%%:*} msg=${c#*:}
    blk="4 4 4 4"
    [ "$msg" = "must be even and divide" ] && blk="4 4 4 16"
    run bad 2 --procs $grid --block $blk
    if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then echo "test_mpi_dirac: FAIL: grid $grid block $blk accepted (exit $rc)"; fail=1; continue; fi
    n=$(grep -c -- "$msg" "$tmp/bad.log")
    [ "$n" -ge 2 ] || { echo "test_mpi_dirac: FAIL: grid $grid block $blk: '$msg' from $n of 2 ranks"; fail=1; }
done
# the command-line tool under mpirun: the propagator's correlator bitwise the same on 1 and
# 2 ranks (and with a grid given), dslash checked against the reference on 2 ranks (each
# rank makes its own part of the weak field and the source)
tool=$builddir/taskqcd
props='"1:" "2:" "2:--gridsize 2 1 1 1" "4:--split-grid 1 1 1 2" "2:--split-grid 1 1 1 2"'
nsrc=3
# quick: one source (the other two repeat its solve with another spin-colour)
[ -n "$quick" ] && { props='"1:" "2:" "2:--split-grid 1 1 1 2"'; nsrc=1; }
eval "set -- $props"
for c in "$@"; do
    np=${c%%:*} grid=${c#*:}
    timeout 600 mpirun $extra -np "$np" "$tool" propagator --dim 8 8 8 16 --weak-field 0.3 --block 4 4 4 4 --nsrc $nsrc \
        --ncpus 1 --where cpu $grid > "$tmp/prop.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/prop.log"; echo "test_mpi_dirac: FAIL: propagator on $np rank(s) $grid (exit $rc)"; fail=1; continue; }
    grep -E '^ +[0-9]+  [0-9]' "$tmp/prop.log" > "$tmp/corr-$np$(echo $grid | tr -d ' -')"
    [ -s "$tmp/corr-$np$(echo $grid | tr -d ' -')" ] || { echo "test_mpi_dirac: FAIL: no correlator on $np rank(s)"; fail=1; }
done
for f in "$tmp"/corr-[24]*; do
    if cmp "$tmp/corr-1" "$f"; then echo "test_mpi_dirac: propagator correlator ${f##*/}: bitwise the same as one rank"
    else echo "test_mpi_dirac: FAIL: propagator correlator ${f##*/} differs from one rank"; fail=1; fi
done
# a split grid (each rank, or group of two ranks, its share of the sources on its own copy
# of the lattice): rank 0
# prints every source's solve; a solve that fails on one rank withholds the correlator on
# all; a split that does not match the ranks, or a --gridsize that does not fit a group, is
# refused by every rank
if [ -f "$tmp/corr-2splitgrid1112" ]; then
    grep -c '^  solve ' "$tmp/prop.log" | grep -qx "$nsrc" || { echo "test_mpi_dirac: FAIL: split grid: not $nsrc solve lines"; fail=1; }
fi
timeout 300 mpirun $extra -np 2 "$tool" propagator --dim 8 8 8 16 --weak-field 0.3 --block 4 4 4 4 --nsrc 3 --ncpus 1 \
    --where cpu --split-grid 1 1 1 2 --maxiter 2 > "$tmp/split-fail.log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "NO RESULT: 3 of 3 solves did not converge" "$tmp/split-fail.log"; then
    echo "test_mpi_dirac: split grid with unconverged solves on both ranks: no correlator, exit 1"
else cat "$tmp/split-fail.log"; echo "test_mpi_dirac: FAIL: split grid with unconverged solves (exit $rc)"; fail=1; fi
# ARGS:MESSAGE:EXIT (--gridsize is then a sub-grid's: one rank here)
for bad in "--split-grid 1 1 2 2:do not split the 2 running rank:2" "--split-grid 2 1 1 1 --gridsize 1 1 1 2:are in its group:1"; do
    args=${bad%%:*} rest=${bad#*:}
    msg=${rest%:*} want=${rest##*:}
    # shellcheck disable=SC2086
    timeout 120 mpirun $extra -np 2 "$tool" propagator --dim 8 8 8 16 --weak-field 0.3 --nsrc 1 --ncpus 1 --where cpu \
        $args > "$tmp/split-bad.log" 2>&1
    rc=$?
    n=$(grep -c -- "$msg" "$tmp/split-bad.log")
    if [ $rc -eq "$want" ] && [ "$n" -ge 2 ]; then echo "test_mpi_dirac: $args on 2 ranks: refused by both"
    else cat "$tmp/split-bad.log"; echo "test_mpi_dirac: FAIL: $args on 2 ranks (exit $rc, $n messages)"; fail=1; fi
done
# the staggered operators (issue 36): HISQ links built on every rank from the whole field,
# a multi-mass solve in mixed precision: the correlators bitwise the same on 1, 2 and 4
# ranks (the same 4 blocks)
ks="propagator --dslash-type hisq --dim 4 4 8 8 --weak-field 0.2 --block 4 4 4 4 --nsrc 1 --masses 0.1,0.3 --ncpus 1 --where cpu"
ksnp="ks2 ks4"
[ -n "$quick" ] && ksnp=ks2
# NP:ARGS:NAME; the split grid (each rank one of the two sources) against one rank's two
for c in "1::ks1" "2:--gridsize 1 1 1 2:ks2" "4:--gridsize 1 1 2 2:ks4" "1:--nsrc 2:ks1n2" \
         "2:--nsrc 2 --split-grid 1 1 1 2:ks2split" "4:--nsrc 2 --split-grid 1 1 1 2:ks4split"; do
    np=${c%%:*} rest=${c#*:}
    grid=${rest%%:*} name=${rest#*:}
    [ -n "$quick" ] && [ "$np" = 4 ] && continue
    # shellcheck disable=SC2086
    timeout 600 mpirun $extra -np "$np" "$tool" $ks $grid > "$tmp/$name.log" 2>&1
    rc=$?
    grep -E '^ +[0-9]+  [0-9]' "$tmp/$name.log" > "$tmp/$name"
    if [ $rc -ne 0 ] || [ "$(wc -l < "$tmp/$name")" -ne 16 ]; then cat "$tmp/$name.log"; echo "test_mpi_dirac: FAIL: staggered propagator $name (exit $rc)"; fail=1; fi
done
kssplit=ks2split
[ -n "$quick" ] || kssplit="ks2split ks4split"
for name in $ksnp $kssplit; do
    ref=ks1
    case $name in *split) ref=ks1n2;; esac
    if cmp -s "$tmp/$ref" "$tmp/$name"; then echo "test_mpi_dirac: HISQ propagator, two masses: $name bitwise the same as $ref (one rank)"
    else echo "test_mpi_dirac: FAIL: the HISQ propagator's correlators differ between $ref and $name"; fail=1; fi
done
# a multigrid set-up saved on one rank grid and read on another: the correlator of the run
# that made it, bitwise (the same blocks; the set-up is the same data). The two-rank run
# reads one rank's file and writes its own, which one rank then reads. A split grid of two
# ranks makes the set-up on each rank's own lattice: the same correlator again.
mg="propagator --dim 4 4 8 8 --weak-field 0.3 --block 4 4 4 4 --nsrc 1 --ncpus 1 --where cpu --inv-multigrid --mg-block-size 0 2 2 2 2 --mg-nvec 0 6"
for c in "1:--mg-save $tmp/mg1.tqmg:mg-made-1" "2:--mg-load $tmp/mg1.tqmg --mg-save $tmp/mg2.tqmg:mg-read-2" \
         "1:--mg-load $tmp/mg2.tqmg:mg-read-1" "2:--split-grid 1 1 1 2:mg-split-2"; do
    np=${c%%:*} rest=${c#*:}
    opt=${rest%%:*} name=${rest#*:}
    # shellcheck disable=SC2086
    timeout 600 mpirun $extra -np "$np" "$tool" $mg $opt > "$tmp/$name.log" 2>&1
    rc=$?
    grep -E '^ +[0-9]+  [0-9]' "$tmp/$name.log" > "$tmp/$name"
    if [ $rc -ne 0 ] || [ ! -s "$tmp/$name" ]; then cat "$tmp/$name.log"; echo "test_mpi_dirac: FAIL: propagator $opt on $np rank(s) (exit $rc)"; fail=1; fi
done
for name in mg-read-2 mg-read-1 mg-split-2; do
    if cmp -s "$tmp/mg-made-1" "$tmp/$name"; then echo "test_mpi_dirac: multigrid set-up ($name): bitwise the correlator of the run that made it"
    else echo "test_mpi_dirac: FAIL: multigrid $name: the correlator differs from the one-rank run's"; fail=1; fi
done
timeout 600 mpirun $extra -np 2 "$tool" dslash --dim 8 8 8 16 --block 4 4 8 8 --test dslash,matpc --dslash-type clover \
    --prec double --niter 2 --ncpus 1 --where cpu > "$tmp/dslash.log" 2>&1
rc=$?
n=$(grep -c "check against the reference.*(ok" "$tmp/dslash.log")
if [ $rc -ne 0 ] || [ "$n" -ne 2 ]; then cat "$tmp/dslash.log"; echo "test_mpi_dirac: FAIL: taskqcd dslash on 2 ranks (exit $rc, $n of 2 checks ok)"; fail=1
else echo "test_mpi_dirac: taskqcd dslash on 2 ranks: both checks against the reference ok"; fi

# taskqcd info shows the distribution on 2 ranks: the grid, and each block's rank
timeout 300 mpirun $extra -np 2 "$tool" info --ncpus 1 --dim 8 8 8 16 --block 4 4 8 8 --where cpu > "$tmp/info.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "ranks 1x1x1x2, local 8x8x8x8; blocks 4x4x8x8, a grid of 2x2x1x2 = 8 (4 per rank)" "$tmp/info.log" &&
   [ "$(grep -c ': rank 0, any CPU worker' "$tmp/info.log")" -eq 4 ] && [ "$(grep -c ': rank 1, its owner there' "$tmp/info.log")" -eq 4 ] &&
   grep -q "block   7 at (1,1,0,1): rank 1" "$tmp/info.log"; then
    echo "test_mpi_dirac: taskqcd info on 2 ranks: grid and blocks' ranks shown"
else cat "$tmp/info.log"; echo "test_mpi_dirac: FAIL: taskqcd info on 2 ranks (exit $rc)"; fail=1; fi

# a failure on one rank is every rank's: failing solves (a NaN in one rank's source or links,
# too few iterations) give both ranks the same status after the same iterations
run poison 2 --poison
n=$(grep -c "checks, 0 failed" "$tmp/poison.log")
[ $rc -eq 0 ] && [ "$n" -eq 2 ] || { echo "test_mpi_dirac: FAIL: failing solves on 2 ranks (exit $rc, $n of 2 ranks passed)"; fail=1; }
lines=$(grep -c "^poisoned: " "$tmp/poison.log")
same=$(grep "^poisoned: " "$tmp/poison.log" | sort | uniq -c | awk '$1 == 2' | wc -l)
if [ "$lines" -eq 12 ] && [ "$same" -eq 6 ]; then echo "test_mpi_dirac: failing solves: both ranks report the same 6 failures"
else echo "test_mpi_dirac: FAIL: failing solves: $lines lines, $same of 6 the same on both ranks"; fail=1; fi
# a gauge file that one rank cannot read (rank 1's is cut short): both ranks leave with an
# error naming it, none waits for the other
timeout 120 "$tool" generate --dim 4 4 4 8 --beta 6 --sweeps 1 --ncpus 1 --out "$tmp/g0" > "$tmp/gen.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    head -c 3000 "$tmp/g0" > "$tmp/g1"
    for cmd in "dslash --test dslash --niter 1" "propagator --nsrc 1"; do
        timeout 300 mpirun $extra -np 2 sh -c 'exec "$0" $1 --gauge "$2$OMPI_COMM_WORLD_RANK" --ncpus 1 --where cpu' \
            "$tool" "$cmd" "$tmp/g" > "$tmp/badfile.log" 2>&1
        rc=$?
        n=$(grep -c "rank 1: .*$tmp/g1" "$tmp/badfile.log")
        if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ "$n" -lt 1 ] || ! grep -q "$tmp/g1" "$tmp/badfile.log"; then
            cat "$tmp/badfile.log"
            echo "test_mpi_dirac: FAIL: taskqcd ${cmd%% *} with a file only rank 0 can read (exit $rc)"; fail=1
        else echo "test_mpi_dirac: taskqcd ${cmd%% *} with a file only rank 0 can read: both ranks stop with the error (exit $rc)"; fi
    done
    # a gauge file read by parts (each rank its sites): the same correlator as one rank's
    for c in "1:" "2:--gridsize 1 1 1 2" "2:--gridsize 2 1 1 1"; do
        np=${c%%:*} grid=${c#*:}
        [ -n "$quick" ] && [ "$grid" = "--gridsize 2 1 1 1" ] && continue
        timeout 300 mpirun $extra -np "$np" "$tool" propagator --gauge "$tmp/g0" --nsrc 2 --block 2 4 4 4 --ncpus 1 \
            --where cpu $grid > "$tmp/pg.log" 2>&1
        rc=$?
        name=pg-$np$(echo $grid | tr -d ' -')
        grep -E '^ +[0-9]+  [0-9]' "$tmp/pg.log" > "$tmp/$name"
        if [ $rc -ne 0 ] || [ ! -s "$tmp/$name" ]; then cat "$tmp/pg.log"; echo "test_mpi_dirac: FAIL: propagator --gauge on $np rank(s) $grid (exit $rc)"; fail=1
        elif [ "$np" -gt 1 ] && ! grep -q "each rank reads its part" "$tmp/pg.log"; then echo "test_mpi_dirac: FAIL: $name did not read by parts"; fail=1
        elif [ "$np" -gt 1 ]; then
            if cmp -s "$tmp/pg-1" "$tmp/$name"; then echo "test_mpi_dirac: propagator --gauge read by parts ($name): the correlator of one rank"
            else echo "test_mpi_dirac: FAIL: propagator --gauge read by parts ($name) differs from one rank"; fail=1; fi
        fi
    done
else cat "$tmp/gen.log"; echo "test_mpi_dirac: FAIL: taskqcd generate (exit $rc)"; fail=1; fi

# the generator across ranks (each holds a box of the rank grid): the same configuration
# (the written file's checksums), the same plaquette and Polyakov loop on 1, 2 and 4 ranks
# for the same blocks (4 slabs; blocks cut in every direction on grids split in x, y-z and
# x-t), the same configuration for other blocks; a checkpoint written on 2 ranks resumed
# on 4 ends where the uninterrupted run does; a grid that does not divide the lattice is
# refused by every rank; the configuration is written by parts
# gen NAME NP ARGS...: generate into $tmp/NAME.lime; its sweep lines (timings cut) in NAME.meas
gen() {
    name=$1 np=$2
    shift 2
    timeout 300 mpirun $extra -np "$np" "$tool" generate --or 2 --seed 9 --reunit-every 2 --where cpu --ncpus 1 \
        --out "$tmp/$name.lime" "$@" > "$tmp/$name.log" 2>&1
    rc=$?
    sed -n 's/, [0-9.]* s per sweep$//p' "$tmp/$name.log" | grep ' sweep ' > "$tmp/$name.meas"
    if [ $rc -ne 0 ] || ! "$tool" gauge info "$tmp/$name.lime" > "$tmp/$name.info" 2>&1; then
        cat "$tmp/$name.log"; echo "test_mpi_dirac: FAIL: generate $name on $np rank(s) (exit $rc)"; fail=1; return 1
    fi
    grep checksums "$tmp/$name.info" > "$tmp/$name.sum"
}
# same A B: B's configuration and measurements are A's
same() {
    if cmp -s "$tmp/$1.sum" "$tmp/$2.sum" && cmp -s "$tmp/$1.meas" "$tmp/$2.meas" && [ -s "$tmp/$1.meas" ]; then
        echo "test_mpi_dirac: generate $2: the configuration and measurements of $1"
    else
        echo "test_mpi_dirac: FAIL: generate $2 differs from $1:"; cat "$tmp/$1.sum" "$tmp/$2.sum"; diff "$tmp/$1.meas" "$tmp/$2.meas"; fail=1
    fi
}
# same_links A B: B's configuration is A's (other blocks: the measurements may differ in rounding)
same_links() {
    if cmp -s "$tmp/$1.sum" "$tmp/$2.sum" && [ -s "$tmp/$1.sum" ]; then
        echo "test_mpi_dirac: generate $2: the configuration of $1"
    else echo "test_mpi_dirac: FAIL: generate $2's configuration differs from $1's:"; cat "$tmp/$1.sum" "$tmp/$2.sum"; fail=1; fi
}
for np in 1 2 4; do gen gen$np $np --dim 4 4 4 8 --sweeps 3 --nslab 4; done
same gen1 gen2 && same gen1 gen4
# blocks cut in every direction (faces and the staples' edges) on rank grids split in one,
# two and three directions: the same blocks give the same bits; other blocks the same links
# (quick: the y-z grid alone)
gen cube1 1 --dim 4 4 4 8 --sweeps 3 --block 2 2 2 4 && gen cube4 4 --dim 4 4 4 8 --sweeps 3 --block 2 2 2 4 --gridsize 1 2 2 1 &&
    same cube1 cube4 && same_links gen1 cube1
if [ -z "$quick" ]; then
    gen cube2 2 --dim 4 4 4 8 --sweeps 3 --block 2 2 2 4 --gridsize 2 1 1 1 && same cube1 cube2
    gen cube4t 4 --dim 4 4 4 8 --sweeps 3 --block 2 2 2 4 --gridsize 2 1 1 2 && same cube1 cube4t
    # a time extent of 6 on 2 ranks: the default grid splits x (each rank's extents even)
    gen six1 1 --dim 4 4 4 6 --sweeps 2 --nslab 1 && gen six2 2 --dim 4 4 4 6 --sweeps 2 && same_links six1 six2
fi
# on several ranks every rank writes its sites (by parts)
if grep -q "written to .*(by parts" "$tmp/gen2.log" && grep -q "written to .*(by parts" "$tmp/gen4.log" &&
   grep -q "written to .*(by parts" "$tmp/cube4.log" && { [ -n "$quick" ] || grep -q "written to .*(by parts" "$tmp/six2.log"; }; then
    echo "test_mpi_dirac: generate: 2 and 4 ranks wrote by parts (t, x, y-z and x-t grids)"
else echo "test_mpi_dirac: FAIL: generate: not written by parts on 2 and 4 ranks"; fail=1; fi
timeout 300 mpirun $extra -np 2 "$tool" generate --dim 4 4 4 8 --sweeps 2 --or 2 --seed 9 --reunit-every 2 --nslab 4 \
    --where cpu --ncpus 1 --checkpoint "$tmp/ck" --save-every 1 > "$tmp/ck.log" 2>&1 || { cat "$tmp/ck.log"; fail=1; }
# the 2 ranks wrote each checkpoint by parts (their digests combined), and the 4 ranks that
# resume check the digest of the whole file
if [ "$(grep -c "checkpoint after sweep .*(by parts" "$tmp/ck.log")" -eq 2 ] && gen resumed 4 --sweeps 3 --resume "$tmp/ck" --nslab 4 &&
   cmp -s "$tmp/gen1.sum" "$tmp/resumed.sum"; then
    echo "test_mpi_dirac: generate: a checkpoint of 2 ranks (written by parts) resumed on 4 gives the uninterrupted configuration"
else echo "test_mpi_dirac: FAIL: generate: the resumed run's configuration differs"; cat "$tmp/resumed.sum"; fail=1; fi
timeout 300 mpirun $extra -np 4 "$tool" generate --dim 4 4 4 6 --gridsize 1 1 1 4 --where cpu --ncpus 1 > "$tmp/badgen.log" 2>&1
rc=$?
n=$(grep -c "process grid 4 does not divide dimension t = 6" "$tmp/badgen.log")
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ "$n" -ne 4 ]; then
    cat "$tmp/badgen.log"; echo "test_mpi_dirac: FAIL: generate: 6 time slices over 4 ranks in t (exit $rc, $n of 4 ranks said why)"; fail=1
else echo "test_mpi_dirac: generate: 6 time slices over 4 ranks in t refused by every rank"; fi

# gauge files read by parts: each rank reads only its sites (tests/test_mpi_gauge_io.c)
gio=$builddir/tests/test_mpi_gauge_io
for c in "1:" "2:" "2:--procs 2 1 1 1" "4:--procs 2 1 1 2" "4:--procs 1 2 1 2"; do
    np=${c%%:*} grid=${c#*:}
    [ -n "$quick" ] && case "$grid" in "--procs 2 1 1 1"|"--procs 1 2 1 2") continue ;; esac
    mkdir -p "$tmp/gio" && rm -f "$tmp/gio"/*
    timeout 300 mpirun $extra -np "$np" "$gio" "$tmp/gio" $grid > "$tmp/gio.log" 2>&1
    rc=$?
    n=$(grep -c "test_mpi_gauge_io: [0-9]* checks, 0 failed" "$tmp/gio.log")
    if [ $rc -ne 0 ] || [ "$n" -ne "$np" ]; then
        cat "$tmp/gio.log"; echo "test_mpi_dirac: FAIL: gauge files by parts on $np rank(s) $grid (exit $rc)"; fail=1
    else echo "test_mpi_dirac: gauge files by parts on $np rank(s) $grid: each rank's part as the whole-file reader's"; fi
done

[ $fail -eq 0 ] && echo "test_mpi_dirac: all runs bitwise the same, bad grids refused, failures seen by every rank"
exit $fail
