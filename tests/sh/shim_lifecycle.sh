# shim_lifecycle.sh - fork (with and without CUDA in the child), exec, _exit,
# SIGKILL in the middle of a run, and a segfault.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
P="$B/tests/progs/shim_lifecycle"
run() { CUPROBE_OUTPUT="$TMP/$1/t-%p.trace" LD_PRELOAD="$PRELOAD" "$P" "$@"; }

mkdir -p "$TMP/fork-cuda" "$TMP/fork-nocuda" "$TMP/exec" "$TMP/_exit" "$TMP/loop" "$TMP/segv"
run fork-cuda >/dev/null || die "fork-cuda failed"
[ "$(ls "$TMP/fork-cuda" | wc -l)" = 2 ] || die "fork-cuda: expected 2 traces, got $(ls "$TMP/fork-cuda")"
for f in "$TMP"/fork-cuda/*.trace; do "$ANA" dump "$f" >"$f.txt" || die "fork-cuda: $f incomplete"; done
parent=$(grep -l '^FORK' "$TMP"/fork-cuda/*.txt) || die "no FORK record in the parent"
child=$(grep -L '^FORK' "$TMP"/fork-cuda/*.txt)
ppid=$(sed -n 's/^HEADER .* ppid=\([0-9]*\) .*/\1/p' "$child")
pid=$(sed -n 's/^HEADER .* pid=\([0-9]*\) .*/\1/p' "$parent")
[ "$ppid" = "$pid" ] || die "child's ppid $ppid is not the parent's pid $pid"
expect_grep '^ALLOC .*size=8192' "$child"
expect_no_grep '^ALLOC .*size=4096' "$child"     # the parent's records stay in the parent's file

run fork-nocuda >/dev/null || die "fork-nocuda failed"
[ "$(ls "$TMP/fork-nocuda" | wc -l)" = 1 ] || die "fork-nocuda: a child without CUDA must write nothing"

# A child forked after CUDA was initialised, killed (SIGKILL: nothing runs)
# right after its cuInit failed, long before a timed flush: the failed
# cuInit was flushed at once, and the report finds the fork.
mkdir -p "$TMP/fork-killed"
FAKECUDA_FORK_POISON=1 CUPROBE_FLUSH_MS=10000 run fork-killed >"$TMP/fork-killed.out" ||
    die "fork-killed failed"
expect_grep '^child cuInit 3$' "$TMP/fork-killed.out"
child=$(for f in "$TMP"/fork-killed/*.trace; do
    "$ANA" dump "$f" 2>/dev/null | grep -q '^FORK' || echo "$f"; done)
[ -n "$child" ] || die "fork-killed: no trace of the child"
"$ANA" dump "$child" >"$TMP/fork-killed.txt" 2>&1
expect_grep '^CALL .*api=cuInit result=3 ' "$TMP/fork-killed.txt"
"$ANA" report --no-progress "$TMP/fork-killed" >"$TMP/fork-killed.report" 2>&1
expect_grep '\[fork-after-init\] .*then called cuInit without an exec' "$TMP/fork-killed.report"

run exec || die "exec failed"
"$ANA" dump "$TMP"/exec/*.trace >"$TMP/exec.txt" || die "exec: trace incomplete"
expect_grep '^EXEC .*path="/bin/true"' "$TMP/exec.txt"
expect_grep '^END .*reason=exec' "$TMP/exec.txt"

run _exit; rc=$?
[ $rc = 3 ] || die "_exit: status $rc, expected 3"
"$ANA" dump "$TMP"/_exit/*.trace >"$TMP/_exit.txt" || die "_exit: trace incomplete"
expect_grep '^END .*reason=_exit status=3' "$TMP/_exit.txt"

# SIGKILL: nothing can run, the file must decode up to the last timed flush.
( CUPROBE_FLUSH_MS=50 CUPROBE_OUTPUT="$TMP/loop/t-%p.trace" LD_PRELOAD="$PRELOAD" exec "$P" loop ) >"$TMP/loop.out" &
pid=$!
i=0; while ! grep -q ready "$TMP/loop.out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
sleep 0.3
kill -9 $pid; wait $pid 2>/dev/null
pkill -9 -f "$P loop" 2>/dev/null
"$ANA" dump "$TMP"/loop/*.trace >"$TMP/loop.txt" 2>"$TMP/loop.err"; rc=$?
[ $rc = 2 ] || die "killed run: dump should exit 2 (truncated), got $rc"
expect_grep 'truncated' "$TMP/loop.err"
n=$(grep -c '^ALLOC .*size=1024' "$TMP/loop.txt")
[ "$n" -gt 100 ] || die "killed run: only $n allocations decoded"

run segv 2>/dev/null; rc=$?
[ $rc = 139 ] || die "segv: the program's own fate must be kept (status 139), got $rc"
"$ANA" dump "$TMP"/segv/*.trace >"$TMP/segv.txt" 2>&1
expect_grep '^SIGNAL .*signo=11' "$TMP/segv.txt"
expect_grep '^ALLOC .*size=4096' "$TMP/segv.txt"
# cuprobe_bench_pause(): what happens while paused is not recorded, and
# recording resumes; the trace says it is incomplete.
mkdir -p "$TMP/pause"
out=$(run pause) || die "pause failed"
[ "$out" = "pause 0 resume 0" ] || die "pause: the calls returned '$out'"
"$ANA" dump "$TMP"/pause/*.trace >"$TMP/pause.txt" || die "pause: trace incomplete"
expect_grep '^ALLOC .*size=1024' "$TMP/pause.txt"
expect_no_grep '^ALLOC .*size=2048' "$TMP/pause.txt"
expect_grep '^ALLOC .*size=3072' "$TMP/pause.txt"
expect_grep 'recording paused for timing' "$TMP/pause.txt"
out=$(CUPROBE_DISABLE=1 LD_PRELOAD="$PRELOAD" "$P" pause) || die "pause (disabled) failed"
[ "$out" = "pause -19 resume -19" ] || die "pause with CUPROBE_DISABLE=1: '$out', expected -ENODEV"
echo "lifecycle ok"
