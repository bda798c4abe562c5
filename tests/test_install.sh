#!/bin/sh
# `make install` gives a self-contained installation: installed with DESTDIR into a
# temporary directory, then moved elsewhere, the `taskqcd` tool and libtaskqcd find every
# library there or in the system, none in the source or build tree (readelf, ldd), and
# `taskqcd info` runs with LD_LIBRARY_PATH unset; where a private mount namespace is
# allowed (unshare), it runs again with the source tree, the build tree and StarPU's build
# prefix hidden under empty directories. An application compiles and links against the
# installation through pkg-config. Then `make uninstall` leaves no file behind.
# Exit 0 pass, 1 fail, 77 skip.
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd -P)
builddir=$(cd "${TQ_BUILDDIR:-$src/build}" && pwd -P)
[ -f "$builddir/Makefile" ] || { echo "test_install: SKIP: no Makefile in $builddir"; exit 77; }
for t in readelf ldd; do
    command -v $t >/dev/null 2>&1 || { echo "test_install: SKIP: no $t"; exit 77; }
done
mkvar() { sed -n "s/^$1 = //p" "$builddir/Makefile" | head -n1; }
starpu_libdir=$(mkvar STARPU_LIBDIR)
starpu_real=$(cd "$starpu_libdir/.." 2>/dev/null && pwd -P)
bundled=$(mkvar install_starpu)   # configure: StarPU of .deps/starpu installed too

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*" >&2; }
# the install runs inside make check: not under its job server or its flags
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$builddir" "$@" >"$tmp/make.log" 2>&1; }

mk install DESTDIR="$tmp/stage" || { cat "$tmp/make.log"; echo "FAIL: make install"; exit 1; }
mv "$tmp/stage" "$tmp/moved"
bin=$(find "$tmp/moved" -type f -name taskqcd | head -n1)
lib=$(find "$tmp/moved" -name 'libtaskqcd.so.*' -type f | head -n1)
[ -x "$bin" ] && [ -f "$lib" ] || { find "$tmp/moved"; echo "FAIL: no taskqcd or libtaskqcd installed"; exit 1; }
libdir=$(dirname "$lib")
echo "installed: $bin, $libdir (StarPU installed too: $bundled)"

# in_tree PATH: true when PATH is in the source tree, the build tree or StarPU's build prefix
in_tree() {
    for d in "$src" "$builddir" "$starpu_real" "$starpu_libdir"; do
        [ -n "$d" ] || continue
        case "$1" in "$d" | "$d"/*) return 0 ;; esac
    done
    return 1
}

for f in "$bin" "$libdir"/*.so*; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    rp=$(readelf -d "$f" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p')
    old_ifs=$IFS; IFS=:
    for e in $rp; do in_tree "$e" && fail "$(basename "$f") searches $e (RUNPATH $rp)"; done
    IFS=$old_ifs
done

env -u LD_LIBRARY_PATH ldd "$bin" >"$tmp/ldd" 2>&1 || fail "ldd $bin"
grep -q 'not found' "$tmp/ldd" && fail "unresolved libraries: $(grep 'not found' "$tmp/ldd" | tr -d '\t')"
starpu_from=
for p in $(sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' "$tmp/ldd"); do
    p=$(readlink -f "$p")
    in_tree "$p" && fail "taskqcd loads $p"
    case "$p" in */libstarpu-1.3.so*) starpu_from=$(dirname "$p") ;; esac
done
if [ "$bundled" = yes ] && [ "$starpu_from" != "$(cd "$libdir" && pwd -P)" ]; then
    fail "libstarpu not loaded from the installation: $(grep libstarpu "$tmp/ldd" | tr -d '\t')"
fi

# `taskqcd info` starts StarPU: its calibration directory goes to the temporary one
info() { env -u LD_LIBRARY_PATH STARPU_HOME="$tmp/home" STARPU_SILENT=1 "$@" >"$tmp/out" 2>&1; }
check_info() {   # $1: how it ran
    grep -q '^TaskQCD ' "$tmp/out" && grep -q 'StarPU 1\.3' "$tmp/out" ||
        fail "taskqcd info ($1) printed: $(cat "$tmp/out")"
}
info "$bin" info --ncpus 1 || fail "taskqcd info exited $?: $(cat "$tmp/out")"
check_info "installation moved"

# hide the trees for real where the system lets this process have its own mounts
if unshare -m true 2>/dev/null; then
    hide=$src   # and what lies outside it (mounting inside a hidden tree would fail)
    for d in "$builddir" "$starpu_real"; do
        [ -n "$d" ] && case "$d" in "$src"/*) ;; *) hide="$hide $d" ;; esac
    done
    # under scripts/run-sanitizers: the report directory and suppression file are hidden
    # too, so reports go to stderr and leaks are left to the run above
    [ -n "${ASAN_OPTIONS:-}" ] && ASAN_OPTIONS="$ASAN_OPTIONS:log_path=stderr:detect_leaks=0"
    [ -n "${UBSAN_OPTIONS:-}" ] && UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=stderr"
    info unshare -m sh -c 'm=$1 b=$2; shift 2; for d; do mount -t tmpfs none "$d" || { : >"$m"; exit 1; }; done
        exec "$b" info --ncpus 1' sh "$tmp/no-mount" "$bin" $hide
    rc=$?
    if [ -f "$tmp/no-mount" ]; then
        echo "note: could not mount over the trees, not run with them hidden"
    else
        [ $rc -eq 0 ] || fail "taskqcd info with the trees hidden exited $rc: $(cat "$tmp/out")"
        check_info "trees hidden"
        echo "ran with $hide hidden"
    fi
else
    echo "note: no private mount namespace here (unshare -m): the trees stay visible; ldd checked above"
fi

# an application builds against the installation through pkg-config alone
if command -v pkg-config >/dev/null 2>&1 && command -v "${CC:-cc}" >/dev/null 2>&1; then
    pcflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --define-prefix --cflags --libs taskqcd 2>"$tmp/pc.err")
    if [ $? -ne 0 ]; then
        fail "pkg-config taskqcd: $(cat "$tmp/pc.err")"
    else
        for w in $pcflags; do
            case "$w" in -I* | -L*) in_tree "${w#-?}" && fail "pkg-config taskqcd gives $w" ;; esac
        done
        # shellcheck disable=SC2086
        "${CC:-cc}" -o "$tmp/app" "$src/examples/solve_from_host.c" $pcflags -lm >"$tmp/cc.log" 2>&1 ||
            fail "an application does not build against the installation: $(cat "$tmp/cc.log")"
    fi
fi

mv "$tmp/moved" "$tmp/stage"
mk uninstall DESTDIR="$tmp/stage" || { cat "$tmp/make.log"; fail "make uninstall"; }
left=$(find "$tmp/stage" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"

if [ $failures -ne 0 ]; then echo "test_install: $failures failure(s)"; exit 1; fi
echo "test_install: PASS"
