#!/bin/bash
# tests/gpu/framework_watch.sh OUTDIR - the cost of the companion's segment
# watch (torch.segment) on real PyTorch: GPT-2 small under the native
# allocator (a new segment is a cuMemAlloc) and the MLP, traced with
# CUPROBE_FRAMEWORK_WATCH=0 and with the default, alternating, 3 pairs each;
# prints steps/s per run, the ratio of medians, and the companion's own
# per-sample CPU time (segment_us_mean/max from companion.info at exit).
# Also a short growth run: the memory-growth finding must quote PyTorch's
# timeline with more than 2 samples.  KINDS (default "mlp gpt2") picks the
# workloads of the A/B part; KINDS= runs the growth check alone.
OUT=${1:-${OUT:-watch-out}}; mkdir -p "$OUT"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
python3 -c 'import torch' 2>/dev/null || { echo "SKIP: no torch"; exit 0; }
for kind in ${KINDS-mlp gpt2}; do
  for r in 1 2 3; do
    for w in $([ $((r % 2)) = 1 ] && echo 0 0.05 || echo 0.05 0); do   # order swapped each round (BENCHMARKS.md 2f)
      rm -f "$T"/*.trace
      s=$(CUPROBE_FRAMEWORK_WATCH=$w build/cuprobe run -o "$T/t-%p.trace" -- \
          python3 bench/gpu_steps.py $kind 6 2>/dev/null | awk '/^steps_per_s/ {print $2}')
      info=$(build/cuprobe-analyze dump "$T"/t-*.trace 2>/dev/null | grep 'companion.info' |
             grep -o 'segment_samples[^,]*,[^,]*,[^,]*' | tail -1 | tr -d '\\"')
      echo "$kind watch=$w steps_per_s=$s $info" | tee -a "$OUT/runs.txt"
    done
  done
done
for kind in ${KINDS-mlp gpt2}; do
  awk -v k=$kind '$1 == k { split($3, a, "="); if ($2 == "watch=0") o[++n0] = a[2]; else w[++n1] = a[2] }
    function med(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t } return x[int((n + 1) / 2)] }
    END { if (n0 && n1) printf "%s: watch on / off = %.3f (medians %s / %s steps/s)\n", k, med(w, n1) / med(o, n0), med(w, n1), med(o, n0) }' \
    "$OUT/runs.txt" | tee -a "$OUT/summary.txt"
done
# A growth of live tensors over ~3 s: PyTorch's own timeline in the finding.
cat >"$T/grow.py" <<'PY'
import time, torch
keep = []
x = torch.randn(1024, 1024, device="cuda")
for i in range(60):
    for _ in range(20):
        x = torch.tanh(x)
    keep.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
    time.sleep(0.05)
torch.cuda.synchronize()
print("kept", len(keep))
PY
build/cuprobe run -o "$T/g-%p.trace" -- python3 "$T/grow.py"
build/cuprobe-analyze report --no-progress "$T"/g-*.trace >"$OUT/grow.report" 2>&1
grep -E "memory-growth|PyTorch's own timeline" "$OUT/grow.report" | tee -a "$OUT/summary.txt"
