#!/usr/bin/env bash
set -u
source bench/device-env.sh
# calibrate first, then the logged run: D in single only, then the CG and multi-shift rows
timeout 200 build/bench/.libs/bench_staggered --dim 32 32 32 32 --prec single > $out/warm.txt 2>&1
TQ_TASK_LOG=$out/tasks.tsv CUDA_INJECTION64_PATH=$PWD/build/bench/libtq_cupti_trace.so TQ_CUPTI_API=0 TQ_CUPTI_TRACE=/tmp/gpu.tsv \
  timeout 200 build/bench/.libs/bench_staggered --dim 32 32 32 32 --prec single > $out/run.txt 2>&1
grep -E "^  (single|CG|multi)" $out/run.txt
python3 bench/gpu-timeline.py /tmp/gpu.tsv --last 0.45 > $out/gpu.txt 2>&1; head -n 30 $out/gpu.txt
