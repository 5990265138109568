#!/bin/sh
# bench/pair_shims.sh OLD_SHIM [NEW_SHIM] - two shims against one plain
# baseline on the fake driver, in one sitting: PAIRS turns (default 21) of
# bench_calls plain, under OLD and under NEW, in turn, so that both shims
# see the same phases of a shared machine.  Prints, per path, the median
# plain ns, each shim's added ns and NEW minus OLD.
#   B (build), ITER (1000000), PAIRS (21); CUPROBE_* pass through.
. "$(dirname "$0")/lib.sh"
OLD=${1:?usage: bench/pair_shims.sh OLD_SHIM [NEW_SHIM]}
NEW=${2:-$B/libcuprobe.so}
ITER=${ITER:-1000000}
for i in $(seq "${PAIRS:-21}"); do
    "$B/bench/bench_calls" "$ITER" >>"$T/plain" || exit 1
    for s in old new; do
        if [ $s = old ]; then so=$OLD; else so=$NEW; fi
        CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$so" "$B/bench/bench_calls" "$ITER" >>"$T/$s" || exit 1
        rm -f "$T"/t-*.trace
    done
done
printf "%-12s %8s %10s %10s %10s\n" call plain old_added new_added new-old
for c in $(awk '!seen[$1]++ { print $1 }' "$T/plain"); do
    p=$(med "$c" "$T/plain"); o=$(med "$c" "$T/old"); n=$(med "$c" "$T/new")
    awk -v c="$c" -v p="$p" -v o="$o" -v n="$n" \
        'BEGIN { printf "%-12s %8.1f %10.1f %10.1f %10.1f\n", c, p, o - p, n - p, n - o }'
done
