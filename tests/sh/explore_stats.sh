#!/bin/sh
# explore_stats.sh - `cuprobe stats`: on the golden traces and fake-driver
# runs of tests/progs/explore_train and tests/progs/demo_train, each API's
# calls and errors (CSV and JSON) equal those counted from `dump` of the same
# traces (tests/sh/explore_check.py stats); the site tables name the call
# site that holds the most at the peak, allocates the most and allocates
# temporaries, and an empty one says "none"; the time blocked in
# synchronous copies is that of the copy calls that kept their caller
# waiting, pageable "async" ones included; --csv keeps one header per
# table; a directory gives the stats of its traces; bad options exit 2.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read CSV and JSON)"
[ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
cd "$ROOT" || die "no $ROOT"
CHECK="python3 $ROOT/tests/sh/explore_check.py"

FAKECUDA_MEM=16G LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
    CUPROBE_OUTPUT="$TMP/leak.trace" "$B/tests/progs/explore_train" leak >/dev/null ||
    die "explore_train leak failed"

one() {
    name=$1; shift
    "$ANA" dump "$@" >"$TMP/$name.dump" || die "$name: dump exit $?"
    "$ANA" stats --csv --table api --no-progress "$@" >"$TMP/$name.csv" ||
        die "$name: stats --csv exit $?"
    "$ANA" stats --json --no-progress "$@" >"$TMP/$name.json" || die "$name: stats --json exit $?"
    $CHECK stats "$TMP/$name.dump" "$TMP/$name.csv" "$TMP/$name.json" || die "$name: counts differ"
}
one mix tests/golden/report_mix.trace
one oom_torch tests/golden/report_oom_torch.trace
one fork tests/golden/report_fork_0.trace tests/golden/report_fork_1.trace
one leak "$TMP/leak.trace"
FAKECUDA_MEM=16G LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
    CUPROBE_OUTPUT="$TMP/growth.trace" "$B/tests/progs/explore_train" growth >/dev/null ||
    die "explore_train growth failed"
one growth "$TMP/growth.trace"
FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
    CUPROBE_OUTPUT="$TMP/demo.trace" "$B/tests/progs/demo_train" >/dev/null || die "demo failed"
one demo "$TMP/demo.trace"

# Blocked: every copy call of the leak run is synchronous (40 cuMemcpyHtoD_v2);
# the demo's 40 pageable cuMemcpyHtoDAsync_v2 ran synchronously as well,
# besides its 40 cuMemcpyDtoH_v2.
python3 - "$TMP/leak.json" "$TMP/demo.json" <<'PY' || die "time blocked in copies"
import json, sys
for path, apis in ((sys.argv[1], ["cuMemcpyHtoD_v2"]),
                   (sys.argv[2], ["cuMemcpyHtoDAsync_v2", "cuMemcpyDtoH_v2"])):
    d = json.load(open(path))
    calls = {a["name"]: a for a in d["apis"]}
    dev = d["processes"][0]["devices"][0]
    want = (sum(calls[a]["total_ns"] for a in apis), sum(calls[a]["calls"] for a in apis))
    got = (dev["blocked_ns"], dev["blocking_copies"])
    assert got == want, "%s: blocked %s, the copy calls took %s" % (path, got, want)
PY
"$ANA" stats --table copies --no-progress "$TMP/demo.trace" >"$TMP/demo.txt" || die "stats exit $?"
expect_grep 'HtoD +pageable +40 +160\.00 MiB' "$TMP/demo.txt"

# The leak's site leads the peak table and allocates as often as the loop.
"$ANA" stats --no-progress "$TMP/leak.trace" >"$TMP/leak.txt" || die "stats exit $?"
expect_grep '^Peak consumers' "$TMP/leak.txt"
expect_grep '80\.00 MiB .*keep_buffer \(tests/progs/explore_train\.c:' "$TMP/leak.txt"
expect_grep '^ .* 40 +80\.00 MiB +0 +keep_buffer' "$TMP/leak.txt"
expect_grep 'cuMemAlloc_v2 +81 +0 +81 ' "$TMP/leak.txt"
# A free is recorded before the driver frees: counted, never timed.
expect_grep 'cuMemFree_v2 +[0-9]+ +0 +0 +- +- +- +- +-$' "$TMP/leak.txt"
expect_grep 'HtoD +pinned +40 +40\.00 MiB' "$TMP/leak.txt"
# Nothing was freed with no allocation between: the table says so.
grep -A1 '^Temporary allocations' "$TMP/leak.txt" | tail -n 1 >"$TMP/leak.temp"
expect_grep '^  none$' "$TMP/leak.temp"
# The growth run's plateau: 400 activations each freed before the next allocation.
"$ANA" stats --table temporary --no-progress "$TMP/growth.trace" >"$TMP/growth.txt" ||
    die "stats exit $?"
expect_grep ' 400 +[0-9.]+% +3\.12 GiB +take_activation \(tests/progs/explore_train\.c:' "$TMP/growth.txt"
# The OOM's holders, from the golden OOM trace.
"$ANA" stats --table oom --no-progress tests/golden/report_oom_torch.trace >"$TMP/oom.txt"
expect_grep '1\.50 GiB +3\.00 GiB' "$TMP/oom.txt"

# A directory gives the stats of its traces.
mkdir "$TMP/dir" && cp "$TMP/leak.trace" "$TMP/dir/" || die "cannot copy the trace"
"$ANA" stats --json --no-progress "$TMP/dir" | sed 's|"file":"[^"]*"||' >"$TMP/dir.json" ||
    die "stats DIR exit $?"
sed 's|"file":"[^"]*"||' "$TMP/leak.json" | cmp -s - "$TMP/dir.json" ||
    die "stats of a directory differ from those of its trace"

# CSV: every table has its header once.
"$ANA" stats --csv --no-progress "$TMP/leak.trace" >"$TMP/all.csv" || die "stats --csv exit $?"
[ "$(grep -c '^API,Calls,' "$TMP/all.csv")" = 1 ] || die "the api table's header is not once"
[ "$(grep -c '^Process,GPU,Temporary,' "$TMP/all.csv")" = 1 ] || die "no temporary table"

"$ANA" stats --table nope "$TMP/leak.trace" 2>"$TMP/err"
[ $? -eq 2 ] || die "--table nope: expected exit 2"
expect_grep "api, devices" "$TMP/err"
"$ANA" stats --json --csv "$TMP/leak.trace" 2>/dev/null
[ $? -eq 2 ] || die "--json --csv: expected exit 2"
echo "stats check out"
