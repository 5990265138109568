#!/bin/sh
# bytes_per_event.sh - trace bytes per event of a GPT-2-shaped training loop
# on the fake driver (bench/bytes_workload.c: many memsets, launches of 64
# long-named kernels, cuDriverGetVersion asked again and again), under one
# or two shims, and the bytes per record type.
#
#   sh bench/bytes_per_event.sh [STEPS] [STEP_US]
#     STEPS, STEP_US  passed to bytes_workload (default 300 steps of 10 ms)
#     OLD             a directory holding another build's cuprobe and
#                     libcuprobe.so (a before/after in one sitting)
# Prints, per shim: driver calls made (the events: a fixed denominator),
# records, file bytes, compressed and raw bytes per call and per record, and
# `cuprobe-analyze dump --stats` (records and raw bytes per type).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$ROOT/build}
STEPS=${1:-300}
STEP_US=${2:-10000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
measure() {     # measure NAME DIR: run the workload under DIR/cuprobe
    t="$TMP/$1.trace"
    calls=$(LD_LIBRARY_PATH="$B/fakecuda" "$2/cuprobe" run -o "$t" -- \
        "$B/bench/bytes_workload" "$STEPS" "$STEP_US" 2>/dev/null | awk '$1 == "calls" {print $2}')
    "$B/cuprobe-analyze" dump --stats "$t" >"$TMP/$1.stats"
    LC_ALL=C awk -v name="$1" -v fb="$(stat -c %s "$t")" -v calls="$calls" '$1 == "total" {
            printf "%-8s %7d calls %7d records %9d file bytes %6.2f B/call %6.2f raw B/call %6.2f B/record\n",
                   name, calls, $2, fb, fb / calls, $3 / calls, fb / $2 }' "$TMP/$1.stats"
    head -n 8 "$TMP/$1.stats"
}
echo "bytes_workload $STEPS steps of $STEP_US us; $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${OLD:-}" ] && measure before "$OLD"
measure after "$B"
