#!/bin/sh
# pictures_html.sh - `cuprobe report --html` on the golden traces and the
# demo program, opened in a real browser (Debian's chromium, headless): the
# script runs without an error to its end; the memory charts have their
# stacked areas and a scale fitted to their peak (data-ymax-bytes at most
# twice data-peak-bytes), a chart only where there is something to draw;
# every finding of the JSON report is there with its check id; the page
# references nothing outside itself (tests/sh/pictures_check.py); the
# legend's colours are pairwise CIE76 dE 20 apart (explore_check.py).  A
# fake-driver run whose memory grows by 2% of a 16 GiB card, opened with its
# memory-growth finding selected (#finding-N), shows the growth at a scale
# of at most twice its peak across at least 20% of the chart's width.  The
# script's syntax is checked with node where there is one.  A screenshot of
# some pages is kept in the test log directory as evidence.
# Skips only when no chromium is installed (.ci/run installs it).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read JSON)"
. "$ROOT/tests/sh/lib_chrome.sh"
cd "$ROOT" || die "no $ROOT"
CHECK="python3 $ROOT/tests/sh/pictures_check.py"
SHOTS="$B/test-logs/pictures"
mkdir -p "$SHOTS" || die "cannot make $SHOTS"

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
    js_errors "$name"
    $CHECK page "$TMP/$name.html" "$TMP/$name.dom" "$TMP/$name.report.json" "$ncharts" ||
        die "$name: page check failed"
    [ "$shot" = 1 ] || return 0
    [ -s "$SHOTS/$name.png" ] || die "$name: no screenshot"
    echo "screenshot: $SHOTS/$name.png"
}
one mix 2 0 tests/golden/report_mix.trace
one oom_torch 1 1 tests/golden/report_oom_torch.trace
one fork 2 0 tests/golden/report_fork_0.trace tests/golden/report_fork_1.trace
one demo 3 1 "$TMP"/demo-*.trace

python3 "$ROOT/tests/sh/explore_check.py" colors "$TMP/demo.html" || die "legend colours"
if command -v node >/dev/null 2>&1; then
    python3 - "$TMP/demo.html" "$TMP/page.js" <<'PY' || die "no script in the page"
import re, sys
src = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(re.findall(r"<script>(.*?)</script>", src, re.S)[-1])
PY
    node --check "$TMP/page.js" || die "the page's script does not parse"
fi

# The growth of 2% of a 16 GiB card, selected: visible and wide.
FAKECUDA_MEM=16G LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
    CUPROBE_OUTPUT="$TMP/growth.trace" "$B/tests/progs/explore_train" growth >/dev/null ||
    die "explore_train growth failed"
one growth 2 0 "$TMP/growth.trace"
n=$(python3 -c 'import json,sys
f=json.load(open(sys.argv[1]))["findings"]
print([i for i, x in enumerate(f) if x["check"] == "memory-growth"][0])' "$TMP/growth.report.json") ||
    die "no memory-growth finding in the growth run"
chrome --dump-dom "file://$TMP/growth.html#finding-$n" >"$TMP/growth-sel.dom" || die "chromium"
js_errors growth-sel
python3 "$ROOT/tests/sh/pictures_check.py" zoom "$TMP/growth-sel.dom" || die "the growth is not shown"
chrome --window-size=1000,700 --screenshot="$SHOTS/growth-selected.png" \
    "file://$TMP/growth.html#finding-$n" >/dev/null || die "growth: screenshot failed"

# The memory-growth or fragmentation range is marked where the report has one.
if grep -q '"check": *"fragmentation"' "$TMP/mix.report.json"; then
    grep -q 'class="range fragmentation"' "$TMP/mix.dom" || die "no fragmentation range drawn"
fi
grep -q 'class="range memory-growth"' "$TMP/growth.dom" || die "no memory-growth range drawn"
grep -q 'class="sites-table"' "$TMP/growth.dom" || die "no call-site table"
grep -q 'class="segments"' "$TMP/oom_torch.dom" || die "no segments at the OOM"
grep -q '<g class="oom">' "$TMP/oom_torch.dom" || die "no OOM mark on the OOM trace's chart"
echo "pages check out"
