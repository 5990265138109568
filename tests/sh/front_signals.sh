#!/bin/sh
# front_signals.sh - `cuprobe run` stays the command's parent and passes
# signals on: SIGTERM sent to the front end reaches the command within
# 100 ms, the command's trace ends with the signal, and the front end dies
# of it too (status 143); SIGINT sent to the front end arrives once;
# Ctrl-C typed in a real terminal (a pty) reaches the command once, not
# once from the terminal and again from the front end.
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "shim, analyzer or front end not built"
P="$B/tests/progs/front_run"
[ -x "$P" ] || die "$P not built"
export LD_LIBRARY_PATH="$FAKE_DIR"

# wait_gone PID TRIES: poll every 0.05 s until PID has ended.
wait_gone() {
    i_=0
    while kill -0 "$1" 2>/dev/null; do
        i_=$((i_ + 1))
        [ $i_ -lt "$2" ] || return 1
        sleep 0.05
    done
}

# 1. SIGTERM to the front end.
mkdir "$TMP/t"
"$CUPROBE" run -o "$TMP/t/t-%p.trace" -- "$P" term-stamp >"$TMP/t.out" 2>"$TMP/t.err" &
fe=$!
wait_line ready "$TMP/t.out" $fe 100 "term-stamp never said ready"
t0=$(date +%s%N)
kill -TERM $fe
if ! wait_gone $fe 60; then
    pkill -KILL -P $fe 2>/dev/null; kill -9 $fe
    die "the front end still runs 3 s after SIGTERM (the command got: $(cat "$TMP/t.out"))"
fi
wait $fe; rc=$?
[ $rc -eq 143 ] || die "SIGTERM: the front end exited $rc, expected 143 (128 + SIGTERM)"
t1=$(sed -n 's/^term //p' "$TMP/t.out")
[ -n "$t1" ] || die "the command never got SIGTERM"
ms=$(( (t1 - t0) / 1000000 ))
[ $ms -lt 100 ] || die "the command got SIGTERM $ms ms after it was sent, not within 100 ms"
"$ANA" dump "$TMP"/t/t-*.trace >"$TMP/t.dump" || die "the trace does not decode to its end"
expect_grep '^SIGNAL .* signo=15 ' "$TMP/t.dump"
tail -n 1 "$TMP/t.dump" | grep -q '^END .* reason=signal status=15 ' ||
    die "the trace does not end with END(signal 15): $(tail -n 1 "$TMP/t.dump")"
echo "SIGTERM: the command had it after $ms ms, status 143"

# 2. SIGINT sent to the front end by a process: passed on, once.
"$CUPROBE" run -o "$TMP/i-%p.trace" -- "$P" int-count >"$TMP/i.out" 2>"$TMP/i.err" &
fe=$!
wait_line ready "$TMP/i.out" $fe 100 "int-count never said ready"
kill -INT $fe
wait_gone $fe 100 || { kill -9 $fe; die "SIGINT was not passed on"; }
wait $fe; rc=$?
[ $rc -eq 0 ] || die "SIGINT: exit $rc"
expect_grep '^ints 1$' "$TMP/i.out"

# 3. Ctrl-C in a terminal: the terminal signals the foreground process
#    group, the command included; the front end must not send it again.
command -v python3 >/dev/null 2>&1 || skip "no python3 for the terminal test"
python3 - "$CUPROBE" run -o "$TMP/c-%p.trace" -- "$P" int-count >"$TMP/c.out" 2>&1 <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out, sent, end = b"", False, time.time() + 30
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        out += b
    if not sent and b"ready" in out:
        os.write(fd, b"\x03")   # Ctrl-C
        sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("status", os.waitstatus_to_exitcode(st))
PY
expect_grep 'ints 1' "$TMP/c.out"
expect_no_grep 'ints [02-9]' "$TMP/c.out"
expect_grep '^status 0$' "$TMP/c.out"
echo "front_signals: ok"
