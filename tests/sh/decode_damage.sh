#!/bin/sh
# decode_damage.sh - a real trace (recorder + writer) cut at every 997th
# byte and with 300 flipped bits: the reader never crashes and always ends
# with "NAME: at decompressed byte N: ..." or "NAME: at file byte N: ..." (checks in tests/unit/test_decode.c).
. "$ROOT/tests/sh/lib.sh"
HELPER="$B/tests/unit/test_writer_proc"
GEN="$B/tests/unit/test_decode"
[ -x "$HELPER" ] && [ -x "$GEN" ] || die "test helpers not built"
CUPROBE_OUTPUT="$TMP/real.trace" "$HELPER" basic 100000 >/dev/null || die "recording failed"
"$GEN" damage "$TMP/real.trace" || die "damage checks failed"
