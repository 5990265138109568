#!/bin/sh
# bench/compare_shims.sh - before/after numbers for a hot-path change: the
# added cost per call of two builds of libcuprobe.so, measured as
# alternating runs (plain, old, new) x PAIRS in one sitting on the fake
# driver (REAL=1: the real one); prints medians, and the median of the
# per-round new - old differences with the count of rounds new was faster.
# Build the old one from a worktree, e.g.
#   git worktree add /tmp/before REV && make -C /tmp/before build/libcuprobe.so
#   sh bench/compare_shims.sh /tmp/before/build/libcuprobe.so build/libcuprobe.so
OLD=$1; NEW=$2; ITER=${3:-1000000}; PAIRS=${4:-7}
B=${B:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# REAL=1: the machine's own libcuda (a GPU machine) instead of the fake driver.
[ "${REAL:-0}" = 1 ] || export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
i=0
while [ $i -lt "$PAIRS" ]; do
    "$B/bench/bench_calls" "$ITER" >>"$T/plain" || exit 1
    CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$OLD" "$B/bench/bench_calls" "$ITER" >>"$T/old" || exit 1
    CUPROBE_OUTPUT="$T/t-%p.trace" LD_PRELOAD="$NEW" "$B/bench/bench_calls" "$ITER" >>"$T/new" || exit 1
    rm -f "$T"/t-*.trace
    i=$((i + 1))
done
med() { grep "^$1 " "$2" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# new - old of each round, whose two runs are seconds apart: this VM's
# speed drifts between sittings and within one (plain runs of one sitting
# differ by up to 2x), so the median of the paired differences, and in how
# many rounds new was faster, say more than the difference of the medians.
paired() {
    paste "$T/old" "$T/new" | awk -v c="$1" '$1 == c { print $4 - $2 }' | sort -n |
        awk '{ a[NR] = $1; if ($1 < 0) f++ } END { printf "%9.1f %3d/%d", a[int((NR + 1) / 2)], f, NR }'
}
printf "%-12s %9s %9s %9s %10s %10s %9s %6s\n" call plain old new old_added new_added new-old faster
for c in launch htod_pinned alloc_free async_pair async_live async_alt async_step async_deep async_fan async_memset async_inside async_view async_2t; do
    p=$(med $c "$T/plain"); o=$(med $c "$T/old"); n=$(med $c "$T/new")
    awk -v c=$c -v p="$p" -v o="$o" -v n="$n" \
        'BEGIN { printf "%-12s %9.1f %9.1f %9.1f %10.1f %10.1f ", c, p, o, n, o - p, n - p }'
    echo "$(paired $c)"
done
