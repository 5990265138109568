#!/bin/sh
# writer_flood.sh - back-pressure and big records: 8 threads flooding with a
# 1 MiB backlog limit lose nothing (producers wait for the writer) and the
# accounting adds up (END.records, END.dropped, LOST); a record larger than a
# buffer chunk survives intact.
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] && [ -x "$ANA" ] || die "helper or analyzer not built"
CUPROBE_OUTPUT="$TMP/f-%p.trace" CUPROBE_BACKLOG_MB=1 "$HELPER" flood 100000 >/dev/null ||
    die "flood failed"
"$ANA" dump "$TMP"/f-*.trace >"$TMP/d" || die "flood trace incomplete"
calls=$(grep -c '^CALL ' "$TMP/d")
dropped=$(sed -n 's/^END .* dropped=\([0-9]*\)$/\1/p' "$TMP/d")
lost=$(sed -n 's/^LOST .* records_lost=\([0-9]*\) .*/\1/p' "$TMP/d" | awk '{s+=$1} END {print s+0}')
[ $((calls + dropped)) -eq 800000 ] || die "calls $calls + dropped $dropped != 800000"
[ "$lost" -eq "$dropped" ] || die "LOST records say $lost, END says $dropped"
[ "$dropped" -eq 0 ] || die "$dropped records dropped although producers may wait"
records=$(sed -n 's/^END .* records=\([0-9]*\) .*/\1/p' "$TMP/d")
[ "$records" -eq $(($(wc -l <"$TMP/d") - 1)) ] || die "END.records $records does not match"

CUPROBE_OUTPUT="$TMP/b-%p.trace" "$HELPER" big || die "big failed"
"$ANA" dump "$TMP"/b-*.trace >"$TMP/d" || die "big trace incomplete"
n=$(grep '^LOG ' "$TMP/d" | sed 's/.*text="\(x*\)"$/\1/' | awk '{print length($0)}')
[ "$n" = 300000 ] || die "big record: $n bytes of text, expected 300000"
[ "$(grep -c '^CALL ' "$TMP/d")" -eq 10 ] || die "records after the big one lost"
echo "writer_flood: ok"
