#!/bin/bash
# tests/gpu/parts.sh OUTDIR - where the shim's cost goes on one workload:
# ROUNDS rounds of alternating runs of `bench/gpu_steps.py WORKLOAD SECS`,
# plain and under each configuration of CONFIGS (the order rotated by one
# each round), then, per configuration,
# the median of its ratio to the plain run of the same round
# (tests/gpu/round_ratio.awk).
#   WORKLOAD (mlp) mlp | gpt2 | alloc; ROUNDS (3); SECS (3) seconds of steps
#   per run; WARM (1) seconds of warm-up beyond the fixed steps; BUDGET (540)
#   seconds after which no new round starts.
#   CONFIGS: one configuration a line, "TAG HOW [VAR=VALUE...]", HOW = run
#   (`cuprobe run`), preload (LD_PRELOAD of build/libcuprobe.so alone) or
#   preload=SHIM.so (another build's shim, e.g. build/oldshim/libcuprobe.so).
#   The allocator is PyTorch's default unless PYTORCH_CUDA_ALLOC_CONF is set.
OUT=${1:-${OUT:-parts-out}}; mkdir -p "$OUT" || exit 1
WORKLOAD=${WORKLOAD:-mlp}; ROUNDS=${ROUNDS:-3}; SECS=${SECS:-3}; BUDGET=${BUDGET:-540}
CONFIGS=${CONFIGS:-"run run
nosites run CUPROBE_STACK_DEPTH=0"}
export GPU_STEPS_WARM_S=${WARM:-1}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
START=$(date +%s)
if [ "$WORKLOAD" = gpt2 ] && ! python3 -c 'import transformers' 2>/dev/null; then
    echo "skip: transformers is not importable" | tee "$OUT/summary.txt"; exit 0
fi
one() {     # TAG HOW [VAR=VALUE...] -> appends "round R TAG steps/s"
    local tag=$1 how=$2; shift 2
    local pre=()
    case $how in
    plain) ;;
    run) pre=("$PWD/build/cuprobe" run -o "$T/t-%p.trace" --) ;;
    preload) pre=(env LD_PRELOAD="$PWD/build/libcuprobe.so" CUPROBE_OUTPUT="$T/t-%p.trace") ;;
    preload=*) pre=(env LD_PRELOAD="$PWD/${how#preload=}" CUPROBE_OUTPUT="$T/t-%p.trace") ;;
    *) echo "parts.sh: unknown HOW '$how' for $tag" >&2; return 1 ;;
    esac
    v=$(env "$@" "${pre[@]}" python3 bench/gpu_steps.py "$WORKLOAD" "$SECS" 2>>"$OUT/stderr.txt" |
        awk '/^steps_per_s/ {print $2}')
    echo "round $r $tag ${v:-FAILED}" | tee -a "$OUT/runs.txt"
    rm -f "$T"/*.trace
}
: >"$OUT/runs.txt"
for ((r = 0; r < ROUNDS; r++)); do
    [ $(( $(date +%s) - START )) -lt "$BUDGET" ] || { echo "budget: stopped after $r rounds" | tee -a "$OUT/runs.txt"; break; }
    # Each round starts one run later in the list (plain first in round 0,
    # the first configuration first in round 1, ...): a run's place in its
    # round (what ran just before it, how long the GPU idled) is then the
    # same for every configuration over the rounds, not a bias of one.
    mapfile -t order < <(printf 'plain plain\n%s\n' "$CONFIGS" | grep -v '^[[:space:]]*$')
    for ((i = 0; i < ${#order[@]}; i++)); do
        read -r tag how vars <<<"${order[(i + r) % ${#order[@]}]}"
        one "$tag" "$how" $vars
    done
done
{
    echo "$WORKLOAD, ${SECS}s of steps after ${GPU_STEPS_WARM_S}s warm-up, allocator ${PYTORCH_CUDA_ALLOC_CONF:-default}; median ratio to plain of the same round:"
    while read -r tag how vars; do
        [ -n "$tag" ] && awk -v c="$tag" -v fmt="%-12s %.4f (%.4f-%.4f, %d rounds)  $how $vars\n" \
            -v none='%-12s -\n' -f tests/gpu/round_ratio.awk "$OUT/runs.txt"
    done <<<"$CONFIGS"
    awk -f tests/gpu/round_position.awk "$OUT/runs.txt"
} | tee "$OUT/summary.txt"
