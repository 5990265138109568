#!/bin/sh
# writer_oversubscribed.sh - 64 busy recording threads pinned to 2 cores,
# SIGKILLed 3 times: the trace loses at most one flush interval (median
# of the runs; bench/kill_window.sh measures it: the time of the last record
# the program made, noted by each thread in an mmap'd file that survives
# the kill, minus the last record the trace kept).  Before the writer
# stopped waiting for buffer locks and producers took over overdue
# flushes, the median was 0.9 s at a 100 ms interval.
# tier: long
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$B/bench/kill_window" ] || die "bench/kill_window not built"
command -v taskset >/dev/null 2>&1 || skip "taskset not found"
ncpu=$(nproc 2>/dev/null || echo 1)
cpus=0,1
[ "$ncpu" -ge 2 ] || cpus=0
export CUPROBE_FLUSH_MS=200
B="$B" sh "$ROOT/bench/kill_window.sh" 64 3 "$cpus" >"$TMP/out" 2>&1
cat "$TMP/out"
med=$(sed -n 's/.* median=\([0-9.-]*\) .*/\1/p' "$TMP/out")
[ -n "$med" ] || die "no measurement"
awk -v m="$med" -v f="$CUPROBE_FLUSH_MS" 'BEGIN { exit !(m <= f) }' ||
    die "a SIGKILL lost ${med} ms (median) with a ${CUPROBE_FLUSH_MS} ms flush interval"
echo "oversubscribed: median loss ${med} ms <= ${CUPROBE_FLUSH_MS} ms"
