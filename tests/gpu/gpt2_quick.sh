#!/bin/bash
# tests/gpu/gpt2_quick.sh OUTDIR - GPT-2 small under cudaMallocAsync (every
# tensor a cuMemAllocAsync): plain, traced with the stack cache off and on
# (CUPROBE_STACK_CACHE=0/1), alternating for ROUNDS rounds (default 2) of
# SECS seconds of steps (default 3) after WARM seconds of warm-up (default
# 0) through tests/gpu/parts.sh; prints steps/s per run and the median
# ratio of each traced kind to plain of the same round.
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
export WORKLOAD=gpt2 ROUNDS=${ROUNDS:-2} SECS=${SECS:-3} WARM=${WARM:-0}
export CONFIGS="cache0 run CUPROBE_STACK_CACHE=0
cache1 run CUPROBE_STACK_CACHE=1"
OUT=${1:-${OUT:-gpt2q-out}}
exec bash tests/gpu/parts.sh "$OUT"
