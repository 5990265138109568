#!/bin/bash
# tests/gpu/gpt2_bisect.sh OUTDIR - GPT-2 small steps/s under cudaMallocAsync
# with each shim found in build/shim-*/libcuprobe.so (built here at chosen
# commits), build/oldshim and this build, preloaded directly, plain between.
OUT=${1:-${OUT:-gpt2bisect-out}}; mkdir -p "$OUT"
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
T=$(mktemp -d)
one() { local tag=$1; shift
    s=$("$@" python3 bench/gpu_steps.py gpt2 3 2>>"$OUT/stderr.txt" | awk '/^steps_per_s/ {print $2}')
    echo "$tag $s" | tee -a "$OUT/runs.txt"; rm -f "$T"/*.trace; }
one plain env
for so in build/oldshim/libcuprobe.so build/shim-*/libcuprobe.so build/libcuprobe.so; do
    [ -f "$so" ] && one "$so" env LD_PRELOAD="$PWD/$so" CUPROBE_OUTPUT="$T/t-%p.trace"
done
one plain env
