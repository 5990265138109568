#!/bin/bash
# tests/gpu/toggle.sh - what `cuprobe run` costs a training loop, measured
# inside one traced process: bench/gpu_steps.py KIND toggle times blocks of
# steps with recording on and paused (cuprobe_bench_pause) in turn, ABBA, and
# prints the median of the pairs' paused/recording time ratios (traced/plain
# as a rate).  Two processes of one configuration differ by a few percent on
# the H200 host (BENCHMARKS.md 2k); here both states share the process.
#
# Usage: OUT=dir bash tests/gpu/toggle.sh
#   RUNS  one run a line: "LABEL MODE KIND SECS BLOCK [VAR=value ...]",
#         MODE default|expandable|async (PYTORCH_CUDA_ALLOC_CONF), the VARs
#         set for that run (e.g. CUPROBE_STACK_DEPTH=0, TOGGLE_AA=1;
#         RUN_CP=PATH: another build's front end, next to its own
#         libcuprobe.so); the
#         default: the MLP in the three modes, defaults and depth 0, REPS
#         (default 2) processes each in rotated order, then an A/A run and
#         GPT-2 under cudaMallocAsync.
#   PIN   (default 2-7) taskset CPUs for every run; BUDGET (default 540)
#         seconds after which no run starts.
# Writes $OUT/toggle.txt (one line a run) and $OUT/stderr.txt.
OUT=${OUT:-toggle-out}
B=${B:-build}
PIN=${PIN:-2-7}
BUDGET=${BUDGET:-540}
REPS=${REPS:-2}
export GPU_STEPS_WARM_S=${WARM:-1}
mkdir -p "$OUT" || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CP="$PWD/$B/cuprobe"
START=$(date +%s)
[ -x "$CP" ] && [ -f "$B/libcuprobe.so" ] || { echo "build/ is missing (run make)"; exit 1; }
taskset -c "$PIN" true 2>/dev/null || PIN=

if [ -z "$RUNS" ]; then
    for ((r = 0; r < REPS; r++)); do
        for m in default expandable async; do
            if [ $((r % 2)) = 0 ]; then
                RUNS+="defaults $m mlp 20 10"$'\n'"depth0 $m mlp 20 10 CUPROBE_STACK_DEPTH=0"$'\n'
            else
                RUNS+="depth0 $m mlp 20 10 CUPROBE_STACK_DEPTH=0"$'\n'"defaults $m mlp 20 10"$'\n'
            fi
        done
    done
    RUNS+="aa async mlp 20 10 TOGGLE_AA=1"$'\n'"defaults async gpt2 30 1"$'\n'
fi

conf_of() {
    case $1 in
    expandable) echo "expandable_segments:True" ;;
    async) echo "backend:cudaMallocAsync" ;;
    esac
}

echo "# $(date -u +%FT%TZ) $(git describe --always --dirty 2>/dev/null) PIN=${PIN:-none}" >"$OUT/toggle.txt"
while read -r label mode kind secs block vars; do
    [ -n "$label" ] || continue
    if [ $(($(date +%s) - START + secs + 20)) -gt "$BUDGET" ]; then
        echo "note: budget reached before $label $mode $kind" | tee -a "$OUT/toggle.txt"
        break
    fi
    conf=$(conf_of "$mode")
    cp=$CP envs=
    for v in $vars; do case $v in RUN_CP=*) cp=$PWD/${v#RUN_CP=} ;; *) envs+=" $v" ;; esac; done
    pre=()
    [ -n "$PIN" ] && pre=(taskset -c "$PIN")
    # shellcheck disable=SC2086  # vars: words VAR=value
    res=$("${pre[@]}" env -u PYTORCH_CUDA_ALLOC_CONF ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} $envs \
        "$cp" run -o "$T/t-%p.trace" -- python3 bench/gpu_steps.py "$kind" toggle "$secs" "$block" \
        2>>"$OUT/stderr.txt" | tr '\n' ' ')
    rm -f "$T"/t-*.trace
    echo "$label $mode $kind ${vars:--} :: ${res:-FAILED}" | tee -a "$OUT/toggle.txt"
done <<<"$RUNS"
