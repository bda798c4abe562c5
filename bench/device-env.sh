# Sourced by the scripts that run on the GPU machine (device tool, carrying build and
# .deps/starpu): the repository root, the output folder ($OUT there), the libraries of this
# build (TQ_LIBDIR first: another build of libtaskqcd.so, for kernel variants) and a
# private StarPU home (its performance models).
top=$(pwd)
out=${OUT:-/tmp/taskqcd-device}
mkdir -p "$out"
export LD_LIBRARY_PATH="${TQ_LIBDIR:+$TQ_LIBDIR:}$top/build/.libs:$top/.deps/starpu/lib:${LD_LIBRARY_PATH:-}"
export STARPU_HOME=/tmp/taskqcd-starpu-home STARPU_SILENT=1
mkdir -p "$STARPU_HOME"
# The device tool brings back at most 8 files from $OUT: when a script run there ends (a
# time limit's SIGTERM included) with more than 7 files under $OUT, they go into one
# $OUT/logs-<time>.tgz (earlier archives kept; unpack with tar xzf).
pack_logs() {
    [ -n "${OUT:-}" ] && [ -d "$out" ] || return 0
    [ "$(find "$out" -type f ! -name '*.tgz' | wc -l)" -gt 7 ] || return 0
    local a
    a=logs-$(date +%H%M%S%N).tgz
    tar czf "/tmp/$a" -C "$out" --exclude='*.tgz' . && find "$out" -mindepth 1 -depth ! -name '*.tgz' -delete 2>/dev/null
    mv "/tmp/$a" "$out/$a"
}
trap pack_logs EXIT
trap 'exit 143' TERM INT
# bench_row DIR NAME PATTERN [VAR=VALUE ...] -- COMMAND...: runs COMMAND (at most 120 s) with
# the variables set, its output in DIR/NAME.txt, and appends a line to the array rows:
# NAME and what grep -o PATTERN finds in the output (its last word before the unit kept).
bench_row() {
    local dir=$1 name=$2 pattern=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" timeout 120 "$@" > "$dir/$name.txt" 2>&1 || echo "$name failed: see $dir/$name.txt"
    rows+=("$(printf '%-30s %s' "$name" "$(grep -o "$pattern" "$dir/$name.txt" | tr '\n' ' ')")")
}
# multigpu_bench NAME: what the several-GPU scripts share: res=$out/NAME (made), tool (the
# taskqcd binary), ng (the GPUs seen, at least 2), mpi (mpirun passing this environment on),
# rows=() for bench_row, and the row helpers matpc_row (M_pc times: single, half) and
# solve_row (a solve's iteration time).
multigpu_bench() {
    res=$out/$1
    mkdir -p "$res"
    tool=${TQ_TOOL:-$top/build/.libs/taskqcd}
    ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$ng" -ge 2 ] || ng=2
    mpi="mpirun --allow-run-as-root --bind-to none -x LD_LIBRARY_PATH -x STARPU_HOME -x STARPU_SILENT"
    rows=()
}
matpc_row() { local name=$1; shift; bench_row "$res" "$name" 'time [0-9.]* ms' "$@"; }
# dslash_check NAME COMMAND...: the reference checks of a taskqcd dslash --check run (at most
# 120 s), its output in $res/NAME.txt; appends to the array ok: the exit status, the checks
# passed and failed, and the peer-mode line the run printed (if any).
dslash_check() {
    local name=$1; shift
    timeout 120 "$@" > "$res/$name.txt" 2>&1
    local rc=$? n_ok n_bad
    n_ok=$(grep -c '(ok,' "$res/$name.txt")
    n_bad=$(grep -c 'FAILED\|(failed\|not ok' "$res/$name.txt")
    ok+=("$(printf '%-30s rc %-3s checks ok %-3s failed %s %s' "$name" "$rc" "$n_ok" "$n_bad" "$(grep -o 'peer mode: .*' "$res/$name.txt" | head -n1)")")
}
solve_row() { local name=$1; shift; bench_row "$res" "$name" 'iterations [0-9.]* s' "$@"; }
