#!/bin/sh
# report_parallel.sh - traces analyzed on several threads give the report of
# one thread, byte for byte: the committed golden traces (several processes,
# an OOM whose finding symbolizes while the others decode) with --jobs 1,
# --jobs 4 and CUPROBE_JOBS=2, text and JSON.  Analyzer only, so `make
# check-san` runs it under ThreadSanitizer too; a bad CUPROBE_JOBS is named
# and ignored.
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
set -- "$ROOT"/tests/golden/*.trace
[ $# -ge 4 ] || die "expected the golden traces in tests/golden"
# Each trace twice over (copies: the same file is read once): more traces
# than threads, so threads take turns.
for t in "$@"; do cp "$t" "$TMP/a-$(basename "$t")"; cp "$t" "$TMP/b-$(basename "$t")"; done
set -- "$TMP"/a-*.trace "$TMP"/b-*.trace
for fmt in "" --json; do
    "$ANA" report --no-progress --no-symbolize $fmt --jobs 1 "$@" >"$TMP/j1" 2>"$TMP/j1.err"; r1=$?
    "$ANA" report --no-progress --no-symbolize $fmt --jobs 4 "$@" >"$TMP/j4" 2>"$TMP/j4.err"; r4=$?
    CUPROBE_JOBS=2 "$ANA" report --no-progress --no-symbolize $fmt "$@" >"$TMP/e2" 2>/dev/null; r2=$?
    [ $r1 -eq $r4 ] && [ $r1 -eq $r2 ] || die "exit status differs: $r1 $r4 $r2"
    [ -s "$TMP/j1" ] || die "empty report"
    cmp "$TMP/j1" "$TMP/j4" >/dev/null || { diff "$TMP/j1" "$TMP/j4" | head; die "--jobs 4 differs from --jobs 1 ($fmt)"; }
    cmp "$TMP/j1" "$TMP/e2" >/dev/null || die "CUPROBE_JOBS=2 differs from --jobs 1 ($fmt)"
    cmp "$TMP/j1.err" "$TMP/j4.err" >/dev/null || die "stderr differs between --jobs 1 and 4"
done
CUPROBE_JOBS=lots "$ANA" report --no-progress --no-symbolize "$@" >/dev/null 2>"$TMP/bad.err"
expect_grep "CUPROBE_JOBS='lots' is not a number from 1 to 1024 or auto: ignored" "$TMP/bad.err"
"$ANA" report --jobs 0 "$@" >/dev/null 2>"$TMP/j0.err"; rc=$?
[ $rc -eq 2 ] || die "--jobs 0: exit $rc, expected 2"
expect_grep 'takes a number from 1 to 1024' "$TMP/j0.err"
echo "report_parallel: ok ($# traces)"
