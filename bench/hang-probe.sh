#!/usr/bin/env bash
# Runs one taskqcd command up to N times (the GPU machine, through the device tool), each
# with a time limit; a run that outlives it is a hang: every thread's stack is dumped (gdb
# or CUDA's cuda-gdb when the machine has one, else each thread's kernel wait channel) before it is killed,
# with the memory it holds: the host's and the process's (free, /proc), the GPUs' (nvidia-smi) and
# StarPU's own accounting per memory node (total and available, asked through the debugger).
# Output unbuffered, so the last line printed before the hang is in the log.
#   Usage: bash bench/hang-probe.sh N LIMIT_S taskqcd-args...   (logs under $OUT/hang/)
#   HANG_PROG=path: run that program (a test binary) instead of taskqcd, with the args.
set -u
source "$(dirname "$0")/device-env.sh"
n=$1 limit=$2
shift 2
res=$out/hang
mkdir -p "$res"
tool=${HANG_PROG:-$top/build/.libs/taskqcd}
for i in $(seq 1 "$n"); do
    log=$res/run$i.txt
    stdbuf -o0 -e0 "$tool" "$@" > "$log" 2>&1 &
    pid=$!
    waited=0
    # every 5 s: the process's resident and pinned host memory and the GPUs' used memory
    echo "s VmRSS_kB VmPin_kB gpu_used_MiB" > "$res/memtrace$i.txt"
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do
        [ $((waited % 5)) -eq 0 ] && echo "$waited $(awk '/^VmRSS|^VmPin/ { printf "%s ", $2 }' "/proc/$pid/status" 2>/dev/null)$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | tr '\n' ' ')" >> "$res/memtrace$i.txt"
        sleep 1; waited=$((waited + 1))
    done
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
        {
            echo "== free -m"; free -m
            echo "== /proc/$pid/status"; grep -E '^Vm|^Rss' "/proc/$pid/status"
            echo "== GPUs"; nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu --format=csv,noheader
            if [ -n "$dbg" ]; then
                echo "== StarPU memory nodes: total and available bytes (node 0 is main memory)"
                args=()
                for node in 0 1 2 3 4; do
                    args+=(-ex "printf \"node $node total %lu available %lu\\n\", (unsigned long) starpu_memory_get_total($node), (unsigned long) starpu_memory_get_available($node)")
                done
                timeout 60 "$dbg" -p "$pid" -batch -ex "set pagination off" -ex "printf \"memory nodes %u\\n\", (unsigned) starpu_memory_nodes_get_count()" "${args[@]}" 2>&1 | grep -E "^node|^memory nodes"
            fi
        } > "$res/memory$i.txt" 2>&1
        cat "$res/memory$i.txt"
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        echo "stacks in $res/stacks$i.txt"
        grep -E "^#|^Thread" "$res/stacks$i.txt" | grep -vE "pthread_cond|futex|clock_nanosleep|poll |epoll" | head -n 60
        exit 1
    fi
    wait "$pid"
    echo "run $i: exit $? in ${waited} s"
done
