#!/bin/bash
# Session 20, device call 3: issue 16's cudaMallocAsync rows with this main
# (44dae5f: free sites only where read, the walk's prefetched frames) against
# session 19's (3b9b1cc, build/vv/a0), processes in turn (ABBA).  build/ was
# made at 44dae5f; toggle.txt's `git describe` is the device copy's stale
# metadata.
O=${OUT:?}
A0="RUN_CP=build/vv/a0/bin/cuprobe"
RUNS="a0-1 async mlp 20 10 $A0
new-1 async mlp 20 10
new-2 async mlp 20 10
a0-2 async mlp 20 10 $A0
new-d0 async mlp 20 10 CUPROBE_STACK_DEPTH=0
gpt2-a0-1 async gpt2 25 1 $A0
gpt2-new-1 async gpt2 25 1
gpt2-new-2 async gpt2 25 1
gpt2-a0-2 async gpt2 25 1 $A0" OUT="$O/toggle" BUDGET=420 bash tests/gpu/toggle.sh
