#!/bin/bash
# Session 21, device call 1: the event path's floor in situ, and -fno-plt.
# The MLP under cudaMallocAsync at CUPROBE_STACK_DEPTH=0 (no call sites),
# with parts of the event path switched off by floor.patch's measurement-only
# builds (variants.sh; never on main):
#   fl1  no launch ring or cross-device check (launches: the count only)
#   fl2  fl1, and no cuCtxGetCurrent (the thread's last context seen)
#   fl3  fl2, and no device map insert or remove
#   fl4  the hooks of allocations, frees and launches return at once
#        (the wrappers' recording state: enter, clocks, leave)
# then defaults, main (-fno-plt) against plt (the same tree without it), ABBA.
O=${OUT:?}
V=build/vv
RUNS="d0-1 async mlp 20 10 CUPROBE_STACK_DEPTH=0
fl4-1 async mlp 20 10 CUPROBE_STACK_DEPTH=0 RUN_CP=$V/fl4/bin/cuprobe
fl3-1 async mlp 20 10 CUPROBE_STACK_DEPTH=0 RUN_CP=$V/fl3/bin/cuprobe
fl2-1 async mlp 20 10 CUPROBE_STACK_DEPTH=0 RUN_CP=$V/fl2/bin/cuprobe
fl1-1 async mlp 20 10 CUPROBE_STACK_DEPTH=0 RUN_CP=$V/fl1/bin/cuprobe
d0-2 async mlp 20 10 CUPROBE_STACK_DEPTH=0
fl4-2 async mlp 20 10 CUPROBE_STACK_DEPTH=0 RUN_CP=$V/fl4/bin/cuprobe
new-1 async mlp 20 10
plt-1 async mlp 20 10 RUN_CP=$V/plt/bin/cuprobe
plt-2 async mlp 20 10 RUN_CP=$V/plt/bin/cuprobe
new-2 async mlp 20 10" OUT="$O/toggle" BUDGET=560 bash tests/gpu/toggle.sh
