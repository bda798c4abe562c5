#!/usr/bin/env bash
# The tree's shape (scripts/check-tree): one-way layers, no cycle between folders, no
# oversized file under src/, no work labels. Then the check itself: a copy of the sources
# with one planted fault at a time must fail, naming the fault.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${TQ_BUILDDIR:-$src/build}
check="$src/scripts/check-tree"

"$check" "$build" || { echo "FAIL: the tree breaks its layering rules (above)"; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
plant() {   # $1: what; then a command run in a fresh copy; the check must fail naming $2
    local what=$1 expect=$2; shift 2
    rm -rf "$tmp/tree"; mkdir -p "$tmp/tree"
    (cd "$src" && cp -r src tasks codelets include doc bench tests "$tmp/tree/")
    (cd "$tmp/tree" && eval "$@")
    local out
    if out=$(TQ_TREE_ROOT="$tmp/tree" "$check" 2>&1); then
        echo "FAIL: check-tree passed a tree with $what"; exit 1
    fi
    grep -q -- "$expect" <<< "$out" || { echo "FAIL: check-tree did not name $what:"; echo "$out"; exit 1; }
    echo "ok: $what is caught"
}
plant "tasks/ including a src/ header" "tasks/submit.c includes src/core/tq_internal.h" \
    "sed -i '1i #include \"core/tq_internal.h\"' tasks/submit.c"
plant "a cycle between src/core and src/solvers" "includes form a cycle" \
    "sed -i '1i #include \"solvers/solver_internal.h\"' src/core/field.c"
plant "the CLI including an internal header" "src/cli/main.c includes src/blas/blas_internal.h" \
    "sed -i '1i #include \"blas/blas_internal.h\"' src/cli/main.c"
plant "a file of 900 lines under src/" "src/core/error.c has" \
    "for i in \$(seq 900); do echo '/* */' >> src/core/error.c; done"
plant "a work label in doc/" "work label" \
    "echo 'measured in the ninth session' >> doc/design.md"
echo "PASS"
