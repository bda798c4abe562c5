#!/bin/sh
# The `taskqcd` command-line tool: help, exit codes, info, blas, demo (plaquette through a
# StarPU gauge field), and the gauge subcommands when they work. Exit 0 pass, 1 fail,
# 77 skip (no binary).

here=$(cd "$(dirname "$0")" && pwd)
builddir=${TQ_BUILDDIR:-$here/..}
tq=${TQ_CLI:-$builddir/taskqcd}   # TQ_CLI: the binary itself (no libtool wrapper)
if [ ! -x "$tq" ]; then
    echo "test_cli: SKIP: $tq not built"
    exit 77
fi
shared=${TQ_SHARED_DATA:-$builddir/../shared/data}

# StarPU's variables would override the options under test
unset STARPU_NCPU STARPU_NCPUS STARPU_NCUDA STARPU_SCHED
STARPU_SILENT=1
export STARPU_SILENT

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# the propagator's generated default configuration is cached here, not in the user's cache
TASKQCD_CACHE=$tmp/cache
export TASKQCD_CACHE
out=$tmp/out
err=$tmp/err

checks=0
failures=0
fail() {
    failures=$((failures + 1))
    echo "FAIL: $*" >&2
}
ok() { checks=$((checks + 1)); }

# run_with PROGRAM NAME EXPECTED_RC ARGS...: runs PROGRAM, its output in $out and $err
run_with() {
    prog=$1
    name=$2
    want=$3
    shift 3
    "$prog" "$@" >"$out" 2>"$err"
    rc=$?
    ok
    if [ "$rc" -ne "$want" ]; then
        fail "$name $* exited $rc (expected $want)"
        sed 's/^/  stdout: /' "$out" >&2
        sed 's/^/  stderr: /' "$err" >&2
        return 1
    fi
    return 0
}
# run EXPECTED_RC ARGS...: runs taskqcd, stdout in $out, stderr in $err
run() { run_with "$tq" taskqcd "$@"; }

# expect FILE PATTERN WHAT: FILE has a line matching the extended regex PATTERN
expect() {
    ok
    if ! grep -E -q -- "$2" "$1"; then
        fail "$3: no line matching '$2' in"
        sed 's/^/  | /' "$1" >&2
    fi
}

# ---- help and usage errors --------------------------------------------------------------
run 0 --help && {
    for c in demo info gauge blas; do expect "$out" "^  $c " "--help lists '$c'"; done
    expect "$out" "--ncpus" "--help lists the runtime options"
}
run 0 help
run 2
expect "$err" "usage" "no command: usage on stderr"
run 2 frobnicate && expect "$err" "unknown command 'frobnicate'" "unknown command message"
run 0 --version && expect "$out" "^taskqcd [0-9]+\.[0-9]+\.[0-9]+$" "--version"
for c in demo info blas gauge; do
    run 0 $c --help && expect "$out" "usage: taskqcd $c" "$c --help"
done

# ---- info -------------------------------------------------------------------------------
run 0 info --ncpus 1 --ncuda 0 && {
    expect "$out" "workers: 1 CPU, 0 CUDA" "info --ncpus 1 --ncuda 0"
    expect "$out" "StarPU [0-9]+\.[0-9]+" "info shows the StarPU version"
}
run 0 info --ncpus 1 && expect "$out" "1 CPU" "info --ncpus 1"
run 0 info --ncpus 1 --ncuda 0 --sched eager --quiet && expect "$out" "scheduler eager" "info --sched eager"
run 2 info --ncpus abc && expect "$err" "--ncpus" "bad --ncpus value names the option"
# the distribution: 8x8x8x16 in blocks 4x8x8x8 is a 2x1x1x2 grid of blocks, each listed with
# its rank and owner; a rank grid for more ranks than run is refused with the reason
run 0 info --ncpus 1 --ncuda 0 --dim 8 8 8 16 --block 4 8 8 8 --where cpu && {
    expect "$out" "a grid of 2x1x1x2 = 4 \\(4 per rank\\)" "info --dim: the block grid"
    expect "$out" "block +3 at \\(1,0,0,1\\): rank 0, any CPU worker" "info --dim: block 3's place and owner"
    expect "$out" "peer mode: off" "info --dim: no peer mode on CPU workers"
}
run 2 info --ncpus 1 --ncuda 0 --dim 8 8 8 16 --gridsize 1 1 1 2 && expect "$err" "2 processes but 1 MPI rank" "info --gridsize for 2 ranks on 1"
run 2 info --ncpus 1 --block 4 4 4 4 && expect "$err" "need --dim" "info --block without --dim"
run 2 info --ncpus && expect "$err" "--ncpus" "missing --ncpus value"
run 2 info --bogus && expect "$err" "unknown option '--bogus'" "info: unknown option"

# ---- blas -------------------------------------------------------------------------------
if run 0 blas --dim 4 4 4 4 --niter 2 --where cpu --op axpy,norm2 --ncpus 2 --quiet; then
    expect "$out" "GB/s" "blas header"
    for op in axpy norm2; do
        ok
        n=$(awk -v op="$op" '$1 == op && $2 == "cpu" && $4 == 256 && $6 ~ /^[0-9]+(\.[0-9]+)?$/ && $5 > 0 { n++ }
                             END { print n + 0 }' "$out")
        [ "$n" -eq 1 ] || { fail "blas: expected one '$op cpu ... 256 us GB/s' row, got $n"; sed 's/^/  | /' "$out" >&2; }
    done
    ok
    rows=$(awk '$2 == "cpu" || $2 == "any" || $2 == "cuda"' "$out" | wc -l)
    [ "$rows" -eq 2 ] || fail "blas --op axpy,norm2 printed $rows rows (expected 2)"
fi
run 0 blas --dim 4 4 4 4 --niter 1 --where cpu --op copy --prec double --ncpus 1 --quiet &&
    expect "$out" "^  copy +cpu +double +256 " "blas --prec double"
run 2 blas --dim 4 4 4 --niter 2 && expect "$err" "--dim" "blas --dim with 3 extents"
run 2 blas --dim 4 4 4 0 && expect "$err" "--dim" "blas --dim with a 0"
run 2 blas --niter 0 && expect "$err" "--niter" "blas --niter 0"
run 2 blas --prec quad && expect "$err" "quad" "blas --prec quad"
run 2 blas --bogus && expect "$err" "unknown option '--bogus'" "blas unknown option"
run 1 blas --dim 5 4 4 4 --niter 1 --where cpu --quiet && expect "$err" "even" "blas on an odd lattice"

# ---- demo -------------------------------------------------------------------------------
# the plaquette of the generated configuration before and after the trip through a
# single-precision, recon-12 gauge field on StarPU handles
if run 0 demo --dim 4 4 4 4 --blas-dim 4 4 4 4 --niter 2 --ncpus 2 --quiet; then
    expect "$out" "^host: plaquette [0-9.]+" "demo prints the host plaquette"
    expect "$out" "^after import/export.*: plaquette [0-9.]+" "demo prints the plaquette after import/export"
    expect "$out" "^  norm2 +cpu " "demo times norm2 on the CPU"
    ok
    res=$(awk '
        function plaq(   i) { for (i = 1; i < NF; i++) if ($i == "plaquette") return $(i + 1); return "" }
        /^host: plaquette/ { h = plaq() }
        /^after import\/export.*plaquette/ { a = plaq() }
        END {
            if (h == "" || a == "") { print "missing"; exit }
            d = h - a; if (d < 0) d = -d
            if (h + 0 <= 0.3 || h + 0 > 1) print "implausible " h
            else if (d > 1e-6) print "differ " h " " a " " d
            else print "ok"
        }' "$out")
    [ "$res" = ok ] || { fail "demo plaquette check: $res"; sed 's/^/  | /' "$out" >&2; }
fi
# the seed decides the configuration
run 0 demo --dim 4 4 4 4 --blas-dim 4 4 4 4 --niter 1 --seed 5 --epsilon 0.3 --ncpus 1 --quiet &&
    cp "$out" "$tmp/seed5a" &&
    run 0 demo --dim 4 4 4 4 --blas-dim 4 4 4 4 --niter 1 --seed 5 --epsilon 0.3 --ncpus 1 --quiet && {
        ok
        a=$(grep '^host: plaquette' "$tmp/seed5a")
        b=$(grep '^host: plaquette' "$out")
        [ -n "$a" ] && [ "$a" = "$b" ] || fail "demo with the same seed: '$a' vs '$b'"
    }
run 2 demo --dim 4 4 && expect "$err" "usage: taskqcd demo" "demo --dim with 2 extents"
run 2 demo --niter -3
run 2 demo --prec quad
run 2 demo --frobnicate && expect "$err" "frobnicate|bad option" "demo unknown option"
run 1 demo --dim 3 4 4 4 --blas-dim 4 4 4 4 --niter 1 --quiet && expect "$err" "even" "demo on an odd lattice"

# ---- gauge (only when the readers work) -----------------------------------------------
l4=$shared/milc/lat.sample.l4444
if [ -r "$l4" ] && "$tq" gauge info "$l4" >"$tmp/ginfo" 2>&1; then
    expect "$tmp/ginfo" "^dims: +4 4 4 4" "gauge info dims"
    expect "$tmp/ginfo" "^format: +milc" "gauge info format"
    expect "$tmp/ginfo" "^plaquette: +spatial [0-9.]+" "gauge info plaquette"
    # demo --gauge: the file's plaquette, and again after the field trip
    if run 0 demo --gauge "$l4" --blas-dim 4 4 4 4 --niter 1 --ncpus 1 --quiet; then
        ok
        res=$(awk -v file="$tmp/ginfo" '
            BEGIN { while ((getline line < file) > 0) if (line ~ /^plaquette: /) { split(line, f, " "); ref = f[7] } }
            function plaq(   i) { for (i = 1; i < NF; i++) if ($i == "plaquette") return $(i + 1); return "" }
            /^host: plaquette/ { h = plaq() }
            /^after import\/export.*plaquette/ { a = plaq() }
            END {
                if (ref == "" || h == "" || a == "") { print "missing (" ref "," h "," a ")"; exit }
                d1 = h - ref; if (d1 < 0) d1 = -d1
                d2 = h - a; if (d2 < 0) d2 = -d2
                if (d1 > 1e-11) print "demo " h " vs gauge info " ref
                else if (d2 > 1e-5) print "after import/export " a " vs " h
                else print "ok"
            }' "$out")
        [ "$res" = ok ] || { fail "demo --gauge plaquette: $res"; sed 's/^/  | /' "$out" >&2; }
    fi
    # generate, then read back
    if run 0 gauge generate --dim 4 4 4 6 --type weak --seed 3 --epsilon 0.2 --out "$tmp/w.lime" --format scidac; then
        gen=$(sed -n 's/.*plaquette \([-0-9.e+]*\)$/\1/p' "$out")
        if run 0 gauge info "$tmp/w.lime"; then
            expect "$out" "^dims: +4 4 4 6" "generated file dims"
            ok
            got=$(awk '/^plaquette: / { print $7 }' "$out")
            awk -v a="$gen" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d < 1e-14) }' ||
                fail "generated plaquette '$gen' read back as '$got'"
        fi
    fi
    run 2 gauge generate --dim 4 4 4 4 --type sparkly --out "$tmp/x" && expect "$err" "sparkly" "gauge generate bad --type"
    run 1 gauge info "$tmp/does-not-exist" && expect "$err" "does-not-exist" "gauge info of a missing file"
    run 2 gauge frob && expect "$err" "frob" "unknown gauge subcommand"
else
    echo "test_cli: note: 'taskqcd gauge info' does not work yet (or no shared data); gauge parts skipped"
fi

# dslash: every operator checked against the reference (the tool exits 1 when the check fails)
for test in dslash mat matpc matpcdagmatpc; do
    run 0 dslash --dim 4 4 4 8 --block 2 4 4 4 --test "$test" --prec single --recon 12 --niter 2 --quiet &&
        expect "$out" "check against the reference:.*[(]ok" "dslash --test $test checked"
done
run 0 dslash --dim 4 4 4 4 --prec half --recon 8 --dagger --niter 1 --quiet --where cpu &&
    expect "$out" "[(]ok" "dslash half recon 8 dagger checked"
run 0 dslash --dim 4 4 4 4 --prec all --recon 18,8 --niter 1 --quiet --where cpu && {
    ok
    [ "$(grep -c "check against the reference:.*[(]ok" "$out")" = 6 ] ||
        fail "dslash --prec all --recon 18,8: expected six checked cases"
    expect "$out" "half recon 8" "dslash --prec all --recon 18,8 reaches half recon 8"
}
run 2 dslash --recon 10 && expect "$err" "recon" "dslash bad --recon"
run 2 dslash --prec double,quad && expect "$err" "quad" "dslash bad --prec list"
run 2 dslash --test frob && expect "$err" "frob" "dslash bad --test"
for test in dslash matpc; do
    for form in sym asym; do
        run 0 dslash --dim 4 4 4 8 --block 2 4 4 4 --dslash-type clover --csw 1.4 --matpc "$form" --test "$test" \
            --prec double --niter 1 --quiet --where cpu &&
            expect "$out" "^taskqcd dslash: clover" "dslash clover --matpc $form --test $test header" &&
            expect "$out" "check against the reference:.*[(]ok" "dslash clover --matpc $form --test $test checked"
    done
done
run 2 dslash --dslash-type twisted && expect "$err" "twisted" "dslash unknown --dslash-type"
run 2 dslash --dslash-type clover --matpc sideways && expect "$err" "matpc" "dslash bad --matpc"
run 2 dslash --csw abc && expect "$err" "csw" "dslash bad --csw"
run 2 dslash --kappa -1 && expect "$err" "kappa" "dslash bad kappa"
# the bare kernel (library internals) is timed by bench/bench_dslash_bare, not by the tool
run 2 dslash --bare && expect "$err" "unknown option '--bare'" "dslash --bare is not an option"
ncuda=$("$tq" info 2>/dev/null | sed -n 's/.*workers: .* \([0-9][0-9]*\) CUDA.*/\1/p' | head -n1)
bare=${TQ_BENCH_DSLASH_BARE:-$builddir/bench/bench_dslash_bare}   # the binary itself on the GPU machine
run_bare() { run_with "$bare" bench_dslash_bare "$@"; }
if [ -x "$bare" ]; then
    run_bare 2 --dim 4 4 4 4 --block 4 4 4 2 --quiet && expect "$err" "one block" "bench_dslash_bare refuses several blocks"
    run_bare 2 --prec quad && expect "$err" "--prec" "bench_dslash_bare bad --prec"
    run_bare 2 --where cpu && expect "$err" "unknown option" "bench_dslash_bare unknown option"
    run_bare 77 --dim 4 4 4 4 --niter 1 --ncuda 0 --quiet && expect "$err" "no CUDA worker" "bench_dslash_bare without a GPU"
    if [ "${ncuda:-0}" -gt 0 ]; then
        run_bare 0 --dim 8 8 8 8 --niter 2 --prec double,half --recon 18,8 --quiet && {
            [ "$(grep -c "^  bare kernel" "$out")" = 4 ] || fail "bench_dslash_bare: expected four bare-kernel lines"
            ok
            [ "$(grep -c "^  results: .*[(]same" "$out")" = 4 ] || fail "bench_dslash_bare: the two paths differ"
            ok
        }
    fi
else
    echo "test_cli: $bare not built: bench_dslash_bare not tested"
fi

# ---- propagator: the main job -----------------------------------------------------------
# correlator NAME FILE: the "correlator" array of a --json output, one value per line
correlator() { sed -n 's/.*"correlator": \[\(.*\)\].*/\1/p' "$1" | tr ',' '\n' | tr -d ' '; }
# quick (TQ_TEST_QUICK, the sanitizer run): the reference run and the runs compared with it
# solve 2 of the 12 sources ($pq): the other ten repeat the same solves' code
quick=${TQ_TEST_QUICK:-}
[ "$quick" = 0 ] && quick=
pq= nref=12
if [ -n "$quick" ]; then
    pq="--nsrc 2" nref=2
    echo "test_cli: quick: 10 of the 12 sources of the propagator runs compared with the reference left out"
fi
run 0 propagator --dim 4 4 4 8 $pq --json --quiet --where cpu && {
    cp "$out" "$tmp/prop_ref"
    ok
    n=$(grep -c '"source":' "$out")
    [ "$n" = $nref ] || fail "propagator: $n solves in the JSON (expected $nref)"
    ok
    awk 'match($0, /"true_residual": [0-9.e+-]+/) { v = substr($0, RSTART + 17, RLENGTH - 17) + 0; if (!(v <= 1e-9)) bad = 1 }
         END { exit bad }' "$out" || fail "propagator: a true residual above 1e-9"
    ok
    correlator "$out" | awk 'NR == 1 { T = 0 } { c[NR - 1] = $1 + 0; T++ }
        END { for (t = 0; t < T; t++) if (!(c[t] > 0)) exit 1
              for (t = 0; t < T / 2; t++) if (!(c[t] > c[t + 1])) exit 1 }' ||
        fail "propagator: the correlator is not positive and decaying up to T/2: $(correlator "$out" | tr '\n' ' ')"
}
# the same correlator with another block decomposition, one solve at a time, and CG:
# identical to rounding (solutions are good to 1e-10)
same_correlator() {
    ok
    paste "$tmp/prop_ref_c" "$1" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-8 * $1) bad = 1 } END { exit bad }' ||
        fail "$2: the correlator differs from the reference run"
}
correlator "$tmp/prop_ref" > "$tmp/prop_ref_c"
# the default gauge field (quenched, generated by the first run): cached, read back by later
# runs, made again when the cached file is damaged; --cache off, --weak-field; bad options
ok
ls "$tmp/cache"/quenched_4x4x4x8_b6_seed1_50sweeps_or4.lime >/dev/null 2>&1 || fail "propagator: no cached configuration in $tmp/cache"
run 0 propagator --dim 4 4 4 8 --nsrc 1 --where cpu && expect "$out" "read from the cache" "propagator reads the cached configuration"
cached=$tmp/cache/quenched_4x4x4x8_b6_seed1_50sweeps_or4.lime
if [ -f "$cached" ]; then
    dd if=/dev/zero of="$cached" bs=1 count=64 seek=100000 conv=notrunc 2>/dev/null
    run 0 propagator --dim 4 4 4 8 $pq --json --quiet --where cpu && expect "$err" "cannot be read" "propagator: damaged cache warning" &&
        correlator "$out" > "$tmp/c7" && same_correlator "$tmp/c7" "propagator after regenerating the damaged cache"
fi
run 0 propagator --dim 4 4 4 8 --nsrc 1 --cache off --where cpu && expect "$out" "generating the quenched 4x4x4x8, beta 6" "propagator --cache off"
run 0 propagator --dim 4 4 4 8 --nsrc 1 --weak-field 0.2 --where cpu && expect "$out" "gauge field: weak field, epsilon 0.2" "propagator --weak-field"
run 2 propagator --gauge "$tmp/x.lime" --beta 5.8 && expect "$err" "not with --gauge" "propagator --gauge with --beta"
run 2 propagator --dim 4 4 4 7 && expect "$err" "even" "propagator odd dimension without --gauge"
run 0 propagator --dim 4 4 4 8 $pq --block 2 4 4 4 --batch 1 --json --quiet --where cpu &&
    correlator "$out" > "$tmp/c1" && same_correlator "$tmp/c1" "propagator --block 2 4 4 4 --batch 1"
run 0 propagator --dim 4 4 4 8 $pq --inv-type cg --prec-sloppy half --json --quiet --where cpu &&
    correlator "$out" > "$tmp/c2" && same_correlator "$tmp/c2" "propagator CG with half sloppy"
run 0 propagator --dim 4 4 4 8 $pq --inv-type gcr --precond mr --prec-sloppy half --json --quiet --where cpu &&
    correlator "$out" > "$tmp/c4" && same_correlator "$tmp/c4" "propagator GCR with the MR preconditioner"
# quick: MR alone (its code runs as GCR's preconditioner above) and --warmup (twelve more
# solves of the default job) left out
if [ -z "$quick" ]; then
    run 0 propagator --dim 4 4 4 8 --inv-type mr --json --quiet --where cpu &&
        correlator "$out" > "$tmp/c5" && same_correlator "$tmp/c5" "propagator MR"
    run 0 propagator --dim 4 4 4 8 --batch 4 --warmup --json --quiet --where cpu &&
        correlator "$out" > "$tmp/c6" && same_correlator "$tmp/c6" "propagator --warmup"
else
    echo "test_cli: quick: the propagator with MR alone and with --warmup left out"
fi
# multigrid: GCR preconditioned by the two-level cycle gives plain GCR's correlator (to the
# solves' tolerance) in fewer iterations; its options refused without --inv-multigrid or with
# another solver, a set-up that does not fit the lattice refused with the reason
mg_args="--dim 4 4 4 8 --block 4 4 4 8 --weak-field 0.2 --nsrc 1 --where cpu --json --quiet"
run 0 propagator $mg_args --inv-type gcr --solve-type direct --prec-sloppy double && correlator "$out" > "$tmp/mg_ref" &&
    it_plain=$(grep -o '"iterations": [0-9]*' "$out" | head -n1 | grep -o '[0-9]*$') &&
    run 0 propagator $mg_args --inv-multigrid --mg-block-size 0 2 2 2 2 --mg-nvec 0 6 && {
    ok
    correlator "$out" > "$tmp/mg_c"
    paste "$tmp/mg_ref" "$tmp/mg_c" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-8 * $1) bad = 1 } END { exit bad }' ||
        fail "propagator --inv-multigrid: the correlator differs from plain GCR's"
    ok
    it_mg=$(grep -o '"iterations": [0-9]*' "$out" | head -n1 | grep -o '[0-9]*$')
    [ "${it_mg:-999}" -lt "${it_plain:-0}" ] || fail "propagator --inv-multigrid: $it_mg iterations, plain GCR $it_plain"
    ok
    grep -q '"multigrid": true' "$out" || fail "propagator --inv-multigrid: the JSON does not say multigrid"
    # three levels (a K-cycle): the same correlator; the JSON lists each level's lattice and
    # its GCR iterations, the coarsest level's included
    run 0 propagator $mg_args --inv-multigrid --mg-block-size 0 2 2 2 2 --mg-nvec 0 6 --mg-levels 3 \
        --mg-block-size 1 1 1 1 2 --mg-nvec 1 6 && {
        correlator "$out" > "$tmp/mg_c3"
        paste "$tmp/mg_ref" "$tmp/mg_c3" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-8 * $1) bad = 1 } END { exit bad }' &&
            ok || fail "propagator --mg-levels 3: the correlator differs from plain GCR's"
        lv='"gcr_iterations": [1-9][0-9]*, "run_by": "any[ a-zA-Z]*"}'
        grep -q "\"multigrid_levels\": \\[{\"dims\": \\[4, 4, 4, 8\\], $lv, {\"dims\": \\[2, 2, 2, 4\\], $lv, {\"dims\": \\[2, 2, 2, 2\\], $lv\\]" "$out" &&
            ok || fail "propagator --mg-levels 3: the JSON does not list three levels with their iterations: $(grep multigrid_levels "$out")"
    }
}
# a set-up saved and read back gives the same correlator, to the bit; one saved for another
# kappa is refused, naming it
mg_small="$mg_args --inv-multigrid --mg-block-size 0 2 2 2 2 --mg-nvec 0 6"
mg_table="--dim 4 4 4 8 --block 4 4 4 8 --weak-field 0.2 --nsrc 1 --inv-multigrid --mg-block-size 0 2 2 2 2 --mg-nvec 0 6"
run 0 propagator $mg_small --mg-save "$tmp/setup.tqmg" && correlator "$out" > "$tmp/mg_s1" &&
    run 0 propagator $mg_small --mg-load "$tmp/setup.tqmg" && correlator "$out" > "$tmp/mg_s2" && {
    ok
    cmp -s "$tmp/mg_s1" "$tmp/mg_s2" && [ -s "$tmp/mg_s1" ] && ok || fail "propagator --mg-load: not the correlator of the saved set-up's run"
    run 1 propagator $mg_small --kappa 0.12 --mg-load "$tmp/setup.tqmg" &&
        expect "$err" "made for another operator.*kappa 0.13" "propagator --mg-load for another kappa"
}
run 0 propagator $mg_table --where cpu --mg-load "$tmp/setup.tqmg" --mg-pre-steps 0 0 --mg-post-steps 0 6 &&
    expect "$out" "multigrid set-up: 2 levels [(]read from .*setup.tqmg[)]" "propagator --mg-load: the set-up line says where it came from" &&
    expect "$out" "level 0: .*MR 0 [+] 6 steps" "propagator --mg-pre-steps 0 0 --mg-post-steps 0 6 (with a set-up read back)" &&
    expect "$out" "solve  0 .* true residual [0-9.]*e-1[0-9]" "propagator --mg-pre-steps 0 0: the solve converges"
run 2 propagator --inv-multigrid --mg-post-steps 3 4 && expect "$err" "bad value for --mg-post-steps" "propagator --mg-post-steps level 3"
# the set-up's iteration limits, per level (--mg-setup-iters L N) or for all (N): every
# null-vector solve stops at its limit here (tolerance 5e-6), 6 vectors a level
mg3_small="$mg_small --mg-levels 3 --mg-block-size 1 1 1 1 2 --mg-nvec 1 6 --mg-verbosity 2"
run 0 propagator $mg3_small --mg-setup-iters 3 --mg-setup-iters 1 5 &&
    expect "$err" "level 0 null vectors [(]18 bicgstab iterations[)]" "propagator --mg-setup-iters 3: level 0's limit" &&
    expect "$err" "level 1 null vectors [(]30 bicgstab iterations[)]" "propagator --mg-setup-iters 1 5: level 1's limit"
run 0 propagator $mg3_small --mg-setup-iters 0 2 --mg-setup-iters 4 --mg-setup-tol 1 0.5 &&
    expect "$err" "level 0 null vectors [(]24 bicgstab iterations[)]" "propagator --mg-setup-iters 4 after a level's: every level's" &&
    expect "$err" "level 1 null vectors [(][0-9] bicgstab iterations[)]" "propagator --mg-setup-tol 1 0.5: level 1 stops at its tolerance"
run 2 propagator --inv-multigrid --mg-setup-iters 3 5 && expect "$err" "bad value for --mg-setup-iters" "propagator --mg-setup-iters level 3"
run 2 propagator --inv-multigrid --mg-setup-tol 0 2 && expect "$err" "bad value for --mg-setup-tol" "propagator --mg-setup-tol 0 2"
run 1 propagator $mg_small --mg-load "$tmp/none.tqmg" && expect "$err" "cannot open" "propagator --mg-load of a missing file"
# four sources solved three side by side (host threads): the correlator of one after another, to the bit
run 0 propagator $mg_small --nsrc 4 --mg-solves-at-once 1 && correlator "$out" > "$tmp/mg_a1" &&
    run 0 propagator $mg_small --nsrc 4 --mg-solves-at-once 3 && correlator "$out" > "$tmp/mg_a3" && {
    cmp -s "$tmp/mg_a1" "$tmp/mg_a3" && [ -s "$tmp/mg_a1" ] && ok ||
        fail "propagator --mg-solves-at-once 3: not the correlator of one solve after another"
}
run 2 propagator --inv-multigrid --mg-solves-at-once 0 && expect "$err" "bad value for --mg-solves-at-once" "propagator --mg-solves-at-once 0"
run 2 propagator --inv-multigrid --inv-type cg && expect "$err" "flexible GCR" "propagator --inv-multigrid --inv-type cg"
run 2 propagator --mg-nvec 0 6 && expect "$err" "add --inv-multigrid" "propagator --mg-nvec without --inv-multigrid"
run 2 propagator --inv-multigrid --mg-nvec 5 6 && expect "$err" "bad value for --mg-nvec" "propagator --mg-nvec level 5"
run 2 propagator --inv-multigrid --mg-nvecs 0 6 && expect "$err" "unknown option '--mg-nvecs'" "propagator misspelt --mg-nvecs"
run 1 propagator --dim 4 4 4 8 --weak-field 0.2 --nsrc 1 --where cpu --inv-multigrid &&
    expect "$err" "multigrid set-up: .*aggregate" "propagator --inv-multigrid: aggregates too large for 4x4x4x8"
run 2 propagator --precond ilu && expect "$err" "precond" "propagator bad --precond"
# the fine cycle's and the bases' precision: double on CPU workers unless asked (half where
# GPUs run the fine level: checked with the GPU runs below)
run 0 propagator $mg_table --where cpu &&
    expect "$out" "multigrid set-up: .*smoother double, null vectors double, coarse levels single" "propagator --inv-multigrid on CPU workers: precisions"
run 0 propagator $mg_table --where cpu --mg-smoother-prec half --mg-nullvec-prec single &&
    expect "$out" "multigrid set-up: .*smoother half, null vectors single" "propagator --mg-smoother-prec half --mg-nullvec-prec single"
if [ "${ncuda:-0}" -gt 0 ]; then
    run 0 propagator $mg_table --where cuda &&
        expect "$out" "multigrid set-up: .*smoother half, null vectors half" "propagator --inv-multigrid on GPUs: half precisions"
    for w in cuda any; do
        run 0 propagator --dim 4 4 4 8 $pq --json --quiet --where $w &&
            correlator "$out" > "$tmp/c3" && same_correlator "$tmp/c3" "propagator --where $w"
    done
    # no CPU workers at all: every codelet, the reductions' combine tasks included, on the GPU;
    # CG normop-pc on one block takes the fused operator reductions
    run 0 propagator --dim 4 4 4 8 $pq --json --quiet --ncpus 0 &&
        correlator "$out" > "$tmp/c3" && same_correlator "$tmp/c3" "propagator --ncpus 0"
    run 0 propagator --dim 4 4 4 8 $pq --inv-type cg --solve-type normop-pc --block 4 4 4 8 --json --quiet --where cuda &&
        correlator "$out" > "$tmp/c3" && same_correlator "$tmp/c3" "propagator CG normop-pc on one block, GPU"
    # with GPUs dmdas unless a scheduler is asked for
    if [ -z "${STARPU_SCHED:-}" ]; then
        run 0 propagator --dim 4 4 4 8 --nsrc 1 --where cuda --verbosity 1 &&
            expect "$err" "scheduler dmdas" "propagator --where cuda: default scheduler" &&
            expect "$err" "StarPU started: 4 CPU worker" "propagator --where cuda: 4 CPU workers"
        run 0 propagator --dim 4 4 4 8 --nsrc 1 --where cuda --ncpus 2 --verbosity 1 &&
            expect "$err" "StarPU started: 2 CPU worker" "propagator --where cuda --ncpus 2"
        run 0 propagator --dim 4 4 4 8 --nsrc 1 --where cuda --sched eager --verbosity 1 &&
            expect "$err" "scheduler eager" "propagator --where cuda --sched eager"
        run 0 propagator --dim 4 4 4 8 --nsrc 1 --where any --verbosity 1 &&
            expect "$err" "scheduler dmdas" "propagator --where any: default scheduler"
        run 0 propagator --dim 4 4 4 8 --nsrc 1 --where any --sched dmda --verbosity 1 &&
            expect "$err" "scheduler dmda" "propagator --where any --sched dmda"
    fi
else
    echo "test_cli: no CUDA worker: propagator on GPUs not compared (run on the GPU machine)"
fi
run 0 propagator --dim 4 4 4 8 --nsrc 2 --quiet --where cpu &&
    expect "$out" "solve  1 [(]spin 0, color 1[)]" "propagator --nsrc 2 table" &&
    expect "$out" "pion correlator" "propagator prints the correlator"
# generate: the same configuration (SciDAC checksums: the record dates differ; reunitarised
# as tasks on the way) whatever the blocks (cut in every direction: faces and edges) and the
# scheduler, on one kind of worker (CPU and
# GPU arithmetic differ in the last bits); errors before any work
kinds=cpu; [ "${ncuda:-0}" -gt 0 ] && kinds="cpu cuda"
for w in $kinds; do
    run 0 generate --dim 4 4 4 4 --sweeps 3 --or 2 --seed 9 --reunit-every 2 --nslab 1 --where $w --out "$tmp/gen1.lime" --quiet &&
        run 0 gauge info "$tmp/gen1.lime" && grep 'checksums' "$out" > "$tmp/gen1.sum"
    for opt in "--block 2 2 2 2 --sched eager" "--nslab 2 --sched dmda"; do
        run 0 generate --dim 4 4 4 4 --sweeps 3 --or 2 --seed 9 --reunit-every 2 $opt --where $w --out "$tmp/gen2.lime" --quiet &&
            run 0 gauge info "$tmp/gen2.lime" && grep 'checksums' "$out" > "$tmp/gen2.sum"
        ok
        cmp -s "$tmp/gen1.sum" "$tmp/gen2.sum" ||
            fail "generate --where $w $opt: another configuration than with 1 slab ($(cat "$tmp/gen2.sum"))"
    done
done
run 0 generate --dim 4 4 4 4 --sweeps 2 --start hot --seed 3 && expect "$out" "sweep +2: plaquette 0[.][0-9]+" "generate progress line"
run 2 generate --dim 4 4 4 5 && expect "$err" "even" "generate odd dimension"
run 1 generate --dim 4 4 4 4 --block 2 2 2 3 --quiet && expect "$err" "block extent 3 in t" "generate bad --block"
run 2 generate --beta -1 && expect "$err" "beta" "generate bad beta"
run 1 generate --dim 4 4 4 4 --out "$tmp/no/such/dir/x.lime" && expect "$err" "cannot write" "generate unwritable output"
run 2 propagator --inv-type gmres && expect "$err" "inv-type" "propagator bad --inv-type"
run 2 propagator --nsrc 13 && expect "$err" "nsrc" "propagator bad --nsrc"
run 2 propagator --tol 2 && expect "$err" "tol" "propagator bad --tol"
run 1 propagator --dim 4 4 4 8 --maxiter 2 --quiet --where cpu && expect "$err" "no convergence" "propagator reports maxiter"

# ---- propagator --dslash-type asqtad|hisq (issue 36): improved staggered fermions --------
# ks_correlator FILE MASS: the table's correlator of that mass, one value per line
ks_correlator() {
    awk -v m="$2" '/pion correlator, mass / { on = ($4 == m); next } on && /^ +[0-9]+  [0-9]/ { print $2 } on && !/^ +[0-9t]/ { on = 0 }' "$1"
}
ks_args="propagator --dslash-type asqtad --dim 4 4 4 8 --weak-field 0.2 --where cpu"
run 0 $ks_args --mass 0.1 && {
    ks_correlator "$out" 0.1 > "$tmp/ks1"
    ok
    [ "$(grep -c '^  solve [0-2] (color [0-2]), mass 0.1: ' "$out")" = 3 ] || fail "propagator asqtad: not 3 color solves"
    ok
    awk '/^  solve / { v = $0; sub(/.*true residual /, "", v); sub(/,.*/, "", v); if (!(v + 0 <= 1e-9)) bad = 1 } END { exit bad }' "$out" ||
        fail "propagator asqtad: a true residual above 1e-9"
    ok
    awk '{ if (!($1 + 0 > 0)) bad = 1; n++ } END { exit bad || n != 8 }' "$tmp/ks1" ||
        fail "propagator asqtad: the correlator is not 8 positive values: $(tr '\n' ' ' < "$tmp/ks1")"
    expect "$out" "u0 0\.[0-9]+" "propagator asqtad: u0 from the plaquette"
}
# multi-shift CG: each mass's correlator that of its own single-mass run (to the solves' 1e-10)
run 0 $ks_args --masses 0.2,0.1 && {
    ks_correlator "$out" 0.1 > "$tmp/ks2"
    ok
    [ -s "$tmp/ks2" ] && paste "$tmp/ks1" "$tmp/ks2" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-8 * $1) bad = 1 } END { exit bad }' ||
        fail "propagator asqtad --masses: mass 0.1's correlator differs from the single-mass run's"
    expect "$out" "multi-shift CG" "propagator asqtad --masses: the header says multi-shift"
}
# another block decomposition (the first run's are chosen from the worker mix): the same
# correlator to rounding (sums over blocks go in another order; solutions good to 1e-10)
same_ks_correlator() {   # FILE1 FILE2 WHAT
    ok
    [ -s "$2" ] && paste "$1" "$2" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (!(d <= 1e-8 * $1)) bad = 1 } END { exit bad }' ||
        fail "$3: the correlator differs from the default blocks' run"
}
run 0 $ks_args --mass 0.1 --block 4 4 4 4 && {
    ks_correlator "$out" 0.1 > "$tmp/ks3"
    same_ks_correlator "$tmp/ks1" "$tmp/ks3" "propagator asqtad --block 4 4 4 4"
}
# four CPU workers: the worker mix would split t into blocks of 2, thinner than the Naik
# term's reach; without --block the command keeps such a direction whole
run 0 $ks_args --mass 0.1 --ncpus 4 && {
    ks_correlator "$out" 0.1 > "$tmp/ks4"
    same_ks_correlator "$tmp/ks1" "$tmp/ks4" "propagator asqtad --ncpus 4 (blocks from the worker mix)"
}
run 2 $ks_args --mass -0.1 && expect "$err" "bad value for --mass" "propagator asqtad: negative mass"
run 2 $ks_args --masses 0.1,,0.2 && expect "$err" "bad value for --masses" "propagator asqtad: empty mass in the list"
run 2 $ks_args --kappa 0.12 && expect "$err" "does not take --kappa" "propagator asqtad with --kappa"
run 2 $ks_args --nsrc 4 && expect "$err" "nsrc above 3" "propagator asqtad --nsrc 4"
run 2 propagator --dim 4 4 4 8 --mass 0.1 && expect "$err" "for --dslash-type asqtad" "propagator --mass without asqtad"
run 1 $ks_args --block 4 4 4 2 && expect "$err" "Naik" "propagator asqtad: blocks too thin for the Naik term"
# HISQ: converged solves, a positive correlator, the same on other blocks; its options
hisq_args="propagator --dslash-type hisq --dim 4 4 4 8 --weak-field 0.2 --where cpu --mass 0.1 --naik-epsilon -0.1"
run 0 $hisq_args && {
    ks_correlator "$out" 0.1 > "$tmp/hisq1"
    ok
    awk '/^  solve / { v = $0; sub(/.*true residual /, "", v); sub(/,.*/, "", v); if (!(v + 0 <= 1e-9)) bad = 1; n++ }
         END { exit bad || n != 3 }' "$out" || fail "propagator hisq: not 3 solves with true residuals below 1e-9"
    ok
    awk '{ if (!($1 + 0 > 0)) bad = 1; n++ } END { exit bad || n != 8 }' "$tmp/hisq1" ||
        fail "propagator hisq: the correlator is not 8 positive values: $(tr '\n' ' ' < "$tmp/hisq1")"
    expect "$out" "HISQ links from the thin links, Naik epsilon -0.1" "propagator hisq: the set-up line"
    ok
    cmp -s "$tmp/hisq1" "$tmp/ks1" && fail "propagator hisq: the same correlator as asqtad's"
    run 0 $hisq_args --block 4 4 4 4 && ks_correlator "$out" 0.1 > "$tmp/hisq2" && {
        same_ks_correlator "$tmp/hisq1" "$tmp/hisq2" "propagator hisq --block 4 4 4 4"
    }
}
run 2 $hisq_args --u0 0.9 && expect "$err" "HISQ has none" "propagator hisq with --u0"
run 2 $ks_args --naik-epsilon 0.1 && expect "$err" "HISQ's" "propagator asqtad with --naik-epsilon"
run 2 propagator --dslash-type hisq --dim 4 4 4 8 --naik-epsilon 1.5 && expect "$err" "bad value for --naik-epsilon" "propagator hisq: epsilon out of range"

# ---- traces (--trace DIR): the task table, the summary, the Gantt chart and the graph ----
# every task of the table is a bar of the chart and counted once in the summary's workers
# and codelets; a folder that cannot be made is refused before the run
tr="$tmp/trace"
run 0 dslash --dim 8 8 8 8 --block 8 8 8 4 --test matpc --niter 3 --where cpu --ncpus 2 --trace "$tr" && {
    for f in tasks.tsv summary.txt gantt.svg graph.json; do
        ok; [ -s "$tr/$f" ] || fail "--trace: no $f in the trace folder"
    done
    ntab=$(grep -v '^#' "$tr/tasks.tsv" | tail -n +2 | wc -l)
    nbar=$(grep -c '^<rect x=.*<title>' "$tr/gantt.svg")
    nwork=$(awk '/^# workers/ { on = 1; getline; next } /^$/ { on = 0 } on { s += $3 } END { print s + 0 }' "$tr/summary.txt")
    ncode=$(awk '/^# codelets/ { on = 1; getline; next } /^$/ { on = 0 } on { s += $2 } END { print s + 0 }' "$tr/summary.txt")
    ok; [ "$ntab" -gt 0 ] && [ "$nbar" -eq "$ntab" ] && [ "$nwork" -eq "$ntab" ] && [ "$ncode" -eq "$ntab" ] ||
        fail "--trace: $ntab tasks in the table, $nbar bars, $nwork tasks over the workers, $ncode over the codelets"
    expect "$tr/summary.txt" "^CPU_0	cpu	[0-9]+	[0-9.]+	[0-9.]+	0\.[0-9]+" "--trace: CPU 0's busy and idle time"
    expect "$tr/summary.txt" "^tq_dslash_wilson_interior	[0-9]+	" "--trace: the interior codelet's times"
    ok; tail -n 1 "$tr/gantt.svg" | grep -q '^</svg>$' || fail "--trace: gantt.svg is not closed"
    # a build on the traced StarPU (configure --with-fxt): StarPU's own trace too, its tasks
    # those of the table
    if "$tq" info --ncpus 1 --ncuda 0 2>/dev/null | grep -q "FxT traces"; then
        for f in paje.trace tasks.rec dag.dot; do
            ok; [ -s "$tr/$f" ] || fail "--trace with FxT: no $f in the trace folder"
        done
        nrec=$(grep -E -c '^Name: tq_dslash_wilson_interior(_v[0-9]+)?$' "$tr/tasks.rec")
        ntsv=$(grep -c 'tq_dslash_wilson_interior' "$tr/tasks.tsv")
        ok; [ "$nrec" -gt 0 ] && [ "$nrec" -eq "$ntsv" ] ||
            fail "--trace with FxT: $nrec interior tasks in tasks.rec, $ntsv in tasks.tsv"
    else
        echo "test_cli: StarPU without FxT: its Paje trace not checked (configure --with-fxt)"
    fi
}
run 1 dslash --dim 8 8 8 8 --niter 1 --trace "$tmp/no/such/folder" &&
    expect "$err" "cannot make the trace folder" "--trace into a missing folder"

# ---- issue 26: unknown schedulers; single-precision files promoted to double ------------
# An unknown policy (option or STARPU_SCHED) is a usage error naming the valid ones.
run 2 info --sched nonexistent --ncpus 1 --ncuda 0 &&
    expect "$err" "'nonexistent'.*eager.*dmda" "info --sched nonexistent lists the policies"
STARPU_SCHED=nonexistent
export STARPU_SCHED
run 2 info --ncpus 1 --ncuda 0 && expect "$err" "STARPU_SCHED.*'nonexistent'.*dmda" "STARPU_SCHED=nonexistent"
run 2 blas --dim 4 4 4 4 --prec double --where cpu && expect "$err" "STARPU_SCHED.*'nonexistent'" "blas with STARPU_SCHED=nonexistent"
run 2 propagator --dim 4 4 4 8 --quiet && expect "$err" "STARPU_SCHED.*'nonexistent'" "propagator with STARPU_SCHED=nonexistent"
unset STARPU_SCHED
run 2 propagator --sched nonexistent --dim 4 4 4 8 && expect "$err" "'nonexistent'" "propagator --sched nonexistent"
# The MILC sample (single precision) written as double (reunitarised on the way) in each
# format with 8-byte reals, and back to single (MILC): every file reads with the original's
# plaquette within single precision.
# plaq FILE: the total plaquette `gauge info` prints for FILE (empty when it fails)
plaq() { "$tq" gauge info "$1" 2>"$err" | awk '/^plaquette: / { print $7 }'; }
if [ -r "$l4" ]; then
    p0=$(plaq "$l4")
    for f in nersc scidac ildg; do
        run 0 gauge convert "$l4" "$tmp/rt8.$f" --format $f --precision 8 &&
            expect "$out" "reunitari[sz]ed" "convert single -> double $f says it reunitarises"
        run 0 gauge info "$tmp/rt8.$f" && expect "$out" "^file precision: 8" "$f double file precision"
        p8=$(plaq "$tmp/rt8.$f")
        run 0 gauge convert "$tmp/rt8.$f" "$tmp/rt4.$f.milc" --format milc
        p4=$(plaq "$tmp/rt4.$f.milc")
        run 0 gauge convert "$tmp/rt8.$f" "$tmp/rt4.$f" --format $f --precision 4
        p4b=$(plaq "$tmp/rt4.$f")
        ok
        awk -v a="$p0" -v b="$p8" -v c="$p4" -v d="$p4b" 'BEGIN {
            if (a == "" || b == "" || c == "" || d == "") exit 1
            for (i = 0; i < 3; i++) { x = (i == 0 ? b : i == 1 ? c : d) - a; if (x < 0) x = -x; if (x > 1e-6) exit 1 }
        }' || fail "round trip milc -> $f double -> single: plaquettes '$p0' '$p8' '$p4' '$p4b'"
    done
    # no promotion, no reunitarisation: single to single stays bit for bit
    run 0 gauge convert "$l4" "$tmp/rt4.scidac" --format scidac && {
        ok
        grep -q "reunitari" "$out" && fail "convert single -> single reunitarised"
        [ "$(plaq "$tmp/rt4.scidac")" = "$p0" ] || fail "single -> single changed the plaquette"
    }
else
    echo "test_cli: no $l4: gauge precision round trips skipped"
fi

# ---- propagator: a solve that fails gives no result ---------------------------------------
# unconverged solutions are not physics: exit status 1, the failure said on stderr and
# stdout, no correlator rows (table) and "valid": false with a null correlator (JSON); the
# same set-up converged still prints the correlator
corr_rows() { grep -E -c '^ +[0-9]+  [0-9][.][0-9]+e[+-][0-9]+' "$1"; }
pfail="--dim 4 4 4 8 --weak-field 0.1 --nsrc 2 --quiet --where cpu"
run 1 propagator $pfail --maxiter 5 && {
    expect "$err" "2 of 2 solves did not converge: no pion correlator" "propagator --maxiter 5: stderr says why"
    expect "$out" "NO RESULT: 2 of 2 solves did not converge" "propagator --maxiter 5: stdout says so"
    expect "$out" "solve  1 .*NOT CONVERGED" "propagator --maxiter 5: the solve is marked"
    ok
    ! grep -q "pion correlator [(]" "$out" || fail "propagator --maxiter 5 printed a correlator header"
    ok
    [ "$(corr_rows "$out")" = 0 ] || { fail "propagator --maxiter 5 printed correlator rows"; sed 's/^/  | /' "$out" >&2; }
}
run 1 propagator $pfail --maxiter 5 --json && {
    expect "$out" '"valid": false' "propagator --maxiter 5 --json: invalid"
    expect "$out" '"correlator": null' "propagator --maxiter 5 --json: no correlator"
    expect "$out" '"effective_mass": null' "propagator --maxiter 5 --json: no effective mass"
    expect "$out" '"source": 1, "converged": false' "propagator --maxiter 5 --json: per-solve flag"
}
run 0 propagator $pfail --json && {
    expect "$out" '"valid": true' "propagator converged --json: valid"
    expect "$out" '"source": 1, "converged": true' "propagator converged --json: per-solve flag"
    ok
    [ "$(correlator "$out" | grep -c .)" = 8 ] || fail "propagator converged --json: not 8 correlator values"
}
run 0 propagator $pfail && {
    expect "$out" "pion correlator [(]" "propagator converged: correlator header"
    ok
    [ "$(corr_rows "$out")" = 8 ] || { fail "propagator converged: not 8 correlator rows"; sed 's/^/  | /' "$out" >&2; }
}

# ---- generate: checkpoints and resume -----------------------------------------------------
# 2 sweeps with a checkpoint (default name OUT.ckpt), resumed to 4: the same file as 4 sweeps
# in one go, byte for byte but for the creation date (NERSC, double); the reunitarisation of
# sweep 3 falls after the resume. A resume that disagrees with the checkpoint is refused
# (status 2); a checkpoint whose configuration was replaced is refused (status 1); saving
# every sweep leaves one configuration.
gopt="--dim 4 4 4 4 --beta 5.8 --seed 11 --or 1 --reunit-every 3 --where cpu --format nersc --quiet"
nodate() { LC_ALL=C sed '/^CREATION_DATE/d' "$1"; }
run 0 generate $gopt --sweeps 4 --out "$tmp/full.nersc"
run 0 generate $gopt --sweeps 2 --save-every 2 --out "$tmp/half.nersc" && {
    ok
    [ -f "$tmp/half.nersc.ckpt" ] && [ -f "$tmp/half.nersc.ckpt.sweep2" ] ||
        fail "generate --save-every 2 --out half.nersc: no half.nersc.ckpt(.sweep2): $(ls "$tmp" | tr '\n' ' ')"
}
run 0 generate --resume "$tmp/half.nersc.ckpt" --sweeps 4 --where cpu --format nersc --out "$tmp/resumed.nersc" --quiet && {
    ok
    nodate "$tmp/full.nersc" > "$tmp/full.nodate"
    nodate "$tmp/resumed.nersc" > "$tmp/resumed.nodate"
    [ -s "$tmp/full.nodate" ] && cmp -s "$tmp/full.nodate" "$tmp/resumed.nodate" ||
        fail "generate --resume at sweep 2 to 4: not the uninterrupted run's configuration"
}
ck=$tmp/half.nersc.ckpt
run 2 generate --resume "$ck" --sweeps 4 --beta 6.0 --where cpu --quiet && expect "$err" "--beta 6 disagrees" "resume with another beta"
run 2 generate --resume "$ck" --sweeps 4 --seed 12 --where cpu --quiet && expect "$err" "--seed 12 disagrees" "resume with another seed"
run 2 generate --resume "$ck" --sweeps 4 --or 4 --where cpu --quiet && expect "$err" "--or 4 disagrees" "resume with another --or"
run 2 generate --resume "$ck" --sweeps 4 --dim 4 4 4 6 --where cpu --quiet && expect "$err" "--dim 4 4 4 6 disagrees" "resume with other dims"
run 2 generate --resume "$ck" --sweeps 1 --where cpu --quiet && expect "$err" "2 sweeps done, more than --sweeps 1" "resume past --sweeps"
run 2 generate --dim 4 4 4 4 --save-every 2 && expect "$err" "--save-every needs" "--save-every without a name"
run 1 generate --resume "$tmp/no-such.ckpt" --quiet && expect "$err" "cannot read the checkpoint" "resume from a missing checkpoint"
mkdir -p "$tmp/swap" && cp "$ck" "$ck.sweep2" "$tmp/swap/" &&
    run 0 generate $gopt --seed 12 --sweeps 2 --checkpoint "$tmp/other.ckpt" && cp "$tmp/other.ckpt.sweep2" "$tmp/swap/half.nersc.ckpt.sweep2" &&
    run 1 generate --resume "$tmp/swap/half.nersc.ckpt" --sweeps 4 --where cpu --quiet &&
    expect "$err" "is not the one the checkpoint .* describes" "resume from a checkpoint with a replaced configuration"
run 0 generate $gopt --sweeps 3 --save-every 1 --checkpoint "$tmp/rot.ckpt" && {
    ok
    left=$(cd "$tmp" && ls | grep '^rot[.]ckpt' | tr '\n' ' ')
    [ "$left" = "rot.ckpt rot.ckpt.sweep3 " ] || fail "generate --save-every 1 for 3 sweeps left: $left"
    expect "$tmp/rot.ckpt" "^sweeps 3$" "the last checkpoint records 3 sweeps"
}

echo "test_cli: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
