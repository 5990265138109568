#!/bin/sh
# The post-mortem joins the kernel log: tests/progs/gpu_lost launches a
# kernel on GPU 1, an Xid 79 for that GPU is logged (appended to the file
# CUPROBE_KMSG names) and a second later the synchronisation returns the
# injected sticky error 999.  The trace holds the Xid line (not the line
# logged before the run started), and the report says: Xid 79 on GPU 1,
# its time, how long before the error, not your code.  The program's
# output and exit status are the same as without the shim; a log the shim
# cannot read is said in one info finding.
. "$ROOT/tests/sh/lib.sh"
PROG="$B/tests/progs/gpu_lost"
[ -x "$PROG" ] && [ -f "$SHIM" ] && [ -x "$ANA" ] || skip "gpu_lost, the shim or the analyzer not built"
export LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=2 FAKECUDA_FAIL_LAUNCH=1 FAKECUDA_FAIL_CODE=999 TZ=UTC
unset CUPROBE_KMSG
# kl_json NAME ASSERTIONS: the details of the kernel-log finding of the JSON
# report of $TMP/NAME.trace, as `det`, pass the Python ASSERTIONS
kl_json() {
    "$ANA" report --json --no-progress "$TMP/$1.trace" >"$TMP/$1.json" 2>&1 || true
    python3 - "$TMP/$1.json" "$2" <<'PY' || die "kernel-log JSON of $1"
import json, sys
d = json.load(open(sys.argv[1]))
det = [f for f in d["findings"] if f["check"] == "kernel-log"][0]["details"]
exec(sys.argv[2])
PY
}
# a line from before the run: not part of it
printf '3,1000,1000,-;NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=old, An uncorrectable double bit error\n' >"$TMP/kmsg"
cp "$TMP/kmsg" "$TMP/kmsg0"

CUPROBE_KMSG="$TMP/kmsg0" "$PROG" >"$TMP/plain.out" 2>"$TMP/plain.err"
echo $? >"$TMP/plain.rc"
LD_PRELOAD="$PRELOAD" CUPROBE_OUTPUT="$TMP/lost.trace" CUPROBE_KMSG="$TMP/kmsg" "$PROG" >"$TMP/lost.out" 2>"$TMP/lost.err"
echo $? >"$TMP/lost.rc"
cmp -s "$TMP/plain.rc" "$TMP/lost.rc" || die "exit status $(cat "$TMP/lost.rc") under the shim, $(cat "$TMP/plain.rc") without"
[ "$(cat "$TMP/lost.rc")" = 1 ] || die "gpu_lost exited $(cat "$TMP/lost.rc"), want 1"
cmp -s "$TMP/plain.out" "$TMP/lost.out" || die "stdout differs under the shim"
grep -q 'gpu_lost: cuCtxSynchronize = 999' "$TMP/lost.err" || { cat "$TMP/lost.err"; die "no error 999"; }

"$ANA" dump "$TMP/lost.trace" >"$TMP/lost.dump" || die "dump failed"
expect_grep '^KMSG .* trigger=999 source=2 err=0 .* text=""$' "$TMP/lost.dump"
expect_grep '^KMSG .* trigger=999 .*text="3,2202,[0-9]+,-;NVRM: Xid \(PCI:0000:28:00\): 79, pid=.<unknown>., name=<unknown>, GPU has fallen off the bus\."$' "$TMP/lost.dump"
expect_no_grep 'name=old' "$TMP/lost.dump"

"$ANA" report --no-progress "$TMP/lost.trace" >"$TMP/lost.report" 2>&1 || true
expect_grep '^error +\[kernel-log\] Xid 79 on GPU 1 \(PCI 0000:28:00\.0\) at [0-9]{2}:[0-9]{2}:[0-9]{2}, 1\.[0-9] s before the error: the GPU has fallen off the bus; this is not your code$' "$TMP/lost.report"
expect_grep "The run's error: cuCtxSynchronize returned CUDA_ERROR_UNKNOWN \\(999\\)\\." "$TMP/lost.report"
expect_grep '^ +NVRM: Xid \(PCI:0000:28:00\): 79, pid=.<unknown>., name=<unknown>, GPU has fallen off the bus\.$' "$TMP/lost.report"
expect_grep '^ +Verdict: this GPU, not your code\.$' "$TMP/lost.report"
expect_grep '^ +First action: reboot the node \(or reset the GPU\)' "$TMP/lost.report"
kl_json lost 'ev = [e for e in det["events"] if e["xid"] == 79][0]
assert det["verdict"] == "this GPU" and ev["class"] == "hardware" and ev["gpu"].startswith("GPU 1 "), det
assert 0.9 <= ev["seconds_before_error"] < 5, ev'

# only the driver's cleanup (Xid 45) in the log: information without a
# verdict of its own, neither "your code" nor "this GPU"
: >"$TMP/kmsg45"
LD_PRELOAD="$PRELOAD" CUPROBE_OUTPUT="$TMP/x45.trace" CUPROBE_KMSG="$TMP/kmsg45" "$PROG" 45 >/dev/null 2>&1
"$ANA" report --no-progress "$TMP/x45.trace" >"$TMP/x45.report" 2>&1 || true
expect_grep '^info +\[kernel-log\] Xid 45 on GPU 1 \(PCI 0000:28:00\.0\) at [0-9:]+, 1\.[0-9] s before the error: preemptive cleanup; it follows an earlier error$' "$TMP/x45.report"
expect_grep '^ +Verdict: not known from the kernel log \(the Xid only follows an earlier error\)\.$' "$TMP/x45.report"
expect_no_grep 'your code' "$TMP/x45.report"
kl_json x45 'assert det["verdict"] == "unknown" and det["events"][0]["class"] == "aftermath", det'

# the log unreadable: said once, as info
LD_PRELOAD="$PRELOAD" CUPROBE_OUTPUT="$TMP/nolog.trace" CUPROBE_KMSG="$TMP/nodir/kmsg" "$PROG" >/dev/null 2>&1
"$ANA" dump "$TMP/nolog.trace" | grep -q '^KMSG .* trigger=999 source=2 err=2 ' || die "no KMSG record with ENOENT"
"$ANA" report --no-progress "$TMP/nolog.trace" >"$TMP/nolog.report" 2>&1 || true
expect_grep '^info +\[kernel-log\] the kernel log could not be read at the fatal error \(No such file or directory\)' "$TMP/nolog.report"
echo ok
