#!/bin/bash
# tests/gpu/step_events.sh OUTDIR - what a training step asks of the shim:
# for each KIND of bench/gpu_steps.py (KINDS, default "mlp gpt2"), runs
# under `cuprobe run` (PYTORCH_CUDA_ALLOC_CONF as set), then per step:
# records by type, launches (summed LAUNCH_COUNT), and how deep the call
# sites of the allocations are (native and Python frames of the STACK each
# ALLOC names), all counted by tests/gpu/trace_stats.py.
OUT=${1:-${OUT:-events-out}}; mkdir -p "$OUT" || exit 1
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "skip: torch with CUDA is not importable here" | tee "$OUT/summary.txt"; exit 0; }
: >"$OUT/summary.txt"
# Two runs per kind, SECS and 3 * SECS seconds of steps: the differences of
# their counts over the difference of their steps leave start-up and
# warm-up out.
S=${SECS:-3}
for kind in ${KINDS:-mlp gpt2}; do
    for secs in "$S" $((3 * S)); do
        t="$OUT/$kind-$secs.trace"
        build/cuprobe run -o "$t" -- python3 bench/gpu_steps.py "$kind" "$secs" >"$OUT/$kind-$secs.out" 2>&1
        { echo "{\"steps\": $(awk '/^steps / {print $2}' "$OUT/$kind-$secs.out" | grep . || echo 0),"
          echo "\"stats\":"; build/cuprobe-analyze dump "$t" 2>/dev/null | python3 tests/gpu/trace_stats.py
          echo "}"; } >"$OUT/$kind-$secs.json"
        rm -f "$t"
    done
    python3 - "$kind" "$OUT/$kind-$S.json" "$OUT/$kind-$((3 * S)).json" <<'PY' | tee -a "$OUT/summary.txt"
import collections, json, sys
def load(p):
    j = json.load(open(p)); st = j["stats"]
    c = collections.Counter(st["types"])
    c["launches"] = sum(st["launches"].values())
    for k, v in st["sites"].items():
        c[("site",) + tuple(int(x) for x in k.split(","))] = v
    return j["steps"], c
(s1, a), (s2, b) = load(sys.argv[2]), load(sys.argv[3])
ds = s2 - s1
print("%s: %d and %d timed steps; per step from their difference:" % (sys.argv[1], s1, s2))
if ds <= 0:
    sys.exit("  no difference in steps")
d = {k: b[k] - a[k] for k in set(a) | set(b)}
for k in sorted((k for k in d if isinstance(k, str)), key=lambda k: -d[k])[:14]:
    print("  %-14s %9.1f" % (k, d[k] / ds))
sites = {k: v for k, v in d.items() if not isinstance(k, str) and v > 0}
tot = sum(sites.values()) or 1
print("  allocations by (native, python) frames of their site: " + ", ".join(
    "(%d, %d) %.0f%%" % (k[1], k[2], 100.0 * v / tot) for k, v in sorted(sites.items(), key=lambda kv: -kv[1])[:8]))
PY
done
