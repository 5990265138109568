#!/bin/bash
# tests/gpu/pingpong.sh OUTDIR - issue 16's H200 table with long-lived
# processes taking turns (bench/gpu_pingpong.py): per allocator mode, the
# launch-bound MLP plain, plain again (an A/A control: the harness's own
# spread), traced with defaults, with CUPROBE_STACK_DEPTH=0, and with the
# companion's segment watch off; then how many torch.segment samples each
# traced process took.
#   MODES (default "async default expandable"), ROUNDS (40), SECS (0.5),
#   GENERATIONS (4: fresh processes for every configuration 4 times, since
#   each process has a speed of its own: gpu_pingpong.py),
#   BUDGET (seconds of rounds per mode, default 110), PIN (default 2-7),
#   SANDWICH=1 (gpu_pingpong.py: the reference's turn between every two
#   others, each compared with the two reference turns around it),
#   CONFIGS (newline-separated gpu_pingpong.py configurations, default the
#   five above), KIND (mlp).
OUT=${1:-${OUT:-pingpong-out}}
mkdir -p "$OUT" || exit 1
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "skip: torch with CUDA is not importable here" | tee "$OUT/summary.txt"; exit 0; }
export PIN=${PIN:-2-7} BUDGET=${BUDGET:-110} GPU_STEPS_WARM_S=${WARM:-1} GENERATIONS=${GENERATIONS:-4}
CONFIGS=${CONFIGS:-"plain plain
aa plain
traced run
depth0 run CUPROBE_STACK_DEPTH=0
watch0 run CUPROBE_FRAMEWORK_WATCH=0"}
mapfile -t cfgs <<<"$CONFIGS"
for mode in ${MODES:-async default expandable}; do
    case $mode in
    default) unset PYTORCH_CUDA_ALLOC_CONF ;;
    expandable) export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True ;;
    async) export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync ;;
    *) echo "unknown mode $mode"; exit 1 ;;
    esac
    d="$OUT/$mode"
    echo "== $mode ($(date -u +%H:%M:%S) UTC, PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-unset}, pinned $PIN${SANDWICH:+, sandwich})" |
        tee -a "$OUT/summary.txt"
    python3 bench/gpu_pingpong.py "$d" "${KIND:-mlp}" "${ROUNDS:-40}" "${SECS:-0.5}" "${cfgs[@]}" \
        >"$d.log" 2>&1
    cat "$d/summary.txt" >>"$OUT/summary.txt" 2>/dev/null || tail -n 5 "$d.log" >>"$OUT/summary.txt"
    find "$d" -name '*.trace' | sort | while read -r t; do
        echo "  ${t#"$d"/}: $(build/cuprobe-analyze dump "$t" 2>/dev/null | grep -c 'torch\.segment') torch.segment samples" >>"$OUT/summary.txt"
        rm -f "$t"
    done
done
cat "$OUT/summary.txt"
