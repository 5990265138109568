#!/bin/bash
# tests/gpu/fatal_errors.sh OUTDIR - three real crashes under `cuprobe run`
# (fatal-error), each reported with `cuprobe report` into OUTDIR:
#   mismatch  CUDA logits against CPU labels in cross_entropy (device mismatch)
#   assert    torch.zeros(4, device="cuda")[torch.tensor([10], device="cuda")]
#             (a device-side assert, surfacing at the next synchronisation)
#   oom       a real OOM: torch.empty of more than the card holds after
#             filling most of it
# Needs python3 with torch and one GPU; skips cleanly otherwise.  Under 2 min.
# Prints, per crash, the exit status and the fatal-error / oom lines.
OUT=${1:-${OUT:-fatal-errors-out}}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CP="$ROOT/build/cuprobe"
[ -x "$CP" ] || { echo "SKIP: $CP not built"; exit 0; }
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "SKIP: python3 with a CUDA torch is not available"
    exit 0
fi

cat >"$OUT/crash_mismatch.py" <<'EOF'
import torch
import torch.nn.functional as F

model = torch.nn.Linear(16, 4).cuda()
x = torch.randn(8, 16, device="cuda")
labels = torch.randint(0, 4, (8,))          # never moved to the GPU
logits = model(x)
loss = F.cross_entropy(logits, labels)      # device mismatch raises here
print("unreachable", loss.item())
EOF

cat >"$OUT/crash_assert.py" <<'EOF'
import torch

a = torch.zeros(4, device="cuda")
b = a * 2 + 1
x = torch.zeros(4, device="cuda")[torch.tensor([10], device="cuda")]
y = b.sum()
print("value:", x.item(), y.item())         # the assert surfaces here (or earlier)
EOF

cat >"$OUT/crash_oom.py" <<'EOF'
import torch

free, total = torch.cuda.mem_get_info()
keep = torch.empty(int(free * 0.9) // 4, dtype=torch.float32, device="cuda")
more = torch.empty(int(total * 0.5) // 4, dtype=torch.float32, device="cuda")  # OOM here
print("unreachable", keep.numel(), more.numel())
EOF

for name in mismatch assert oom; do
    rm -f "$OUT/$name".*.trace
    start=$(date +%s.%N)
    timeout 90 "$CP" run -o "$OUT/$name.%p.trace" -- python3 "$OUT/crash_$name.py" \
        >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
    timeout 60 "$CP" report --no-progress "$OUT/$name".*.trace >"$OUT/report-$name.txt" 2>&1
    timeout 60 "$CP" report --no-progress --json "$OUT/$name".*.trace >"$OUT/report-$name.json" 2>&1
    timeout 60 "$CP" dump "$OUT/$name".*.trace 2>/dev/null | grep -E '^(ASYNC_ERROR|INFLIGHT|SIGNAL|END) ' \
        >"$OUT/dump-$name.txt"
    echo "=== $name: exit $rc, ${secs}s; python said: $(grep -E 'Error|error' "$OUT/$name.stderr" | tail -n 1 | cut -c1-160)"
    grep -E '^(error|warning|info) +\[(fatal-error|oom)\]' "$OUT/report-$name.txt"
    grep -E '^  (Your line|Launches in flight|First reported|CUDA_ERROR|The run died|  raised at|PyTorch names|Likely origin|This process allocated| +[0-9]+\. )' \
        "$OUT/report-$name.txt" | head -n 20
done
echo "reports: $OUT/report-{mismatch,assert,oom}.txt"
