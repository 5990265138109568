#!/bin/sh
# analyzer_speed.sh - events per second and peak memory of
# `cuprobe-analyze report` on a generated trace (bench/gen_trace.c).
#
#   sh bench/analyzer_speed.sh [EVENTS] [LIVE]
#     EVENTS  event records in the trace (default 50000000)
#     LIVE    allocations kept live at most by the generator (default 4096)
# Prints one line per run: events, trace size, seconds, events/s, peak RSS.
# Runs the report twice (full and --no-symbolize) on one core (taskset).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
N=${1:-50000000}
LIVE=${2:-4096}
ANA="$B/cuprobe-analyze"
GEN="$B/bench/gen_trace"
[ -x "$GEN" ] || make -C "$ROOT" -s "$GEN" >/dev/null
[ -x "$ANA" ] || make -C "$ROOT" -s "$ANA" >/dev/null
TRACE=${TRACE:-/tmp/cuprobe-speed-$N.trace}
if [ ! -s "$TRACE" ]; then
    t0=$(date +%s.%N)
    "$GEN" -n "$N" -l "$LIVE" -o "$TRACE"
    t1=$(date +%s.%N)
    echo "generated $N events in $(echo "$t1 - $t0" | bc) s"
fi
size=$(stat -c %s "$TRACE")
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
for mode in "" "--no-symbolize"; do
    out=$(mktemp)
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$out.time" $PIN "$ANA" report --no-progress $mode "$TRACE" >"$out"
    read -r secs rss_kb <"$out.time"
    eps=$(echo "$N / $secs" | bc)
    echo "report ${mode:-(default)}: $N events, $((size / 1048576)) MiB trace," \
         "$secs s, $eps events/s, peak RSS $((rss_kb / 1024)) MiB"
    rm -f "$out" "$out.time"
done
