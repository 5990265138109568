#!/bin/bash
# tests/gpu/gpt2_quick.sh OUTDIR - one plain and one traced GPT-2 small run
# under cudaMallocAsync, alternating twice: a quick overhead check.
OUT=${1:-${OUT:-gpt2q-out}}; mkdir -p "$OUT"
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
T=$(mktemp -d)
for r in 1 2; do
  for m in plain traced; do
    if [ $m = plain ]; then s=$(python3 bench/gpu_steps.py gpt2 3 2>/dev/null | awk '/^steps_per_s/ {print $2}')
    else s=$(build/cuprobe run -o "$T/t-%p.trace" -- python3 bench/gpu_steps.py gpt2 3 2>/dev/null | awk '/^steps_per_s/ {print $2}'); fi
    echo "$m $s" | tee -a "$OUT/runs.txt"; rm -f "$T"/*.trace
  done
done
