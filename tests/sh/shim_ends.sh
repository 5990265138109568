#!/bin/sh
# shim_ends.sh - how a process ended, and what it did to the shim's file,
# told truthfully (tests/progs/shim_ends.c, the fake driver):
#   - the program closes every descriptor from 3 up and opens a file of its
#     own, or dup2()s its file over every open descriptor: its file holds
#     only what it wrote; the trace is whole (END, every allocation made
#     after), records FD_LOST, and the report says the program took
#     cuprobe's descriptor, not that the process was killed;
#   - the same, and the program removes the trace: one message on stderr
#     naming what happened; its file still holds only its own lines;
#   - quick_exit(7): END(quick_exit, 7), after the allocations made since
#     the last flush and in its at_quick_exit handler;
#   - exit(300): the status is recorded as the parent sees it, 44;
#   - a SIGSEGV the program's handler recovers from (siglongjmp), and a
#     Ctrl-C Python catches before exiting 0: SIGNAL is in the trace, but
#     no fatal-error and no "died of signal".
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
P="$B/tests/progs/shim_ends"
[ -x "$P" ] && [ -x "$B/tests/progs/shim_lifecycle" ] || die "test programs not built"

# run NAME WANT_RC CMD...: trace CMD into $TMP/NAME/, its dump in $TMP/NAME.dump
# and its report in $TMP/NAME.rep.
run() {
    name=$1 want=$2; shift 2
    mkdir -p "$TMP/$name"
    CUPROBE_OUTPUT="$TMP/$name/t-%p.trace" CUPROBE_ROOT_PID=$$ LD_PRELOAD="$PRELOAD" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    [ "$rc" = "$want" ] || { cat "$TMP/$name.err"; die "$name: exit status $rc, expected $want"; }
    set -- "$TMP/$name"/*.trace
    [ -f "$1" ] || die "$name: no trace"
    "$ANA" dump "$1" >"$TMP/$name.dump" 2>&1 || { cat "$TMP/$name.dump"; die "$name: dump failed"; }
    "$ANA" report --no-symbolize --no-progress "$1" >"$TMP/$name.rep" 2>&1
    "$ANA" report --json --no-symbolize --no-progress "$1" >"$TMP/$name.json" 2>&1
}
# only_mine FILE: the program's file holds its "mine" lines and nothing else.
only_mine() {
    [ -s "$1" ] || die "$1 is empty"
    if grep -a -v -x 'mine' "$1" | grep -q -a .; then
        od -c "$1" | head -5; die "$1 holds bytes the program did not write"
    fi
}

# 1. The program takes the trace's descriptor.
for how in closefds dup2; do
    run $how 0 "$P" $how "$TMP/$how.own"
    only_mine "$TMP/$how.own"
    expect_grep '^FD_LOST .*how=[12] old_fd=[0-9]+ new_fd=[0-9]+' "$TMP/$how.dump"
    expect_grep '^END .*reason=exit status=0' "$TMP/$how.dump"
    mine=$(grep -c -x mine "$TMP/$how.own")
    allocs=$(grep -c '^ALLOC .*size=12345' "$TMP/$how.dump")
    [ "$allocs" -eq "$mine" ] || die "$how: $allocs allocations in the trace, $mine made"
    expect_grep "note: the program (closed|put another file at) cuprobe's file descriptor at \+[0-9.]+ [a-z]+s; cuprobe opened its trace again" "$TMP/$how.rep"
    expect_grep 'complete \(exit, status 0\)' "$TMP/$how.rep"
    expect_no_grep 'killed|SIGKILL|TRUNCATED|DAMAGED' "$TMP/$how.rep"
    expect_grep '"fd_lost":"(closed|replaced)","fd_lost_t_ns":[0-9]+' "$TMP/$how.json"
done
expect_grep '^FD_LOST .*how=1 ' "$TMP/closefds.dump"
expect_grep '^FD_LOST .*how=2 ' "$TMP/dup2.dump"

# 2. ... and removes the trace: tracing stops, saying why, once.
mkdir -p "$TMP/gone"
CUPROBE_OUTPUT="$TMP/gone/t-%p.trace" CUPROBE_ROOT_PID=$$ LD_PRELOAD="$PRELOAD" \
    "$P" closefds "$TMP/gone.own" "$TMP/gone" >"$TMP/gone.out" 2>"$TMP/gone.err"
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/gone.err"; die "gone: exit status $rc"; }
only_mine "$TMP/gone.own"
expect_grep "the program closed cuprobe's trace file descriptor [0-9]+, and trace file '$TMP/gone/t-[0-9]+\.trace' could not be opened again: No such file or directory; tracing is off" "$TMP/gone.err"
[ "$(grep -c cuprobe "$TMP/gone.err")" -eq 1 ] || { cat "$TMP/gone.err"; die "gone: expected one message"; }

# 3. quick_exit: END, and the events since the last flush.
run quick 7 "$P" quick 7
expect_grep '^END .*reason=quick_exit status=7' "$TMP/quick.dump"
expect_grep '^ALLOC .*size=3072' "$TMP/quick.dump"
expect_grep '^ALLOC .*size=2048' "$TMP/quick.dump"
expect_grep 'complete \(quick_exit, status 7\)' "$TMP/quick.rep"
expect_no_grep 'killed|SIGKILL' "$TMP/quick.rep"

# 4. exit(300) ends the process with 44, and so it is recorded.
run exit300 44 "$B/tests/progs/shim_lifecycle" exit 300
expect_grep '^END .*reason=exit status=44 ' "$TMP/exit300.dump"

# 5. Handled signals are not deaths.
run segv 0 "$P" segv-handled
expect_grep '^SIGNAL .*signo=11 ' "$TMP/segv.dump"
expect_grep '^ALLOC .*size=5120' "$TMP/segv.dump"
expect_grep 'complete \(exit, status 0\)' "$TMP/segv.rep"
expect_no_grep 'fatal-error|died of signal|fatal signal' "$TMP/segv.rep"
expect_grep '"signal":0' "$TMP/segv.json"
if command -v python3 >/dev/null 2>&1; then
    run pyint 0 python3 -c '
import ctypes, os, signal
ctypes.CDLL("libcuda.so.1").cuInit(0)
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause()
except KeyboardInterrupt:
    pass
'
    expect_grep '^SIGNAL .*signo=2 ' "$TMP/pyint.dump"
    expect_no_grep 'fatal-error|died of signal|fatal signal' "$TMP/pyint.rep"
else
    echo "python3 not found: the Ctrl-C case is not run"
fi
echo "shim ends ok"
