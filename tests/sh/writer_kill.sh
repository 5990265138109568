#!/bin/sh
# writer_kill.sh - SIGKILL in the middle of a recording: the trace decodes
# up to the last timed flush, holds records, and dump calls it truncated
# (exit 2, "at decompressed byte X: truncated after N records").
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] && [ -x "$ANA" ] || die "helper or analyzer not built"
CUPROBE_OUTPUT="$TMP/k-%p.trace" CUPROBE_FLUSH_MS=20 "$HELPER" spin >"$TMP/out" 2>&1 &
pid=$!
wait_line ready "$TMP/out" $pid 100 "helper never got ready"
sleep 0.2   # several flush periods
kill -9 $pid
wait $pid 2>/dev/null
trace="$TMP/k-$pid.trace"
[ -s "$trace" ] || die "no trace file $trace"
"$ANA" dump "$trace" >"$TMP/dump" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "dump of a killed trace: exit $rc, expected 2"
expect_grep "^$trace: at decompressed byte [0-9]+: truncated after [0-9]+ records \(no END" "$TMP/err"
expect_no_grep '^END ' "$TMP/dump"
n=$(grep -c '^CALL ' "$TMP/dump")
[ "$n" -ge 20000 ] || die "only $n CALL records survived (the helper had made 20000 before 'ready')"
head -n 1 "$TMP/dump" | grep -q '^HEADER ' || die "first record is not HEADER"
echo "writer_kill: $n records decoded from a SIGKILLed process"
