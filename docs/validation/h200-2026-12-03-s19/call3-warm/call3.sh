#!/bin/bash
# Session 19, device call 3: does warming the event path's lines during the
# driver's call pay on the H200?  Four -DCP_SELFTIME builds (build/stN/bin):
#   st  main (d2d8463);  st1 + CP_HOT (the event path in one section);
#   st2 + cp_hot_warm() before the driver's call (CP_WARM=1: record
#   position, globals, clock);  st3 + the cp_hot code prefetched too (CP_WARM=2).
# The MLP under cudaMallocAsync, defaults, two rounds in turn; GPT-2 st/st2.
# (cp_hot_warm() and CP_WARM did not land: BENCHMARKS.md 2p, call 3.)
O=${OUT:?}
R="async mlp 20 10 TOGGLE_SELFTIME=1"
RUNS="st-a $R RUN_CP=build/st/bin/cuprobe
st1-a $R RUN_CP=build/st1/bin/cuprobe
st2-a $R RUN_CP=build/st2/bin/cuprobe
st3-a $R RUN_CP=build/st3/bin/cuprobe
st3-b $R RUN_CP=build/st3/bin/cuprobe
st2-b $R RUN_CP=build/st2/bin/cuprobe
st1-b $R RUN_CP=build/st1/bin/cuprobe
st-b $R RUN_CP=build/st/bin/cuprobe
gpt2-st2 async gpt2 20 1 TOGGLE_SELFTIME=1 RUN_CP=build/st2/bin/cuprobe
gpt2-st async gpt2 20 1 TOGGLE_SELFTIME=1 RUN_CP=build/st/bin/cuprobe" \
    OUT="$O/toggle" BUDGET=330 bash tests/gpu/toggle.sh >/dev/null
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
grep -E "^[a-z0-9]|toggle ratio|self cuMem|self cuLaunchKernel |self total" "$O/toggle/toggle-lines.txt"
