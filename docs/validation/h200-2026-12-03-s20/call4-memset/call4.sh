#!/bin/bash
# Session 20, device call 4: GPT-2's memsets without a call site (95770c8,
# build/vv/m2*) against 44dae5f (build/vv/m1*), per call (-DCP_SELFTIME
# builds) and as ratios (normal builds, ABBA); then, on the selftime build,
# how large the product levers left for issue 16 are: fewer Python frames a
# site (CUPROBE_PYTHON_DEPTH=16, GPT-2) and fewer native ones
# (CUPROBE_STACK_DEPTH=12, the MLP), in the call site's part.
# (The device copy's `git describe` in toggle.txt is its stale metadata;
# the builds are named by variants.sh.)
O=${OUT:?}
S="TOGGLE_SELFTIME=1"
RUNS="gpt2-m1st async gpt2 20 1 $S RUN_CP=build/vv/m1st/bin/cuprobe
gpt2-m2st async gpt2 20 1 $S RUN_CP=build/vv/m2st/bin/cuprobe
gpt2-m2st-py16 async gpt2 20 1 $S CUPROBE_PYTHON_DEPTH=16 RUN_CP=build/vv/m2st/bin/cuprobe
mlp-m2st async mlp 15 10 $S RUN_CP=build/vv/m2st/bin/cuprobe
mlp-m2st-d12 async mlp 15 10 $S CUPROBE_STACK_DEPTH=12 RUN_CP=build/vv/m2st/bin/cuprobe
gpt2-m1-1 async gpt2 25 1 RUN_CP=build/vv/m1/bin/cuprobe
gpt2-m2-1 async gpt2 25 1 RUN_CP=build/vv/m2/bin/cuprobe
gpt2-m2-2 async gpt2 25 1 RUN_CP=build/vv/m2/bin/cuprobe
gpt2-m1-2 async gpt2 25 1 RUN_CP=build/vv/m1/bin/cuprobe" OUT="$O/toggle" BUDGET=480 bash tests/gpu/toggle.sh >/dev/null
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
grep -E "^[a-z0-9]|toggle ratio|self cuMemsetD8Async|part:call-site|self total" "$O/toggle/toggle-lines.txt"
