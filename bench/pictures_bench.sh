#!/bin/sh
# pictures_bench.sh - size, time and memory of the pictures on a generated
# trace (bench/gen_trace.c): `report --html` and `export --perfetto`, each
# against the plain text report of the same trace measured in the same run
# (the baseline), and the time headless chromium takes to load and run the
# page against an empty page.
#
#   nice sh bench/pictures_bench.sh [EVENTS]     (default 50000000)
# Prints one line per measurement (median of RUNS, default 3).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
N=${1:-50000000}
RUNS=${RUNS:-3}
ANA="$B/cuprobe-analyze"
GEN="$B/bench/gen_trace"
TRACE=${TRACE:-/tmp/cuprobe-speed-$N.trace}
[ -s "$TRACE" ] || "$GEN" -n "$N" -l 4096 -o "$TRACE"
W=$(mktemp -d /tmp/cuprobe-pictures.XXXXXX)
trap 'rm -rf "$W"' EXIT
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"

# median of the "secs rss" lines in $1: prints "secs rss_kb"
median() { sort -n "$1" | awk '{a[NR]=$0} END {print a[int((NR+1)/2)]}'; }

measure() {
    label=$1; shift
    : >"$W/times"
    for _ in $(seq "$RUNS"); do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %M" -a -o "$W/times" $PIN "$@" >/dev/null
    done
    median "$W/times"
}
read -r base base_kb <<EOF2
$(measure text "$ANA" report --no-progress "$TRACE")
EOF2
read -r html html_kb <<EOF2
$(measure html "$ANA" report --no-progress --html "$W/page.html" "$TRACE")
EOF2
read -r pf pf_kb <<EOF2
$(measure perfetto "$ANA" export --no-progress --perfetto "$W/trace.json" "$TRACE")
EOF2
echo "trace: $N events, $(($(stat -c %s "$TRACE") / 1048576)) MiB"
echo "report (text, baseline): $base s, peak RSS $((base_kb / 1024)) MiB"
echo "report --html: $html s ($(echo "scale=2; $html / $base" | bc)x), peak RSS" \
     "$((html_kb / 1024)) MiB, page $(stat -c %s "$W/page.html") bytes"
echo "export --perfetto: $pf s ($(echo "scale=2; $pf / $base" | bc)x), peak RSS" \
     "$((pf_kb / 1024)) MiB, JSON $(stat -c %s "$W/trace.json") bytes"
python3 -c "import json,sys; print('perfetto events:', len(json.load(open(sys.argv[1]))['traceEvents']))" \
    "$W/trace.json"
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROME" ]; then
    echo '<!DOCTYPE html><html><body>empty</body></html>' >"$W/empty.html"
    for page in empty page; do
        : >"$W/times"
        for _ in $(seq "$RUNS"); do
            /usr/bin/time -f "%e %M" -a -o "$W/times" timeout 120 "$CHROME" --headless \
                --no-sandbox --disable-gpu --disable-dev-shm-usage \
                --user-data-dir="$W/profile" --dump-dom "file://$W/$page.html" >"$W/$page.dom" 2>/dev/null
        done
        read -r secs _ <<EOF2
$(median "$W/times")
EOF2
        echo "chromium --dump-dom $page.html: $secs s"
        if [ "$page" = page ]; then
            ms=$(sed -n 's/.*data-ready-ms="\([0-9]*\)".*/\1/p' "$W/$page.dom" | head -n 1)
            echo "page ready ${ms:-?} ms after the navigation started (file read, parse, charts, script; last run)"
        fi
        grep -q 'data-ready="1"' "$W/$page.dom" || [ "$page" = empty ] ||
            echo "WARNING: the page's script did not finish"
    done
fi
