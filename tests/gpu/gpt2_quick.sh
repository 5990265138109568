#!/bin/bash
# tests/gpu/gpt2_quick.sh OUTDIR - GPT-2 small under cudaMallocAsync (every
# tensor a cuMemAllocAsync): plain, traced with the stack cache off and on
# (CUPROBE_STACK_CACHE=0/1), alternating for ROUNDS rounds (default 2) of
# SECS seconds of steps (default 3); prints steps/s per run and the median
# ratio of each traced kind to plain of the same round.
OUT=${1:-${OUT:-gpt2q-out}}; mkdir -p "$OUT"
ROUNDS=${ROUNDS:-2}; SECS=${SECS:-3}
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
: >"$OUT/runs.txt"
for ((r = 0; r < ROUNDS; r++)); do
  for m in plain cache0 cache1; do
    case $m in
    plain) s=$(python3 bench/gpu_steps.py gpt2 "$SECS" 2>/dev/null | awk '/^steps_per_s/ {print $2}') ;;
    *) s=$(CUPROBE_STACK_CACHE=${m#cache} build/cuprobe run -o "$T/t-%p.trace" -- \
           python3 bench/gpu_steps.py gpt2 "$SECS" 2>/dev/null | awk '/^steps_per_s/ {print $2}') ;;
    esac
    echo "round $r $m ${s:-FAILED}" | tee -a "$OUT/runs.txt"; rm -f "$T"/*.trace
  done
done
for m in cache0 cache1; do
  awk -v c=$m -v fmt='%s: traced/plain median %.3f (range %.3f-%.3f, %d rounds)\n' \
      -f tests/gpu/round_ratio.awk "$OUT/runs.txt" | tee -a "$OUT/summary.txt"
done
