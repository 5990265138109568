#!/bin/bash
# tests/gpu/gpt2_async_ab.sh OUTDIR - GPT-2 small steps/s under PyTorch's
# cudaMallocAsync backend: plain, traced with this build's shim, traced with
# call sites off, with Python frames off, and (when build/oldshim/ holds
# one) traced with an older shim, alternating, to find where time goes.
OUT=${1:-${OUT:-gpt2ab-out}}; mkdir -p "$OUT"
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
CP="$PWD/build/cuprobe"; T=$(mktemp -d)
one() { local tag=$1; shift
    s=$("$@" python3 bench/gpu_steps.py gpt2 3 2>>"$OUT/stderr.txt" | awk '/^steps_per_s/ {print $2}')
    echo "$tag $s" | tee -a "$OUT/runs.txt"; rm -f "$T"/*.trace; }
for r in 1 2; do
    one plain env
    one traced "$CP" run -o "$T/t-%p.trace" --
    one nostack env CUPROBE_STACK_DEPTH=0 "$CP" run -o "$T/t-%p.trace" --
    one nopython env CUPROBE_PYTHON=0 "$CP" run -o "$T/t-%p.trace" --
    one newdirect env LD_PRELOAD="$PWD/build/libcuprobe.so" CUPROBE_OUTPUT="$T/n-%p.trace"
    [ -f build/oldshim/libcuprobe.so ] && one oldshim env LD_PRELOAD="$PWD/build/oldshim/libcuprobe.so" CUPROBE_OUTPUT="$T/o-%p.trace"
done
