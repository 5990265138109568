#!/bin/bash
# Session 21, device call 3: the floor for GPT-2 small under cudaMallocAsync
# (call 2 had main 0.948 and fl4 0.993): the bare record (fl3r), the record
# only (fl3), main without call sites, and fl4 again (floor.patch builds).
O=${OUT:?}
V=build/vv
D0=CUPROBE_STACK_DEPTH=0
RUNS="gpt2-fl3r async gpt2 25 1 $D0 RUN_CP=$V/fl3r/bin/cuprobe
gpt2-fl3 async gpt2 25 1 $D0 RUN_CP=$V/fl3/bin/cuprobe
gpt2-d0 async gpt2 25 1 $D0
gpt2-fl4 async gpt2 25 1 $D0 RUN_CP=$V/fl4/bin/cuprobe" OUT="$O/toggle" BUDGET=300 bash tests/gpu/toggle.sh
