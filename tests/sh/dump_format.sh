#!/bin/sh
# dump_format.sh - `dump` formats numbers, pointers, signed values, escaped
# strings, unknown enum values and API names by hand into its own buffer:
# a trace of edge values (test_decode gen-edge) dumps to the golden text
# (made by the printf-based dump this replaced), also when the same trace
# is dumped 300 times over in one run (lines cross the buffer's flushes).
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] || die "$ANA not built"
[ -x "$GEN" ] || die "$GEN not built"
"$GEN" gen-edge "$TMP/e.trace" || die "cannot generate the edge trace"
"$ANA" dump "$TMP/e.trace" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; die "dump failed"; }
cmp -s "$ROOT/tests/sh/dump_format.expected" "$TMP/out" ||
    { diff "$ROOT/tests/sh/dump_format.expected" "$TMP/out" | head -20; die "dump differs from dump_format.expected"; }

# Many files in one run: "==> FILE <==" before each, a blank line between.
i=0; set --
while [ $i -lt 300 ]; do set -- "$@" "$TMP/e.trace"; i=$((i + 1)); done
"$ANA" dump "$@" >"$TMP/many" 2>"$TMP/err" || { cat "$TMP/err"; die "dump of 300 files failed"; }
i=0
while [ $i -lt 300 ]; do
    [ $i -gt 0 ] && echo
    echo "==> $TMP/e.trace <=="
    cat "$ROOT/tests/sh/dump_format.expected"
    i=$((i + 1))
done >"$TMP/want"
cmp -s "$TMP/want" "$TMP/many" || die "300 dumps in one run differ from the golden text repeated"
echo "dump_format: ok ($(wc -c <"$TMP/many") bytes)"
