#!/bin/sh
# pictures_html.sh - `cuprobe report --html` on the golden traces and the
# demo program, opened in a real browser (Debian's chromium, headless): after
# the page's script ran, the memory charts have their stacked areas, every
# finding of the JSON report is there with its check id, and the page
# references nothing outside itself (tests/sh/pictures_check.py).  A
# screenshot of each page is kept in the test log directory as evidence.
# Skips only when no chromium is installed (.ci/run installs it).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read JSON)"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || skip "chromium not installed (apt-get install chromium)"
cd "$ROOT" || die "no $ROOT"
CHECK="python3 $ROOT/tests/sh/pictures_check.py"
SHOTS="$B/test-logs/pictures"
mkdir -p "$SHOTS" || die "cannot make $SHOTS"

chrome() {
    # No sandbox: CI runs as root.  A fresh profile, no network use at all.
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --disable-extensions --disable-background-networking \
        --user-data-dir="$TMP/profile" --virtual-time-budget=3000 "$@" 2>>"$TMP/chrome.err"
}

FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$FAKE_DIR" \
    "$CUPROBE" run -o "$TMP/demo-%p.trace" -- "$B/tests/progs/demo_train" >/dev/null 2>&1 ||
    die "demo run failed"

# one NAME NCHARTS SHOT TRACE...: NCHARTS = memory charts (devices) + copy
# lanes; SHOT=1 keeps a screenshot too, taken by the same browser start
# (each takes seconds).
one() {
    name=$1 ncharts=$2 shot=$3; shift 3
    "$ANA" report --json --no-progress "$@" >"$TMP/$name.report.json"
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "$name: report exit $rc"
    "$CUPROBE" report --html "$TMP/$name.html" --no-progress "$@" >/dev/null
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || die "$name: report --html exit $rc"
    set --
    [ "$shot" = 1 ] && rm -f "$SHOTS/$name.png" &&
        set -- --window-size=1100,1600 --screenshot="$SHOTS/$name.png"
    chrome "$@" --dump-dom "file://$TMP/$name.html" >"$TMP/$name.dom" ||
        { cat "$TMP/chrome.err"; die "$name: chromium --dump-dom failed"; }
    $CHECK page "$TMP/$name.html" "$TMP/$name.dom" "$TMP/$name.report.json" "$ncharts" ||
        die "$name: page check failed"
    [ "$shot" = 1 ] || return 0
    [ -s "$SHOTS/$name.png" ] || die "$name: no screenshot"
    echo "screenshot: $SHOTS/$name.png"
}
one mix 2 0 tests/golden/report_mix.trace
one oom_torch 2 1 tests/golden/report_oom_torch.trace
one fork 4 0 tests/golden/report_fork_0.trace tests/golden/report_fork_1.trace
one demo 3 1 "$TMP"/demo-*.trace

# The memory-growth or fragmentation range is shaded where the report has one.
if grep -q '"check": *"fragmentation"' "$TMP/mix.report.json"; then
    grep -q 'class="range fragmentation"' "$TMP/mix.dom" || die "no fragmentation range drawn"
fi
grep -q '<g class="oom">' "$TMP/oom_torch.dom" || die "no OOM mark on the OOM trace's chart"
echo "pages check out"
