#!/bin/bash
# Session 19, device call 5: the call site's native cache hit checking only
# the kept frames' slots, and stack_cfg() without pthread_once per capture.
# before: build/st4/bin (call 4's build); after: build/st/bin (`make selftime`
# of the change).  Part timers as in call 4; processes alternate.
O=${OUT:?}
S="async mlp 15 10 TOGGLE_SELFTIME=1"
RUNS="before-nopy $S CUPROBE_PYTHON=0 RUN_CP=build/st4/bin/cuprobe
after-nopy $S CUPROBE_PYTHON=0 RUN_CP=build/st/bin/cuprobe
after-nopy2 $S CUPROBE_PYTHON=0 RUN_CP=build/st/bin/cuprobe
before-nopy2 $S CUPROBE_PYTHON=0 RUN_CP=build/st4/bin/cuprobe
before-def $S RUN_CP=build/st4/bin/cuprobe
after-def $S RUN_CP=build/st/bin/cuprobe
after-gpt2 async gpt2 20 1 TOGGLE_SELFTIME=1 RUN_CP=build/st/bin/cuprobe
before-gpt2 async gpt2 20 1 TOGGLE_SELFTIME=1 RUN_CP=build/st4/bin/cuprobe" \
    OUT="$O/toggle" BUDGET=270 bash tests/gpu/toggle.sh >/dev/null
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
grep -E "^[a-z0-9]|toggle ratio|self cuMemAllocAsync|self part:call|self part:record|self total" "$O/toggle/toggle-lines.txt"
# (The change was reverted after this call: BENCHMARKS.md 2p.)
