#!/bin/sh
# bench/thread_churn.sh - what a thread's first event costs: bench/thread_churn
# (THREADS short-lived threads, each making the context current and one
# allocation on the fake driver) run plain and under each shim given, one
# after the other, PAIRS times in one sitting.  Prints for each the medians
# of a thread's wall and CPU (user + system) microseconds, of its two
# calls' time (timed in the thread) and of its page faults; then, per shim,
# what it added to each: the median over the turns of the difference from
# the plain run of the same turn (seconds apart, so that the drifts of a
# shared host cancel), and the wall ratio.
#   sh bench/thread_churn.sh [THREADS [PAIRS [SHIM.so...]]]
# (default 20000 threads, 5 turns, $B/libcuprobe.so); CUPROBE_* settings
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
# column FILE NAME: thread_churn's figure NAME in FILE, a line a turn.
column() { awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }' "$1"; }
# added FILE NAME: the median of FILE's NAME minus the plain run's, turn by turn.
added() { column "$1" "$2" | paste - "$T/plain.$2" | awk '{ print $1 - $2 }' | median; }
FIELDS="per_thread_us cpu_us_per_thread calls_us faults_per_thread"
for f in $FIELDS; do column "$T/plain" $f >"$T/plain.$f"; done
printf "%-28s %7s %7s %8s %6s %8s %7s %9s %7s %6s\n" run wall_us cpu_us calls_us faults \
    +wall_us +cpu_us +calls_us +faults ratio
set -- plain "$@"
k=0
for so in "$@"; do
    if [ $k = 0 ]; then f="$T/plain"; else f="$T/shim$k"; fi
    line=$(printf "%-28s" "$so")
    for x in $FIELDS; do line="$line $(column "$f" $x | median)"; done
    if [ $k -gt 0 ]; then
        for x in $FIELDS; do line="$line $(added "$f" $x)"; done
        line="$line $(column "$f" per_thread_us | median) $(median <"$T/plain.per_thread_us")"
    fi
    echo "$line" | awk '{ printf "%-28s %7.1f %7.1f %8.2f %6.2f", $1, $2, $3, $4, $5
                          if (NF > 5) printf " %8.1f %7.1f %9.2f %7.2f %6.2f", $6, $7, $8, $9, $10 / $11
                          printf "\n" }'
    k=$((k + 1))
done
