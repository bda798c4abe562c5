#!/bin/sh
# bench/graph_bounds.py on small hand-made graphs (doc/design.md "Task-graph export"
# format) whose bounds are known: a chain, independent tasks on 2 CPUs, a CPU+CUDA
# linear program solved by hand, tasks with a cost for one kind only, a task range.
# Exit 0 pass, 1 fail, 77 skip (no python3).

here=$(cd "$(dirname "$0")" && pwd)
bounds=$here/../bench/graph_bounds.py
if ! command -v python3 >/dev/null 2>&1; then
    echo "test_graph_bounds: SKIP: python3 not found"
    exit 77
fi
if [ ! -f "$bounds" ]; then
    echo "test_graph_bounds: FAIL: $bounds missing"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_graph_bounds.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

checks=0
failures=0
fail() {
    failures=$((failures + 1))
    echo "FAIL: $*" >&2
}

# graph NAME WORKERS TASKS EDGES: writes $tmp/NAME.json. WORKERS "cpu cpu cuda";
# TASKS "id:cpu:cuda[:where]" ('-' for a null cost); EDGES "from>to".
graph() {
    name=$1 workers=$2 tasks=$3 edges=$4
    {
        printf '{"format": "taskqcd-task-graph", "version": 1, "rank": 0, "ranks": 1,\n "workers": ['
        i=0 sep=
        for k in $workers; do printf '%s{"id": %d, "kind": "%s", "name": "W%d"}' "$sep" $i "$k" $i; i=$((i + 1)); sep=', '; done
        printf '],\n "handles": [{"id": 0, "bytes": 8}],\n "tasks": ['
        sep=
        for t in $tasks; do
            echo "$t" | awk -F: -v sep="$sep" '{
                c = ($2 == "-") ? "null" : $2; g = ($3 == "-") ? "null" : $3; w = (NF >= 4) ? $4 : "any"
                printf "%s\n  {\"id\": %d, \"codelet\": \"t%d\", \"owner\": -1, \"where\": \"%s\", \"priority\": 0, \"cost_us\": {\"cpu\": %s, \"cuda\": %s}, \"accesses\": [[0, \"R\"]]}", sep, $1, $1, w, c, g }'
            sep=','
        done
        printf '],\n "edges": ['
        sep=
        for e in $edges; do printf '%s[%s, %s, 0, "RAW"]' "$sep" "${e%>*}" "${e#*>}"; sep=', '; done
        printf ']}\n'
    } >"$tmp/$name.json"
}

# expect NAME "key=value ..." [OPTIONS]: graph_bounds.py on $tmp/NAME.json prints every pair
expect() {
    name=$1 want=$2
    shift 2
    checks=$((checks + 1))
    if ! out=$(python3 "$bounds" "$tmp/$name.json" "$@" 2>&1); then
        fail "$name: graph_bounds.py $* failed: $out"
        return
    fi
    for kv in $want; do
        echo "$out" | grep -qx -- "$kv" || fail "$name $*: expected $kv, got: $(echo "$out" | tr '\n' ' ')"
    done
}

# a chain 10 -> 20 -> 30 on 2 CPUs: the path is the bound (area 60 / 2 = 30)
graph chain "cpu cpu" "0:10:- 1:20:- 2:30:-" "0>1 1>2"
expect chain "tasks=3 edges=2 tasks_nocost=0 nocost_codelets= area_us=30.000 cp_us=60.000 bound_us=60.000"

# independent 10, 20, 30, 40 on 2 CPUs: area 100 / 2 = 50, longest task 40
graph indep "cpu cpu" "0:10:- 1:20:- 2:30:- 3:40:-" ""
expect indep "tasks=4 edges=0 area_us=50.000 cp_us=40.000 bound_us=50.000"
# the same on 4 CPUs (--ncpu): area 25, so the longest task bounds
expect indep "ncpu=4 area_us=25.000 cp_us=40.000 bound_us=40.000" --ncpu 4

# 1 CPU + 1 CUDA. A (cpu 10, cuda 1) goes to CUDA first (ratio 10), B (10, 10) is split,
# C (cpu 4, no CUDA cost) stays on the CPU: CPU 4 + 10 (1 - y) = CUDA 1 + 10 y gives
# y = 0.65, T = 7.5. Path: each task at its cheaper kind, B's 10 the longest.
graph lp "cpu cuda" "0:10:1 1:10:10 2:4:-" ""
expect lp "tasks=3 tasks_nocost=0 ncpu=1 ncuda=1 area_us=7.500 cp_us=10.000 bound_us=10.000"
# the same tasks on 2 CPUs + 1 CUDA, C (first here) before B: A to CUDA, then B split:
# CPU (4 + 10 (1 - y)) / 2 = CUDA 1 + 10 y gives y = 0.4, T = 5; the path C -> B is 14
graph lp2 "cpu cpu cuda" "0:4:- 1:10:1 2:10:10" "0>2"
expect lp2 "ncpu=2 ncuda=1 area_us=5.000 cp_us=14.000 bound_us=14.000"
# no CUDA worker (--ncuda 0): all on the CPUs, area 24 / 2, path 4 + 10
expect lp2 "ncpu=2 ncuda=0 area_us=12.000 cp_us=14.000" --ncuda 0
# 1 CPU + 1 CUDA, four tasks (cpu 10, cuda 2): the fraction f of the work on CUDA
# balances 40 (1 - f) = 8 f at f = 5/6, T = 20/3; here the area bound is the larger
graph lp3 "cpu cuda" "0:10:2 1:10:2 2:10:2 3:10:2" ""
expect lp3 "area_us=6.667 cp_us=2.000 bound_us=6.667"

# where "cpu" wins over a CUDA cost; a CUDA-only task without CUDA workers and a task
# without any cost count as 0 and are reported
graph kinds "cpu cuda" "0:8:1:cpu 1:-:6 2:-:-" "0>1 1>2"
expect kinds "tasks=3 tasks_nocost=1 nocost_codelets=t2:1 area_us=8.000 cp_us=14.000 bound_us=14.000"
expect kinds "tasks_nocost=2 nocost_codelets=t1:1,t2:1 ncuda=0 area_us=8.000 cp_us=8.000" --ncuda 0

# a task range (the timed part of a run) and --per: tasks 1, 2 of the chain, per 2
expect chain "tasks=2 edges=1 area_us=12.500 cp_us=25.000 bound_us=25.000" --from-task 1 --per 2
expect chain "tasks=2 edges=1 cp_us=30.000" --to-task 2

# --after: the tasks beyond a shorter run's graph (its tasks must be the first ones)
graph chain1 "cpu cpu" "0:10:-" ""
expect chain "tasks=2 edges=1 cp_us=50.000" --after "$tmp/chain1.json"
# handle ids may differ between runs (the export names handles by address)
sed 's/\[\[0, "R"\]\]/[[5, "R"]]/' "$tmp/chain1.json" >"$tmp/chain1h.json"
expect chain "tasks=2 cp_us=50.000" --after "$tmp/chain1h.json"
graph other "cpu cpu" "0:10:-:cpu" ""
checks=$((checks + 1))
if python3 "$bounds" "$tmp/chain.json" --after "$tmp/other.json" >/dev/null 2>&1; then
    fail "--after accepted a graph that is not the first part of the other"
fi

# not a graph: an error, not numbers
echo '{"format": "something-else"}' >"$tmp/bad.json"
checks=$((checks + 1))
if python3 "$bounds" "$tmp/bad.json" >/dev/null 2>&1; then fail "a file of another format was accepted"; fi

echo "test_graph_bounds: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
