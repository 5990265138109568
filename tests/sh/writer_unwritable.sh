#!/bin/sh
# writer_unwritable.sh - an output path that cannot be created: one clear
# warning naming the path and the errno text, tracing off, the program runs
# normally and exits with its own status.  Odd config values warn once too.
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] || die "helper not built"
CUPROBE_OUTPUT="$TMP/no/such/dir/t-%p.trace" "$HELPER" basic 1000 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] || die "program exit $rc"
expect_grep '^done$' "$TMP/out"
[ "$(grep -c 'cuprobe' "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; die "expected exactly one warning"; }
expect_grep "cannot create trace file '$TMP/no/such/dir/t-[0-9]+.trace': No such file or directory" "$TMP/err"
[ ! -e "$TMP/no" ] || die "something was created"

: >"$TMP/file"
CUPROBE_OUTPUT="$TMP/file/x.trace" "$HELPER" _exit 5 >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 5 ] || die "_exit status $rc, expected 5"
expect_grep "cannot create trace file '$TMP/file/x.trace': Not a directory" "$TMP/err"

CUPROBE_OUTPUT="$TMP/c-%p.trace" CUPROBE_FLUSH_MS=fast CUPROBE_ZSTD_LEVEL=99 CUPROBE_STACK_CACHE=yes \
    "$HELPER" basic 10 >/dev/null 2>"$TMP/err" || die "bad config broke the program"
expect_grep 'CUPROBE_FLUSH_MS="fast" ignored \(not a number\); using 100' "$TMP/err"
expect_grep 'CUPROBE_ZSTD_LEVEL="99" ignored \(out of range 1..19\); using 3' "$TMP/err"
expect_grep 'CUPROBE_STACK_CACHE="yes" ignored \(not a number\); using 1' "$TMP/err"
[ "$(grep -c . "$TMP/err")" -eq 3 ] || { cat "$TMP/err"; die "expected three warnings"; }
ls "$TMP"/c-*.trace >/dev/null 2>&1 || die "defaults were not used: no trace"
echo "writer_unwritable: ok"
