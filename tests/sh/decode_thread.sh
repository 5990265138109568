#!/bin/sh
# decode_thread.sh - the decoder thread (CUPROBE_DECODE_THREAD=1) gives
# exactly what decoding on the reader's thread gives: every record type,
# damaged and truncated copies (test_decode), `dump` and `report` of a
# generated trace of many batches, and the error of a truncated one; and
# `dump --stats` adds up.
. "$ROOT/tests/sh/lib.sh"
UNIT="$B/tests/unit/test_decode"
GEN="$B/bench/gen_trace"
[ -x "$UNIT" ] && [ -x "$GEN" ] && [ -x "$ANA" ] || die "test helpers not built"

CUPROBE_DECODE_THREAD=1 "$UNIT" >"$TMP/unit" 2>&1 || { cat "$TMP/unit"; die "test_decode failed on the decoder thread"; }

# 300k records: dozens of batches, records spanning batch windows.
"$GEN" -n 300000 -l 2048 -o "$TMP/g.trace" >/dev/null || die "gen_trace failed"
for t in 0 1; do
    CUPROBE_DECODE_THREAD=$t "$ANA" dump "$TMP/g.trace" >"$TMP/dump.$t" 2>&1 || die "dump (thread=$t) failed"
    CUPROBE_DECODE_THREAD=$t "$ANA" report --no-progress --no-symbolize --json "$TMP/g.trace" \
        >"$TMP/rep.$t" 2>&1 || die "report (thread=$t) failed"
done
[ "$(wc -l <"$TMP/dump.1")" -gt 300000 ] || die "dump printed too few records"
cmp -s "$TMP/dump.0" "$TMP/dump.1" || die "dump differs with the decoder thread"
cmp -s "$TMP/rep.0" "$TMP/rep.1" || die "report differs with the decoder thread"

# dump --stats: records per type add up to what dump printed, raw bytes to
# the decompressed stream.
"$ANA" dump --stats "$TMP/g.trace" >"$TMP/stats" || die "dump --stats failed"
[ "$(awk '$1 == "total" {print $2}' "$TMP/stats")" -eq "$(wc -l <"$TMP/dump.1")" ] ||
    { cat "$TMP/stats"; die "dump --stats counts differ from dump's lines"; }
expect_grep '^COPY +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9.]+$' "$TMP/stats"
if command -v zstd >/dev/null 2>&1; then
    raw=$(tail -c +17 "$TMP/g.trace" | zstd -dc | wc -c)
    [ "$(awk '$1 == "total" {print $3}' "$TMP/stats")" -eq "$raw" ] ||
        { cat "$TMP/stats"; die "dump --stats bytes differ from the $raw decompressed bytes"; }
fi

# Cut in the middle: same records out, same error, exit 2 both ways.
size=$(wc -c <"$TMP/g.trace")
head -c $((size / 2)) "$TMP/g.trace" >"$TMP/t.trace"
for t in 0 1; do
    CUPROBE_DECODE_THREAD=$t "$ANA" dump "$TMP/t.trace" >"$TMP/tdump.$t" 2>"$TMP/terr.$t"; rc=$?
    [ $rc -eq 2 ] || die "truncated trace (thread=$t): exit $rc, expected 2"
done
expect_grep "^$TMP/t.trace: at (decompressed|file) byte [0-9]+: " "$TMP/terr.1"
cmp -s "$TMP/terr.0" "$TMP/terr.1" || die "truncation error differs with the decoder thread"
cmp -s "$TMP/tdump.0" "$TMP/tdump.1" || die "records before the cut differ with the decoder thread"
echo "decode_thread: ok"
