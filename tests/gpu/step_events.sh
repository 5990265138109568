#!/bin/bash
# tests/gpu/step_events.sh OUTDIR - what a training step asks of the shim:
# for each KIND of bench/gpu_steps.py (KINDS, default "mlp gpt2"), runs
# under `cuprobe run` (PYTORCH_CUDA_ALLOC_CONF as set), then per step:
# records by type, launches (summed LAUNCH_COUNT), and how deep the call
# sites of the allocations are (native and Python frames of the STACK each
# ALLOC names).
OUT=${1:-${OUT:-events-out}}; mkdir -p "$OUT" || exit 1
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    { echo "skip: torch with CUDA is not importable here" | tee "$OUT/summary.txt"; exit 0; }
: >"$OUT/summary.txt"
# Two runs per kind, SECS and 3 * SECS seconds of steps: the differences of
# their counts over the difference of their steps leave start-up and
# warm-up out.
count() {   # TRACE -> "TYPE N" lines, "launches N", "site NAT PY N" lines
    build/cuprobe-analyze dump "$1" 2>/dev/null | python3 -c '
import collections, re, sys
types = collections.Counter(); launches = 0; depth = {}; site = collections.Counter()
for line in sys.stdin:
    typ = line.split(" ", 1)[0]
    types[typ] += 1
    if typ == "STACK":
        sid = re.search(r" id=(\d+)", line).group(1)
        nat = re.search(r"native=\[([^\]]*)\]", line).group(1).split()
        py = re.search(r"py=\[([^\]]*)\]", line).group(1).split()
        depth[sid] = (len(nat), len(py))
    elif typ == "LAUNCH_COUNT":
        m = re.search(r" count=(\d+)", line)
        launches += int(m.group(1)) if m else 0
    elif typ == "ALLOC":
        m = re.search(r" stack=(\d+)", line)
        site[depth.get(m.group(1), (-1, -1)) if m else (-1, -1)] += 1
for t, n in types.items():
    print("type", t, n)
print("type launches", launches)
for (a, b), n in site.items():
    print("site", a, b, n)
'
}
S=${SECS:-3}
for kind in ${KINDS:-mlp gpt2}; do
    for secs in "$S" $((3 * S)); do
        t="$OUT/$kind-$secs.trace"
        build/cuprobe run -o "$t" -- python3 bench/gpu_steps.py "$kind" "$secs" >"$OUT/$kind-$secs.out" 2>&1
        { echo "steps $(awk '/^steps / {print $2}' "$OUT/$kind-$secs.out")"; count "$t"; } >"$OUT/$kind-$secs.counts"
        rm -f "$t"
    done
    python3 - "$kind" "$OUT/$kind-$S.counts" "$OUT/$kind-$((3 * S)).counts" <<'PY' | tee -a "$OUT/summary.txt"
import collections, sys
def load(p):
    c = collections.Counter(); steps = 0
    for line in open(p):
        w = line.split()
        if w[0] == "steps":
            steps = int(w[1]) if len(w) > 1 else 0
        elif w[0] == "type":
            c[w[1]] = int(w[2])
        elif w[0] == "site":
            c[("site", int(w[1]), int(w[2]))] = int(w[3])
    return steps, c
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
