#!/bin/bash
# Session 20, device call 1: the Python frames of the last walk prefetched
# before the next walk, and GPT-2's stream-ordered frees without a call site.
# Builds (variants.sh, carried as build/vv):
#   a0  3b9b1cc (session 19's main);
#   a   + frees of pool memory keep no site (cp_free_site_kind), no hint (-DCP_EXP_NOHINT);
#   b   + the last walk's frames prefetched at the start of each walk;
#   c   + the same prefetch issued before the driver's call too (-DCP_EXP_PREDRIVER).
# NAMEst: the same with -DCP_SELFTIME (per-API and part timers).
# CP_EXP_NOHINT and CP_EXP_PREDRIVER were switches of the uncommitted tree
# these builds came from (3b9b1cc-dirty); b landed as 44dae5f, c did not.
O=${OUT:?}
S="TOGGLE_SELFTIME=1"
RUNS="ast-1 async mlp 15 10 $S RUN_CP=build/vv/ast/bin/cuprobe
bst-1 async mlp 15 10 $S RUN_CP=build/vv/bst/bin/cuprobe
cst-1 async mlp 15 10 $S RUN_CP=build/vv/cst/bin/cuprobe
cst-2 async mlp 15 10 $S RUN_CP=build/vv/cst/bin/cuprobe
bst-2 async mlp 15 10 $S RUN_CP=build/vv/bst/bin/cuprobe
ast-2 async mlp 15 10 $S RUN_CP=build/vv/ast/bin/cuprobe
gpt2-a0st async gpt2 20 1 $S RUN_CP=build/vv/a0st/bin/cuprobe
gpt2-ast async gpt2 20 1 $S RUN_CP=build/vv/ast/bin/cuprobe
gpt2-bst async gpt2 20 1 $S RUN_CP=build/vv/bst/bin/cuprobe
gpt2-cst async gpt2 20 1 $S RUN_CP=build/vv/cst/bin/cuprobe
gpt2-a0 async gpt2 25 1 RUN_CP=build/vv/a0/bin/cuprobe
gpt2-b async gpt2 25 1 RUN_CP=build/vv/b/bin/cuprobe" \
    OUT="$O/toggle" BUDGET=560 bash tests/gpu/toggle.sh >/dev/null
sed 's/ \(toggle\|pmu\|self\) /\n  \1 /g' "$O/toggle/toggle.txt" >"$O/toggle/toggle-lines.txt"
grep -E "^[a-z0-9]|toggle ratio|self cuMem|self cuLaunchKernel |self part|self total" "$O/toggle/toggle-lines.txt"
