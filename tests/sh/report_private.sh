#!/bin/sh
# report_private.sh - what the analyzer writes for people holds the
# program's command line and environment, as the traces do, and is as
# private: the summary (--summary), the HTML page (--html) and the Perfetto
# export are mode 0600 under a umask of 022, like the traces, also where a
# file of mode 0644 was there before; a link planted under the name the
# old writer used for its temporary file (NAME.tmp) is not followed.
. "$ROOT/tests/sh/lib.sh"
export LD_LIBRARY_PATH="$FAKE_DIR"
umask 022
CUPROBE_OUTPUT="$TMP/t-%p.trace" LD_PRELOAD="$PRELOAD" "$B/tests/progs/shim_lifecycle" exit 0 \
    >/dev/null 2>&1 || die "the traced program failed"
set -- "$TMP"/t-*.trace
[ -f "$1" ] || die "no trace"
echo precious >"$TMP/victim"
for f in sum.json page.html perf.json; do ln -s "$TMP/victim" "$TMP/$f.tmp"; done
"$ANA" report --no-progress --summary "$TMP/sum.json" "$1" >/dev/null 2>"$TMP/err1" ||
    { cat "$TMP/err1"; die "report --summary failed"; }
"$ANA" report --no-progress --no-symbolize --html "$TMP/page.html" "$1" >/dev/null 2>"$TMP/err2" ||
    { cat "$TMP/err2"; die "report --html failed"; }
"$ANA" export --no-progress --perfetto "$TMP/perf.json" "$1" >/dev/null 2>"$TMP/err3" ||
    { cat "$TMP/err3"; die "export --perfetto failed"; }
for f in sum.json page.html perf.json; do
    echo old >"$TMP/old-$f"
    chmod 644 "$TMP/old-$f"
done
"$ANA" report --no-progress --summary "$TMP/old-sum.json" "$1" >/dev/null 2>&1 &&
    "$ANA" report --no-progress --no-symbolize --html "$TMP/old-page.html" "$1" >/dev/null 2>&1 &&
    "$ANA" export --no-progress --perfetto "$TMP/old-perf.json" "$1" >/dev/null 2>&1 ||
    die "writing over files of mode 0644 failed"
for f in "$1" "$TMP/sum.json" "$TMP/page.html" "$TMP/perf.json" "$TMP"/old-*; do
    [ -s "$f" ] || die "$f is empty"
    mode=$(stat -c %a "$f")
    [ "$mode" = 600 ] || die "$f has mode $mode, expected 600"
done
[ "$(cat "$TMP/victim")" = precious ] || die "a planted link was followed"
ls "$TMP" | grep -q -E '\.(json|html)\.[A-Za-z0-9]{6}$' && { ls "$TMP"; die "a temporary file was left"; }
echo "report files private: ok"
