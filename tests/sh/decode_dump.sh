#!/bin/sh
# decode_dump.sh - `cuprobe-analyze dump` on a synthetic trace holding every
# record type (golden text), and its exit status and error text on truncated,
# damaged, foreign and too-new files; subcommand usage errors.
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] || die "$ANA not built"
[ -x "$GEN" ] || die "$GEN not built"

"$GEN" gen "$TMP/s.trace" || die "cannot generate the synthetic trace"
"$ANA" dump "$TMP/s.trace" >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/err"; die "dump of a complete trace exited $rc"; }
diff -u "$ROOT/tests/sh/decode_dump.expected" "$TMP/out" || die "dump output differs from decode_dump.expected"

# Truncated: what decoded is printed, the error names file and offset, exit 2.
size=$(wc -c <"$TMP/s.trace")
head -c $((size - 40)) "$TMP/s.trace" >"$TMP/t.trace"
"$ANA" dump "$TMP/t.trace" >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "truncated trace: exit $rc, expected 2"
expect_grep "^$TMP/t.trace: at decompressed byte [0-9]+: truncated after [0-9]+ records \(no END" "$TMP/err"
expect_grep '^HEADER ' "$TMP/out"

# A damaged byte in the middle of the compressed data.
cp "$TMP/s.trace" "$TMP/c.trace"
printf '\377\377\377\377' | dd of="$TMP/c.trace" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
"$ANA" dump "$TMP/c.trace" >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "damaged trace: exit $rc, expected 2"
expect_grep "^$TMP/c.trace: at file byte [0-9]+" "$TMP/err"

# Not a trace at all; a trace from a newer cuprobe.
echo "hello world, not a trace" >"$TMP/x.trace"
"$ANA" dump "$TMP/x.trace" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "foreign file: exit $rc"
expect_grep 'not a cuprobe trace' "$TMP/err"
cp "$TMP/s.trace" "$TMP/v.trace"
printf '\011' | dd of="$TMP/v.trace" bs=1 seek=8 conv=notrunc 2>/dev/null
"$ANA" dump "$TMP/v.trace" >/dev/null 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "newer version: exit $rc"
expect_grep 'version 9 is newer than this cuprobe' "$TMP/err"

# Several files: a header line each; one bad file makes the status 2.
"$ANA" dump "$TMP/s.trace" "$TMP/t.trace" >"$TMP/out" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || die "mixed files: exit $rc"
[ "$(grep -c '^==> ' "$TMP/out")" -eq 2 ] || die "expected two file headers"

# Usage.
"$ANA" >/dev/null 2>&1; [ $? -eq 2 ] || die "no command: expected exit 2"
"$ANA" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || die "unknown command: expected exit 2"
"$ANA" dump >/dev/null 2>&1; [ $? -eq 2 ] || die "dump without files: expected exit 2"
"$ANA" version | grep -q 'trace format 1' || die "version"
"$ANA" help | grep -q 'dump \[TRACE' || die "help"
echo "decode_dump: ok"
