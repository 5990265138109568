#!/bin/bash
# tests/gpu/gpt2_async_ab.sh OUTDIR - GPT-2 small steps/s under PyTorch's
# cudaMallocAsync backend: plain, traced with this build's shim, traced with
# call sites off, with Python frames off, preloaded without `cuprobe run`,
# and (when build/oldshim/ holds one) preloaded with an older shim: 2 rounds
# of 3 s runs through tests/gpu/parts.sh (order rotated each round).
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
export WORKLOAD=gpt2 ROUNDS=${ROUNDS:-2} SECS=${SECS:-3} WARM=${WARM:-0}
CONFIGS="traced run
nostack run CUPROBE_STACK_DEPTH=0
nopython run CUPROBE_PYTHON=0
newdirect preload"
[ -f build/oldshim/libcuprobe.so ] &&
    CONFIGS="$CONFIGS
oldshim preload=build/oldshim/libcuprobe.so"
export CONFIGS
OUT=${1:-${OUT:-gpt2ab-out}}
exec bash tests/gpu/parts.sh "$OUT"
