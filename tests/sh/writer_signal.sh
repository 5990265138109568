#!/bin/sh
# writer_signal.sh - fatal signals: the trace ends with SIGNAL + END(signal)
# and the process still dies of the signal; a program's own handler keeps
# working and sigaction()/signal() report it; _exit ends with END(_exit).
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] && [ -x "$ANA" ] || die "helper or analyzer not built"

check_fatal() {   # mode signo expected-exit
    mkdir "$TMP/$1"
    CUPROBE_OUTPUT="$TMP/$1/%p.trace" "$HELPER" "$1" >/dev/null 2>&1; rc=$?
    [ $rc -eq "$3" ] || die "$1: exit $rc, expected $3"
    f=$(ls "$TMP/$1"/*.trace) || die "$1: no trace"
    "$ANA" dump "$f" >"$TMP/d" || die "$1: trace incomplete"
    [ "$(grep -c '^CALL ' "$TMP/d")" -eq 100 ] || die "$1: calls lost"
    expect_grep "^SIGNAL .* signo=$2 " "$TMP/d"
    tail -n 1 "$TMP/d" | grep -q "^END .* reason=signal status=$2 " || die "$1: no END(signal)"
}
check_fatal segv 11 139
check_fatal abort 6 134

mkdir "$TMP/h"
CUPROBE_OUTPUT="$TMP/h/%p.trace" "$HELPER" sigterm-handler >"$TMP/out" 2>&1 || { cat "$TMP/out"; die "handler chaining"; }
expect_grep '^handler ran$' "$TMP/out"
"$ANA" dump "$TMP"/h/*.trace >"$TMP/d" || die "handler trace incomplete"
expect_grep '^SIGNAL .* signo=15 ' "$TMP/d"
expect_grep '^END .* reason=exit status=0 ' "$TMP/d"

mkdir "$TMP/x"
CUPROBE_OUTPUT="$TMP/x/%p.trace" "$HELPER" _exit 9; rc=$?
[ $rc -eq 9 ] || die "_exit status $rc"
"$ANA" dump "$TMP"/x/*.trace >"$TMP/d" || die "_exit trace incomplete"
tail -n 1 "$TMP/d" | grep -q '^END .* reason=_exit status=9 ' || die "no END(_exit)"
echo "writer_signal: ok"
