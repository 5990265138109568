#!/bin/sh
# framework_watch: the companion samples PyTorch's allocator right after the
# allocator takes device memory (torch.segment records), not only on its
# 10 s timer, so a run of one second still has PyTorch's own timeline
# of growth.  The shim wakes the sampler through cuprobe_framework_wait().
# framework_prog.py grow keeps an 8 MiB tensor per step for 24 steps 40 ms
# apart on the fake driver; each new 20 MiB stand-in segment is also taken
# with cuMemAlloc.
. "$ROOT/tests/sh/lib.sh"
need_py_fake

run() { # run NAME [VAR=VALUE...] (SCENARIO=steady: framework_prog.py steady)
    name=$1; shift
    py_traced "$name" "$@" -- "$ROOT/tests/py/framework_prog.py" "${SCENARIO:-grow}"
    [ "$(cat "$TMP/$name.rc")" = 0 ] || { cat "$TMP/$name.err"; die "$name: run failed"; }
    "$ANA" dump "$TMP/$name.trace" >"$TMP/$name.dump" 2>&1 || die "$name: dump failed"
    "$ANA" report --no-progress "$TMP/$name.trace" >"$TMP/$name.report" 2>&1
}

# 1. Default: a sample after new segments (12 segments, at most one sample
#    per 50 ms), none from the timer; the growth finding uses them.
#    Without attribution it says how to name the line that keeps the memory.
run on CUPROBE_ATTRIBUTE=0
expect_grep '^kept 24 reserved 251658240$' "$TMP/on.out"
n=$(grep -c 'kind="torch.segment"' "$TMP/on.dump")
[ "$n" -ge 6 ] || die "expected >= 6 torch.segment records, found $n"
expect_no_grep 'kind="torch.periodic"' "$TMP/on.dump"
expect_grep 'segment_samples\\":'"$n"',' "$TMP/on.dump"
# The samples follow the growth: the last one saw (nearly) all of it.
last=$(grep 'kind="torch.segment"' "$TMP/on.dump" | tail -1)
echo "$last" | grep -q -E 'reserved_bytes\\":2(09715200|30686720|51658240)[,}]' ||
    die "the last torch.segment record missed the growth: $last"
expect_grep "^warning +\[memory-growth\]" "$TMP/on.report"
expect_grep "PyTorch's allocator takes memory from the driver where its cache runs out: .*Run again with --attribute \(cuprobe run --attribute \.\.\.\) to name the line that keeps it\." "$TMP/on.report"
expect_grep "PyTorch's own timeline \(([7-9]|[1-9][0-9]) samples\): allocated .* live tensors are growing" "$TMP/on.report"

# 2. CUPROBE_FRAMEWORK_WATCH=0: no segment samples, only the exit record.
run off CUPROBE_FRAMEWORK_WATCH=0
expect_no_grep 'kind="torch.segment"' "$TMP/off.dump"
expect_grep 'watch_gap_s\\":0\.0' "$TMP/off.dump"
expect_grep "PyTorch at the end: " "$TMP/off.report"

# 3. The program's output does not depend on the watch.
cmp -s "$TMP/on.out" "$TMP/off.out" || die "output differs with the watch"

# 4. Allocations below the peak do not wake the sampler (under
#    cudaMallocAsync every tensor is one; waking at each would take the
#    GIL many times a second).  60 allocations in 0.6 s, each freed before the next:
#    the first is the peak; waking at every one gave about 12 samples.
SCENARIO=steady
run steady
SCENARIO=
expect_grep '^steady 60$' "$TMP/steady.out"
n=$(grep -c 'kind="torch.segment"' "$TMP/steady.dump")
[ "$n" -le 2 ] || die "expected <= 2 torch.segment records below the peak, found $n"
echo "ok"
