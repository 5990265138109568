#!/bin/bash
# tests/gpu/gpt2_parts.sh OUTDIR - where the shim's cost on GPT-2 small goes:
# rounds of alternating runs (tests/gpu/parts.sh, default allocator unless
# PYTORCH_CUDA_ALLOC_CONF is set) under plain, `cuprobe run` with defaults,
# with recording off (CUPROBE_DISABLE=1: interposition and the companion
# only), with the companion off, with call sites off, and the shim
# preloaded directly (no companion).
#   ROUNDS (2), SECS (5) seconds of steps per run, WARM (2) seconds of
#   warm-up beyond the fixed steps.
export WORKLOAD=gpt2 ROUNDS=${ROUNDS:-2} SECS=${SECS:-5} WARM=${WARM:-2}
export CONFIGS="run run
disabled run CUPROBE_DISABLE=1
nocompanion run CUPROBE_FRAMEWORK=0
nosites run CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0
preload preload"
exec bash tests/gpu/parts.sh "$@"
