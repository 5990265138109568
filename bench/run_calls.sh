#!/bin/sh
# bench/run_calls.sh - added cost per wrapped call on the fake driver.
# Alternates plain and traced runs (PAIRS of each, default 7), in one
# sitting, and prints for each path bench_calls times (in its order): median
# plain ns, median traced ns, the added ns and the ratio.
# Usage: B=build sh bench/run_calls.sh [ITER] [PAIRS]
#   CUPROBE_STACK_DEPTH etc. pass through to the traced runs; BENCH_PAUSE=1
#   pauses recording in them (the wrappers' pass-through alone).
ITER=${1:-1000000}
PAIRS=${2:-7}
. "$(dirname "$0")/lib.sh"
i=0
while [ $i -lt "$PAIRS" ]; do
    "$B/bench/bench_calls" "$ITER" >>"$T/plain" || exit 1
    CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$B/libcuprobe.so" \
        "$B/bench/bench_calls" "$ITER" >>"$T/traced" || exit 1
    rm -f "$T"/t-*.trace
    i=$((i + 1))
done
printf "%-12s %10s %10s %10s %8s\n" call plain_ns traced_ns added_ns ratio
for c in $(awk '!seen[$1]++ { print $1 }' "$T/plain"); do
    p=$(med $c "$T/plain"); q=$(med $c "$T/traced")
    awk -v c=$c -v p="$p" -v q="$q" 'BEGIN { printf "%-12s %10.1f %10.1f %10.1f %8.2f\n", c, p, q, q - p, q / p }'
done
