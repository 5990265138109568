#!/bin/bash
# Session 19, device call 2: where a recording block's extra time goes.  A
# -DCP_SELFTIME build of main (d2d8463 + the selftime counters, in
# build/st/bin) times every wrapped call and its driver function;
# bench/gpu_steps.py toggle (TOGGLE_SELFTIME=1) reports, per step, the calls,
# the time in the wrappers and in the driver, recording against paused, and
# what is left outside the calls.
O=${OUT:?}
RUNS="st-async-def async mlp 20 10 TOGGLE_SELFTIME=1 TOGGLE_PMU=soft RUN_CP=build/st/bin/cuprobe
st-async-bare async mlp 20 10 TOGGLE_SELFTIME=1 TOGGLE_PMU=soft CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0 RUN_CP=build/st/bin/cuprobe
st-default-def default mlp 15 10 TOGGLE_SELFTIME=1 TOGGLE_PMU=soft RUN_CP=build/st/bin/cuprobe
st-gpt2-async-def async gpt2 25 1 TOGGLE_SELFTIME=1 TOGGLE_PMU=soft RUN_CP=build/st/bin/cuprobe" \
    OUT="$O/toggle" BUDGET=200 bash tests/gpu/toggle.sh >/dev/null
# One line a run in toggle.txt: split it back into the script's lines.
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
cat "$O/toggle/toggle-lines.txt"
