#!/bin/bash
# tests/gpu/ranks_torchrun.sh [OUTDIR] - both torchrun placements of a
# 2-rank job under `cuprobe run`, on 2 GPUs:
#   bug:  device="cuda" without set_device -> rank-placement error naming
#         ranks 0, 1 on GPU 0 and GPU 1 idle;
#   good: set_device(LOCAL_RANK)        -> no warning (--fail-on warning
#         passes; torchrun itself is the launcher: info).
# Skips (exit 77) with fewer than 2 GPUs or without torch/torchrun.
OUT=${1:-${OUT:-ranks-out}}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CP="$ROOT/build/cuprobe"
python3 -c 'import torch' 2>/dev/null || { echo "SKIP ranks_torchrun: torch cannot be imported"; exit 77; }
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())')
[ "$ngpu" -ge 2 ] || { echo "SKIP ranks_torchrun: needs 2 GPUs, this machine has $ngpu"; exit 77; }
TR="python3 -m torch.distributed.run"
fail=0
for pl in bug good; do
    d="$OUT/$pl"; rm -rf "$d"; mkdir -p "$d"
    echo "=== placement $pl"
    "$CP" run -o "$d/rank%r.%p.trace" -- $TR --standalone --nproc_per_node=2 \
        "$ROOT/tests/gpu/rank_worker.py" "$pl" 2>&1 | tail -n 4
    "$CP" report --no-progress "$d" >"$OUT/report-$pl.txt" 2>&1
    "$CP" report --no-progress --list "$d" >"$OUT/report-$pl.list" 2>&1
    "$CP" report --no-progress --fail-on warning "$d" >/dev/null 2>&1; rc=$?
    cat "$OUT/report-$pl.list"
    if [ $pl = bug ]; then
        grep -q '^rank-placement error' "$OUT/report-$pl.list" &&
            grep -q 'ranks 0, 1 on host .* all work on GPU 0' "$OUT/report-$pl.txt" ||
            { echo "FAIL bug: no rank-placement error naming ranks 0, 1"; fail=1; }
    else
        [ $rc -eq 0 ] || { echo "FAIL good: --fail-on warning exited $rc"; fail=1; }
    fi
done
[ $fail = 0 ] && echo "ranks_torchrun: PASS (reports in $OUT)" || echo "ranks_torchrun: FAIL (reports in $OUT)"
exit $fail
