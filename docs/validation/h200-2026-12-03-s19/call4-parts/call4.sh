#!/bin/bash
# Session 19, device call 4: the recording path's parts inside PyTorch on the
# H200.  build/st4/bin: main with CP_HOT plus the -DCP_SELFTIME counters and
# the part timers (context, call site, map, record; launch count, in-flight
# ring, cross-device check).  Each part's time includes one clock read
# (rdtsc-based cp_now_ns, ~11 ns here).
O=${OUT:?}
S="TOGGLE_SELFTIME=1 RUN_CP=build/st4/bin/cuprobe"
RUNS="parts-async-def async mlp 20 10 $S
parts-async-bare async mlp 20 10 CUPROBE_STACK_DEPTH=0 CUPROBE_PYTHON=0 $S
parts-async-nopy async mlp 20 10 CUPROBE_PYTHON=0 $S
parts-default-def default mlp 15 10 $S
parts-gpt2-async-def async gpt2 25 1 $S" \
    OUT="$O/toggle" BUDGET=250 bash tests/gpu/toggle.sh >/dev/null
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
grep -E "^[a-z0-9]|toggle ratio|self cuMem|self cuLaunchKernel |self part|self total" "$O/toggle/toggle-lines.txt"
