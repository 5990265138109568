#!/bin/sh
# pictures_perfetto.sh - `cuprobe export --perfetto` on the golden traces
# (one process, an OOM with PyTorch's records, two processes) and on the
# demo program run on the fake driver: the JSON parses, events are in time
# order per process, one track per trace, the highest memory counter of
# each device is the JSON report's peak_bytes, OOMs and findings appear as
# instants, each finding of the demo at the time its page gives it
# (tests/sh/pictures_check.py).  A cut trace exports what decoded
# and exits 2; an unwritable output exits 2 naming it.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read JSON)"
cd "$ROOT" || die "no $ROOT"
CHECK="python3 $ROOT/tests/sh/pictures_check.py"

# The demo: two fake GPUs, a leak, pageable copies, a cross-device kernel.
FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$FAKE_DIR" \
    "$CUPROBE" run -o "$TMP/demo-%p.trace" -- "$B/tests/progs/demo_train" >/dev/null 2>&1 ||
    die "demo run failed"

one() {
    name=$1; shift
    "$ANA" report --json --no-progress "$@" >"$TMP/$name.report.json"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "$name: report exit $rc"
    "$CUPROBE" export --perfetto "$TMP/$name.perfetto.json" --slow-us 1 "$@" ||
        die "$name: export exit $?"
    [ -z "${PAGE:-}" ] || "$ANA" report --html "$TMP/$name.html" --no-progress "$@" >/dev/null
    $CHECK perfetto "$TMP/$name.perfetto.json" "$TMP/$name.report.json" $# ${PAGE:+"$TMP/$name.html"} ||
        die "$name: export check failed"
}
one mix tests/golden/report_mix.trace
one oom_torch tests/golden/report_oom_torch.trace
one fork tests/golden/report_fork_0.trace tests/golden/report_fork_1.trace
PAGE=1 one demo "$TMP"/demo-*.trace

# Slow calls became slices (the threshold is 1 us here) and the OOM an instant.
grep -q '"ph":"X"' "$TMP/mix.perfetto.json" || die "no slices in the mix export"
grep -q '"cat":"oom"' "$TMP/oom_torch.perfetto.json" || die "no OOM instant"
grep -q '"name":"GPU 0 framework"' "$TMP/oom_torch.perfetto.json" ||
    die "no framework counter though the trace has PyTorch's records"

# Bad input: a corrupt trace exits 2; an unwritable output names itself.
head -c 300 tests/golden/report_mix.trace >"$TMP/cut.trace"
"$ANA" export --perfetto "$TMP/cut.json" "$TMP/cut.trace" 2>"$TMP/cut.err"
[ $? -eq 2 ] || die "truncated trace: expected exit 2"
"$ANA" export --perfetto "$TMP/nodir/x.json" tests/golden/report_mix.trace 2>"$TMP/w.err"
[ $? -eq 2 ] || die "unwritable output: expected exit 2"
expect_grep "nodir/x.json" "$TMP/w.err"
"$ANA" export tests/golden/report_mix.trace 2>/dev/null
[ $? -eq 2 ] || die "export without --perfetto: expected exit 2"
echo "perfetto exports check out"
