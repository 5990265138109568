#!/bin/bash
# Session 21, device call 2: call 1's floor again, in mirrored order, with
# one rung more (floor.patch, variants.sh):
#   fl3r  allocations and frees write five raw words through the recorder's
#         begin and commit, nothing else (no announcement, EV prefix,
#         varints, context, map; launches: the count only)
# and GPT-2 small under cudaMallocAsync with main and fl4 (its floor).
O=${OUT:?}
V=build/vv
D0=CUPROBE_STACK_DEPTH=0
RUNS="d0-3 async mlp 20 10 $D0
fl4-3 async mlp 20 10 $D0 RUN_CP=$V/fl4/bin/cuprobe
fl3r-1 async mlp 20 10 $D0 RUN_CP=$V/fl3r/bin/cuprobe
fl3-2 async mlp 20 10 $D0 RUN_CP=$V/fl3/bin/cuprobe
fl3-3 async mlp 20 10 $D0 RUN_CP=$V/fl3/bin/cuprobe
fl3r-2 async mlp 20 10 $D0 RUN_CP=$V/fl3r/bin/cuprobe
fl4-4 async mlp 20 10 $D0 RUN_CP=$V/fl4/bin/cuprobe
d0-4 async mlp 20 10 $D0
gpt2-new async gpt2 25 1
gpt2-fl4 async gpt2 25 1 RUN_CP=$V/fl4/bin/cuprobe" OUT="$O/toggle" BUDGET=470 bash tests/gpu/toggle.sh
