#!/usr/bin/env bash
# Runs one taskqcd command up to N times (the GPU machine, through the device tool), each
# with a time limit; a run that outlives it is a hang: every thread's stack is dumped (gdb
# or CUDA's cuda-gdb when the machine has one, else each thread's kernel wait channel) before it is killed.
# Output unbuffered, so the last line printed before the hang is in the log.
#   Usage: bash bench/hang-probe.sh N LIMIT_S taskqcd-args...   (logs under $OUT/hang/)
set -u
source "$(dirname "$0")/device-env.sh"
n=$1 limit=$2
shift 2
res=$out/hang
mkdir -p "$res"
tool=$top/build/.libs/taskqcd
for i in $(seq 1 "$n"); do
    log=$res/run$i.txt
    stdbuf -o0 -e0 "$tool" "$@" > "$log" 2>&1 &
    pid=$!
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do sleep 1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        echo "run $i: hung after ${limit} s; last lines:"
        tail -n 3 "$log"
        dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
        if [ -n "$dbg" ]; then
            "$dbg" -p "$pid" -batch -ex "set pagination off" -ex "thread apply all bt" > "$res/stacks$i.txt" 2>&1
        else
            for t in /proc/$pid/task/*; do
                echo "$(basename "$t") $(cat "$t/comm") $(cat "$t/wchan" 2>/dev/null) $(cat "$t/stat" | cut -d' ' -f3)"
            done > "$res/stacks$i.txt"
        fi
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        echo "stacks in $res/stacks$i.txt"
        grep -E "^#|^Thread" "$res/stacks$i.txt" | grep -vE "pthread_cond|futex|clock_nanosleep|poll |epoll" | head -n 60
        exit 1
    fi
    wait "$pid"
    echo "run $i: exit $? in ${waited} s"
done
