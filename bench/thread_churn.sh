#!/bin/sh
# bench/thread_churn.sh - what a thread's first event costs: bench/thread_churn
# (THREADS short-lived threads, each making one allocation on the fake
# driver) run plain and under each shim given, alternating, PAIRS rounds in
# one sitting; prints for each the median wall and CPU (user + system)
# microseconds a thread, what the shim added, and the ratio to plain.
#   sh bench/thread_churn.sh [THREADS [PAIRS [SHIM.so...]]]
# (default 20000 threads, 5 rounds, $B/libcuprobe.so); CUPROBE_* settings
# such as CUPROBE_STACK_DEPTH pass through to the traced runs.
N=${1:-20000}
PAIRS=${2:-5}
. "$(dirname "$0")/lib.sh"
[ $# -gt 2 ] && shift 2 || set -- "$B/libcuprobe.so"
i=0
while [ $i -lt "$PAIRS" ]; do
    "$B/bench/thread_churn" "$N" >>"$T/plain" || exit 1
    k=0
    for so in "$@"; do
        k=$((k + 1))
        CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$so" "$B/bench/thread_churn" "$N" \
            >>"$T/shim$k" || exit 1
        rm -f "$T"/t-*.trace
    done
    i=$((i + 1))
done
# field FILE NAME: the median of thread_churn's figure NAME in FILE.
field() { awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }' "$1" | median; }
pw=$(field "$T/plain" per_thread_us); pc=$(field "$T/plain" cpu_us_per_thread)
printf "%-40s %9s %9s %9s %9s %7s\n" run wall_us cpu_us +wall_us +cpu_us ratio
printf "%-40s %9.1f %9.1f\n" plain "$pw" "$pc"
k=0
for so in "$@"; do
    k=$((k + 1))
    w=$(field "$T/shim$k" per_thread_us); c=$(field "$T/shim$k" cpu_us_per_thread)
    awk -v s="$so" -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" \
        'BEGIN { printf "%-40s %9.1f %9.1f %9.1f %9.1f %7.2f\n", s, w, c, w - pw, c - pc, w / pw }'
done
