#!/bin/bash
# tests/gpu/host_killed.sh OUTDIR - the killed finding's host memory on a
# real driver: PyTorch pins 1 GiB of host tensors
# (torch.empty(pin_memory=True): cuMemHostAlloc through its caching host
# allocator) and touches a 2 GiB numpy array, prints "ready" and waits; the
# script SIGKILLs it and reports.  Checks: the last HOSTMEM's pinned is at
# least the 1 GiB PyTorch pinned (its allocator rounds up to powers of two:
# the driver-side figure is printed next to it), RSS holds the 3 GiB, the
# report says "Host memory at the last sample" and a verdict (not short on
# an H200 host with free memory).  Prints a short summary; everything is
# under OUTDIR.
OUT=${1:-${OUT:-host-killed-out}}; mkdir -p "$OUT"
python3 -c 'import torch, numpy; assert torch.cuda.is_available()' 2>/dev/null ||
    { echo "host_killed: SKIP (torch with CUDA or numpy not importable)"; exit 0; }
cat >"$OUT/hold.py" <<'EOF'
import os, time, numpy as np, torch
torch.cuda.init()
pinned = [torch.empty(256 << 20, dtype=torch.uint8, pin_memory=True) for _ in range(4)]
for p in pinned:
    p.fill_(1)
heap = np.ones(2 << 30, dtype=np.uint8)
dev = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
time.sleep(1.5)   # samples after the last change
print("ready", os.getpid(), flush=True)
time.sleep(600)
EOF
build/cuprobe run -o "$OUT/t-%p.trace" -- python3 "$OUT/hold.py" >"$OUT/run.out" 2>&1 &
for i in $(seq 300); do grep -q ready "$OUT/run.out" && break; sleep 0.2; done
grep -q ready "$OUT/run.out" || { echo "host_killed: FAIL (never ready)"; cat "$OUT/run.out"; exit 1; }
sleep 0.5
kill -9 "$(awk '$1 == "ready" {print $2}' "$OUT/run.out")"   # the traced python
wait
trace=$(ls -S "$OUT"/t-*.trace | head -n 1)
build/cuprobe-analyze report --no-progress "$trace" >"$OUT/report.txt" 2>&1
echo "report exit $?" >>"$OUT/report.txt"
build/cuprobe-analyze report --no-progress --json "$trace" >"$OUT/report.json" 2>/dev/null
build/cuprobe-analyze dump "$trace" 2>/dev/null | grep -E '^(HOSTINFO|HOSTMEM) |kind=host_' >"$OUT/host.dump"
last=$(grep '^HOSTMEM ' "$OUT/host.dump" | tail -n 1)
pinned=$(sed -n 's/.* pinned=\([0-9]*\).*/\1/p' <<<"$last")
rss=$(sed -n 's/.* rss=\([0-9]*\).*/\1/p' <<<"$last")
allocs=$(awk '/^ALLOC .*kind=host_pinned/ { for (i = 1; i <= NF; i++) if ($i ~ /^size=/) s += substr($i, 6) }
              END { print s + 0 }' "$OUT/host.dump")
echo "last HOSTMEM: $last"
echo "pinned ${pinned:-?} bytes (host_pinned ALLOC records sum to $allocs); rss ${rss:-?}"
grep -E 'Host memory at the last sample|Peak RSS|RSS (grew|fell|was)|Verdict' "$OUT/report.txt"
ok=1
[ "${pinned:-0}" -ge $((1 << 30)) ] || { echo "FAIL: pinned < 1 GiB"; ok=0; }
[ "${rss:-0}" -ge $((3 << 30)) ] || { echo "FAIL: rss < 3 GiB"; ok=0; }
grep -q 'Host memory at the last sample' "$OUT/report.txt" || { echo "FAIL: no host memory line"; ok=0; }
[ $ok = 1 ] && echo "host_killed: PASS" || echo "host_killed: FAIL"
