#!/bin/sh
# pictures_explore.sh - exploring a run on the HTML page, as a user does it,
# in a real browser (Debian's chromium, headless, an 800 px window): a copy
# of the page runs tests/sh/pictures_probe.js after its own script, and
# tests/sh/pictures_check.py probe checks what it saw.  On a fake-driver run
# that grows (tests/progs/explore_train growth): the charts fit the window
# and their ticks carry units; hovering a call-site row draws that site's
# memory on its chart; the tables sort; a drag zooms every chart to one
# window, which the address keeps, and the address opens the same view
# again; a double-click and selecting a finding.  On the demo program run
# by a shell, with another shell's run: the shells, which drew nothing, are
# one line, and that page fits the window too.  On the golden OOM trace, an OOM in the first
# millisecond is timed in µs, not as 0.000 s.  Skips only when no chromium
# is installed (.ci/run installs it).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
[ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read the DOM)"
. "$ROOT/tests/sh/lib_chrome.sh"
cd "$ROOT" || die "no $ROOT"
CHECK="python3 $ROOT/tests/sh/pictures_check.py"

# dom URL OUT: the DOM of URL, in an 800 px window, after its scripts ran.
dom() {
    chrome --window-size=800,900 --dump-dom "$1" >"$2" ||
        { cat "$TMP/chrome.err"; die "chromium --dump-dom $1 failed"; }
    js_errors "$1"
}
# probed NAME: NAME.html with the probe after the page's script.
probed() {
    python3 - "$TMP/$1.html" "$ROOT/tests/sh/pictures_probe.js" "$TMP/$1.probe.html" <<'PY' ||
import sys
page = open(sys.argv[1], encoding="utf-8").read()
end = page.rindex("</body>")
probe = open(sys.argv[2], encoding="utf-8").read()
open(sys.argv[3], "w", encoding="utf-8").write(page[:end] + "<script>" + probe + "</script>\n" + page[end:])
PY
        die "cannot add the probe to $1.html"
}

FAKECUDA_MEM=16G LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
    CUPROBE_OUTPUT="$TMP/growth.trace" "$B/tests/progs/explore_train" growth >/dev/null ||
    die "explore_train growth failed"
"$ANA" report --html "$TMP/growth.html" --no-progress "$TMP/growth.trace" >/dev/null ||
    die "report --html exit $?"
probed growth
dom "file://$TMP/growth.probe.html" "$TMP/growth.dom"
hash=$(python3 -c 'import html, json, re, sys
d = open(sys.argv[1], encoding="utf-8").read()
print(json.loads(html.unescape(re.search(r"data-probe=\"([^\"]*)\"", d).group(1)))["drag"]["hash"])' \
    "$TMP/growth.dom") || die "no probe in the page"
case "$hash" in "#t="*) ;; *) die "after the drag the address is '$hash'" ;; esac
dom "file://$TMP/growth.probe.html$hash" "$TMP/growth-link.dom"
$CHECK probe "$TMP/growth.dom" "$TMP/growth-link.dom" || die "exploring the growth page"

# The demo started by a shell, and another shell's run: both shells, which
# drew nothing, on one line; the demo's charts as if it were alone.
mkdir "$TMP/sh" || die "mkdir"
FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$FAKE_DIR" "$CUPROBE" run -o "$TMP/sh/run-%p.trace" -- \
    sh -c "$B/tests/progs/demo_train; true" >/dev/null 2>&1 || die "demo run failed"
"$CUPROBE" run -o "$TMP/sh/other-%p.trace" -- sh -c true >/dev/null 2>&1 || die "sh run failed"
[ "$(ls "$TMP"/sh/*.trace | wc -l)" -eq 3 ] || die "expected 3 traces: $(ls "$TMP/sh")"
"$ANA" report --html "$TMP/shells.html" --no-progress "$TMP"/sh/*.trace >/dev/null
[ $? -le 3 ] || die "report --html of the shells' run failed"
probed shells
dom "file://$TMP/shells.probe.html" "$TMP/shells.dom"
$CHECK probe "$TMP/shells.dom" || die "exploring the demo page"
expect_grep '<p class="helpers when">2 processes with nothing to draw' "$TMP/shells.dom"
[ "$(grep -c '<p class="helpers' "$TMP/shells.dom")" -eq 1 ] || die "the helpers are not one line"
sed -n '/<h2>Memory over time/,/<h2>Call sites/p' "$TMP/shells.dom" | grep '<h3>' >"$TMP/heads"
[ "$(wc -l <"$TMP/heads")" -eq 1 ] && grep -q 'demo_train' "$TMP/heads" ||
    die "one process heading over the charts expected: $(cat "$TMP/heads")"
[ "$(grep -c '<svg class="chart' "$TMP/shells.dom")" -eq 3 ] || die "the demo's 3 charts expected"

# An OOM 265 µs into the run.
"$ANA" report --html "$TMP/oom.html" --no-progress tests/golden/report_oom_torch.trace >/dev/null
[ $? -le 3 ] || die "report --html of the OOM trace failed"
expect_grep 'At OOM 1 \([0-9.]+ µs\)' "$TMP/oom.html"
expect_grep "segments at the OOM at [0-9.]+ µs" "$TMP/oom.html"
! grep -q '0\.000 s' "$TMP/oom.html" || die "a time in the first millisecond reads 0.000 s"
echo "exploring checks out"
