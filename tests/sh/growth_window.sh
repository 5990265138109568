#!/bin/sh
# growth_window.sh - memory-growth measures from where the growth starts,
# not from the run's first allocation or PyTorch's first sample.
# tests/scenarios/growth_torch_warmup.c: a warm-up of 50 segments, a
# plateau of ~0.3 s, then ~0.25 s of growth with a torch.segment record
# after each segment; it prints the growth's start and end (CLOCK_MONOTONIC,
# the trace's clock).
#   1. The finding's start_ns is the growth's first segment (at or after
#      growth_start_ns, within its first quarter), its duration is the
#      growth's time, its rate growth_bytes / duration_s; the amount starts
#      at the plateau (101 MiB).  Measured from the first allocation, the
#      start was 0.3 s too early and the warm-up's 100 MiB counted.
#   2. The site's count is the growth's allocations, like its bytes: warm-up
#      and growth take their segments at one line, and the site says 61
#      segments for its 122 MiB (each 2 MiB), not the run's 112.
#   3. SC_GROWTH=cache: the growth's segments hold no live tensors, so
#      PyTorch's timeline over the growth says the cache grew: info.  From
#      the run's first sample, the warm-up's weights looked like growing
#      tensors (a warning).
#   4. SC_GROWTH=gather: tensors gathered by concatenation, the timeline's
#      samples stopping before the growth does: growing tensors.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
P="$B/tests/scenarios/growth_torch_warmup"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$P" ] || die "shim, analyzer or $P not built"
[ -f "$FAKE_DIR/libcuda.so.1" ] || die "fake driver not built"
command -v python3 >/dev/null 2>&1 || skip "no python3 (reads the JSON report)"

run() { # run NAME [VAR=VALUE...]
    name=$1; shift
    env "$@" CUPROBE_OUTPUT="$TMP/$name.trace" LD_PRELOAD="$PRELOAD" \
        LD_LIBRARY_PATH="$FAKE_DIR" "$P" >"$TMP/$name.out" 2>&1 || {
        cat "$TMP/$name.out"; die "$name: program failed"; }
    "$ANA" report --json "$TMP/$name.trace" >"$TMP/$name.json" || die "$name: report failed"
    "$ANA" report "$TMP/$name.trace" >"$TMP/$name.report" 2>&1
}

# The growth finding's fields: severity start_ns duration_s rate growth plateau cause
fields() {
    PYTHONPATH="$ROOT/tests/py" python3 - "$1" <<'EOF'
import sys
from report_findings import findings
f = findings(sys.argv[1], "memory-growth")
if len(f) != 1:
    sys.exit("expected one memory-growth finding, found %d" % len(f))
d = f[0]["details"]
print(f[0]["severity"], d.get("start_ns", 0), d["duration_s"], d["rate_bytes_per_s"],
      d["growth_bytes"], d.get("plateau_bytes", 0), d.get("torch_cause", "-"))
EOF
}

run tensors
out=$(fields "$TMP/tensors.json") || die "tensors: $out"
set -- $out
sev=$1 start=$2 dur=$3 rate=$4 growth=$5 plateau=$6 cause=$7
g0=$(sed -n 's/^growth_start_ns //p' "$TMP/tensors.out")
g1=$(sed -n 's/^growth_end_ns //p' "$TMP/tensors.out")
[ -n "$g0" ] && [ -n "$g1" ] || die "no growth stamps: $(cat "$TMP/tensors.out")"
echo "growth $g0..$g1; finding: $out"
[ "$sev" = warning ] && [ "$cause" = tensors ] || die "expected a warning for growing tensors: $out"
[ "$growth" = 106954752 ] || die "growth $growth bytes, expected 102 MiB (from the plateau)"
[ "$plateau" = 105906176 ] || die "plateau $plateau bytes, expected 101 MiB"
python3 - "$g0" "$g1" "$start" "$dur" "$rate" "$growth" <<'EOF' || die "start or rate wrong"
import sys
g0, g1, start = (int(x) for x in sys.argv[1:4])
dur, rate, growth = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
span = g1 - g0
assert g0 <= start < g0 + span / 4, "start %d not at the growth's start %d" % (start, g0)
grow_s = (g1 - start) / 1e9
assert grow_s * 0.9 <= dur <= grow_s * 1.25 + 0.002, "duration %.4f s, growth took %.4f s" % (dur, grow_s)
assert abs(rate - growth / dur) <= 0.01 * rate, "rate %.0f != %d / %.4f" % (rate, growth, dur)
EOF
expect_grep "after its warm-up plateau, to the end" "$TMP/tensors.report"
PYTHONPATH="$ROOT/tests/py" python3 - "$TMP/tensors.json" <<'EOF' || die "site counts do not match the window"
import sys
from report_findings import findings
f = findings(sys.argv[1], "memory-growth")[0]
sites = [(s["count"], s["bytes"]) for s in f["sites"]]
print("sites (count, bytes):", sites, "finding count", f["count"])
assert len(sites) == 1, sites
n, b = sites[0]
assert b == n * (2 << 20), "%d allocations for %d bytes: not the same window" % (n, b)
assert n == 61 and f["count"] == n, "count %d (finding %d), expected 61" % (n, f["count"])
EOF

run cache SC_GROWTH=cache
out=$(fields "$TMP/cache.json") || die "cache: $out"
set -- $out
[ "$1" = info ] && [ "$7" = cache ] || die "expected info for cache growth: $out"
expect_grep "PyTorch's own timeline \(62 samples of the growth\): allocated 100.00 MiB -> 100.00 MiB, reserved 102.00 MiB -> 224.00 MiB: the cache grows" "$TMP/cache.report"

# 4. SC_GROWTH=gather: live tensors grew by 90 MiB, under a sixteenth of
#    the driver's growth but over a sixteenth of the 1.25 GiB the pool
#    reserved between the timeline's two ends (its last sample two thirds
#    of the way): growing tensors, a warning.
run gather SC_GROWTH=gather FAKECUDA_MEM=3G
out=$(fields "$TMP/gather.json") || die "gather: $out"
set -- $out
[ "$1" = warning ] && [ "$7" = tensors ] || die "expected a warning for gathered tensors: $out"
expect_grep "PyTorch's own timeline \(4[0-9] samples of the growth\): .*: live tensors are growing" "$TMP/gather.report"
echo "ok"
