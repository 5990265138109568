#!/bin/sh
# report_stream.sh - `-` and a pipe named on the command line (/dev/stdin)
# are read as streams, traces and summaries alike: the report of a trace
# piped in is the report of the file (the first bytes, read to tell a trace
# from a summary, are not lost).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or test_decode not built"
T="$TMP/a.trace"
"$GEN" pack "$ROOT/tests/fuzz/report_corpus/leak.raw" "$T" || die "pack failed"
"$ANA" report --no-progress --list "$T" >"$TMP/want" 2>&1 || die "report of the file failed"
"$ANA" report --no-progress --summary "$TMP/s.json" "$T" || die "summary failed"
grep -q '^leak ' "$TMP/want" || die "no leak in the report of the file"

for arg in - /dev/stdin; do
    for input in "$T" "$TMP/s.json"; do
        for how in pipe file; do
            if [ $how = pipe ]; then
                cat "$input" | timeout 20 "$ANA" report --no-progress --list "$arg" >"$TMP/got" 2>&1
            else
                timeout 20 "$ANA" report --no-progress --list "$arg" <"$input" >"$TMP/got" 2>&1
            fi
            rc=$?
            what="report $arg with $(basename "$input") as standard input ($how)"
            [ $rc -eq 0 ] || { cat "$TMP/got"; die "$what: exit $rc"; }
            cmp -s "$TMP/want" "$TMP/got" || { diff "$TMP/want" "$TMP/got"; die "$what differs"; }
            echo "ok   $what"
        done
    done
done
echo "stream ok"
