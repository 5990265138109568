#!/bin/bash
# tests/gpu/growth_warmup.sh OUTDIR - memory-growth on real PyTorch with a
# warm-up before the growth: a 1 GiB "model" and activations
# reserved in the first 5 steps, 30 steps that reuse them (the plateau,
# about a sixth of the work: the check's axis is kernel launches), then 150
# steps that each keep a 32 MiB tensor (losses.append(loss)); 20 ms apart.
# The finding must start at the growth (start_ns at or after the program's
# printed growth_start_ns, CLOCK_MONOTONIC like the trace), count only the
# growth (plateau_bytes > 0, growth_bytes below what was kept after the
# plateau), give a rate within 35% of the kept bytes per second, and call
# it live tensors.  Prints one PASS/FAIL line with the numbers; all output
# in OUTDIR.  Run from the repository root after make.
OUT=${1:-${OUT:-growth-warmup-out}}; mkdir -p "$OUT"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null ||
    { echo "SKIP: no torch with CUDA"; exit 0; }
cat >"$T/warmup_grow.py" <<'PY'
import time, torch
dev = "cuda"
model = torch.empty(1 << 30, dtype=torch.uint8, device=dev)   # the weights
x = torch.randn(2048, 2048, device=dev)
def step():
    y = x
    for _ in range(8):
        y = torch.tanh(y @ x)        # activations: reserved in the first steps
    return y.sum()
for _ in range(5):
    step().item()
    time.sleep(0.02)
for _ in range(30):                  # the plateau: the cache is reused
    step().item()
    time.sleep(0.02)
print("growth_start_ns", time.monotonic_ns(), flush=True)
keep, t0 = [], time.monotonic()
for _ in range(150):                 # the growth: every step keeps 32 MiB
    step().item()
    keep.append(torch.empty(32 << 20, dtype=torch.uint8, device=dev))
    time.sleep(0.02)
torch.cuda.synchronize()
secs = time.monotonic() - t0
print("kept_bytes", len(keep) * (32 << 20), "growth_s", round(secs, 3), flush=True)
PY
build/cuprobe run -o "$T/g-%p.trace" -- python3 "$T/warmup_grow.py" >"$OUT/prog.out" 2>"$OUT/prog.err"
build/cuprobe-analyze report --no-progress "$T"/g-*.trace >"$OUT/report.txt" 2>&1
build/cuprobe-analyze report --json "$T"/g-*.trace >"$OUT/report.json" 2>/dev/null
PYTHONPATH=tests/py python3 - "$OUT/prog.out" "$OUT/report.json" <<'PY' | tee "$OUT/summary.txt"
import sys
from report_findings import findings
out = dict(l.split()[0:2] for l in open(sys.argv[1]) if l.split() and l.split()[0] in
           ("growth_start_ns", "kept_bytes"))
growth_s = [float(l.split()[3]) for l in open(sys.argv[1]) if l.startswith("kept_bytes")]
f = findings(sys.argv[2], "memory-growth")
if not f or "growth_start_ns" not in out:
    print("FAIL: no memory-growth finding or no program output"); sys.exit(0)
d, sev = f[0]["details"], f[0]["severity"]
g0, kept = int(out["growth_start_ns"]), int(out["kept_bytes"])
true_rate = kept / growth_s[0]
checks = {
    "start at the growth": d.get("start_ns", 0) >= g0,
    "plateau seen": d.get("plateau_bytes", 0) > 0,
    "warm-up not counted": d["growth_bytes"] <= kept,
    "rate within 35%": abs(d["rate_bytes_per_s"] - true_rate) <= 0.35 * true_rate,
    "live tensors": d.get("torch_cause") == "tensors" and sev == "warning",
}
bad = [k for k, ok in checks.items() if not ok]
print("%s: %s; start %+.3f s from the growth, growth %.0f MiB of %.0f MiB kept, rate %.0f MiB/s "
      "(true %.0f MiB/s), plateau %.0f MiB, cause %s" %
      ("PASS" if not bad else "FAIL", ", ".join(bad) or "all checks",
       (d.get("start_ns", 0) - g0) / 1e9, d["growth_bytes"] / 2**20, kept / 2**20,
       d["rate_bytes_per_s"] / 2**20, true_rate / 2**20, d.get("plateau_bytes", 0) / 2**20,
       d.get("torch_cause")))
PY
grep -E "memory-growth|After the warm-up|PyTorch's own timeline" "$OUT/report.txt" | tee -a "$OUT/summary.txt"
