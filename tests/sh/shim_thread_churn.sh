#!/bin/sh
# shim_thread_churn.sh - short-lived threads (bench/thread_churn: 2,000 in
# waves of 8, each making the context current and allocating once, an
# event with its call site) cost little more traced than plain.  Three
# turns, plain and traced one after the other; medians:
#   - a thread's two calls, timed in the thread, take at most 50 us more;
#   - a thread takes at most 0.75 page faults more (its first unwind and
#     its buffers come from memory threads before it left, and its walk
#     stays within the stack pages its program touched);
#   - the run takes at most 3x as long.
# A thread's first event once cost 1 ms more and 66 page faults more, and
# the run 5x as long (libunwind's per-thread cache mapped and cleared, a
# stack-cache table calloc'd, every frame walked the slow way).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -z "${CUPROBE_TEST_PRELOAD:-}" ] || skip "timings and page faults of a plain build; not under a sanitizer"
[ -f "$SHIM" ] && [ -x "$B/bench/thread_churn" ] || die "shim or bench/thread_churn not built"
export LD_LIBRARY_PATH="$FAKE_DIR"
for i in 1 2 3; do
    "$B/bench/thread_churn" 2000 >>"$TMP/plain" || die "thread_churn failed"
    CUPROBE_OUTPUT="$TMP/t-%p.trace" LD_PRELOAD="$PRELOAD" "$B/bench/thread_churn" 2000 \
        >>"$TMP/traced" || die "thread_churn failed under the shim"
done
# The trace holds every thread's allocation, each with its call site.
n=$("$ANA" dump "$TMP"/t-*.trace | grep -c '^ALLOC .*api=cuMemAlloc_v2 result=0 .* stack=[1-9]')
[ "$n" -ge 6000 ] || die "expected 6000 allocations with a call site in the traces, found $n"
# field FILE NAME: the median of thread_churn's figure NAME in FILE.
field() {
    awk -v n="$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }' "$1" |
        sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}
calls=$(awk -v t="$(field "$TMP/traced" calls_us)" -v p="$(field "$TMP/plain" calls_us)" \
    'BEGIN { print t - p }')
faults=$(awk -v t="$(field "$TMP/traced" faults_per_thread)" \
    -v p="$(field "$TMP/plain" faults_per_thread)" 'BEGIN { print t - p }')
ratio=$(awk -v t="$(field "$TMP/traced" per_thread_us)" -v p="$(field "$TMP/plain" per_thread_us)" \
    'BEGIN { print t / p }')
cat "$TMP/plain" "$TMP/traced"
awk -v x="$calls" 'BEGIN { exit !(x <= 50) }' || die "a thread's first calls took $calls us more traced"
awk -v x="$faults" 'BEGIN { exit !(x <= 0.75) }' || die "a thread took $faults page faults more traced"
awk -v x="$ratio" 'BEGIN { exit !(x <= 3) }' || die "2,000 short threads took ${ratio}x as long traced"
echo "thread churn: +$calls us in a thread's calls, +$faults page faults a thread, ${ratio}x the time"
