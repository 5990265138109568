#!/bin/bash
# tests/gpu/gpt2_parts.sh OUTDIR - where the shim's cost on GPT-2 small goes:
# rounds of alternating runs (bench/gpu_steps.py gpt2, default allocator
# unless PYTORCH_CUDA_ALLOC_CONF is set) under plain, `cuprobe run` with
# defaults, with recording off (CUPROBE_DISABLE=1: interposition and the
# companion only), with the companion off, with call sites off, and the
# shim preloaded directly (no companion).  Prints each run and, per
# configuration, the median of its ratio to the plain run of the same round.
#   ROUNDS (2), SECS (5) seconds of steps per run, WARM (2) seconds of
#   warm-up beyond the fixed steps.
OUT=${1:-${OUT:-gpt2parts-out}}; mkdir -p "$OUT" || exit 1
ROUNDS=${ROUNDS:-2}; SECS=${SECS:-5}
export GPU_STEPS_WARM_S=${WARM:-2}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
CP="$PWD/build/cuprobe"
python3 -c 'import transformers' 2>/dev/null || { echo "skip: transformers is not importable" | tee "$OUT/summary.txt"; exit 0; }
one() {     # TAG CMD... -> appends "round R TAG steps/s"
    local tag=$1; shift
    v=$("$@" python3 bench/gpu_steps.py gpt2 "$SECS" 2>>"$OUT/stderr.txt" | awk '/^steps_per_s/ {print $2}')
    echo "round $r $tag ${v:-FAILED}" | tee -a "$OUT/runs.txt"
    rm -f "$T"/*.trace
}
: >"$OUT/runs.txt"
for ((r = 0; r < ROUNDS; r++)); do
    one plain env
    one run "$CP" run -o "$T/t-%p.trace" --
    one disabled env CUPROBE_DISABLE=1 "$CP" run -o "$T/t-%p.trace" --
    one nocompanion env CUPROBE_FRAMEWORK=0 "$CP" run -o "$T/t-%p.trace" --
    one nosites env CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0 "$CP" run -o "$T/t-%p.trace" --
    one preload env LD_PRELOAD="$PWD/build/libcuprobe.so" CUPROBE_OUTPUT="$T/t-%p.trace"
done
{
    echo "GPT-2 small, ${SECS}s of steps after ${GPU_STEPS_WARM_S}s warm-up, allocator ${PYTORCH_CUDA_ALLOC_CONF:-default}; median ratio to plain of the same round:"
    for c in run disabled nocompanion nosites preload; do
        awk -v c="$c" -v fmt='%-12s %.4f (%.4f-%.4f, %d rounds)\n' -v none='%-12s -\n' \
            -f tests/gpu/round_ratio.awk "$OUT/runs.txt"
    done
} | tee "$OUT/summary.txt"
