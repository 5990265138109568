#!/bin/bash
# Session 19, device call 1 (main at d2d8463 plus bench/pmu.py): does the H200
# VM expose hardware counters, and what a recording block costs in them
# (bench/gpu_steps.py toggle, TOGGLE_PMU=1); then the validation scripts'
# reports with this shim against 3aad98e's (session_batch.sh checkrep).
# Needs build/ with old (270ea36), oldshim (3aad98e), gpulib and perfkit.
O=${OUT:?}
K=build/perfkit
"$K/ld-linux-x86-64.so.2" --library-path "$K" "$K/perf" stat \
    -e cycles:u,instructions:u,L1-icache-load-misses:u,iTLB-load-misses:u -- true >"$O/perfstat.txt" 2>&1
lscpu >"$O/lscpu.txt" 2>&1
RUNS="pmu-async-def async mlp 20 10 TOGGLE_PMU=1
pmu-async-bare async mlp 20 10 TOGGLE_PMU=1 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0
pmu-default-def default mlp 15 10 TOGGLE_PMU=1
pmu-old-async-def async mlp 20 10 TOGGLE_PMU=1 RUN_CP=build/old/bin/cuprobe
pmu-gpt2-async-def async gpt2 25 1 TOGGLE_PMU=1" OUT="$O/toggle" BUDGET=230 bash tests/gpu/toggle.sh
ONLY="check_blocking check_fork check_growth check_oom_capacity check_oom_frag check_pageable clean_gpt2 clean_resnet" \
    REPEAT=1 BATCH_LIMIT=330 OUT="$O/batch" bash tests/gpu/session_batch.sh checkrep
# The device tool brings back 8 files: one archive of everything.
find "$O" -name '*.trace' -delete
tar czf /tmp/call.tgz -C "$O" . && rm -rf "${O:?}"/* && mv /tmp/call.tgz "$O/call.tgz"
