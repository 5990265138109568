#!/bin/sh
# explore_diff.sh - `cuprobe diff BASE NEW` on fake-driver runs of
# tests/progs/explore_train: a clean run against a leaking one names the
# leaking site with its size (peak per site and the leak finding that
# appeared), exits 0 without a gate and 3 with --fail-on-regression 10%,
# saying where, and the other way round the leak went away; a run against
# itself prints nothing and exits 0, whether given as traces, directories,
# report summaries or `stats --json`; two runs of one program, loaded at
# other addresses, match site by site (by file:line and function); the JSON
# form holds the same, the time blocked in copies of each side included; a
# gate above the growth passes.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
[ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built"
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to read JSON)"
cd "$ROOT" || die "no $ROOT"

for m in clean leak again; do
    mkdir -p "$TMP/$m"
    mode=$m
    [ "$m" = again ] && mode=leak
    FAKECUDA_MEM=16G LD_LIBRARY_PATH="$FAKE_DIR" LD_PRELOAD="$PRELOAD" \
        CUPROBE_OUTPUT="$TMP/$m/run.trace" "$B/tests/progs/explore_train" $mode >/dev/null ||
        die "explore_train $m failed"
done

"$ANA" diff --no-progress "$TMP/clean/run.trace" "$TMP/leak/run.trace" >"$TMP/d.txt" 2>"$TMP/d.err"
[ $? -eq 0 ] || { cat "$TMP/d.err"; die "diff without a gate: expected exit 0"; }
expect_grep 'peak 72\.00 MiB -> 152\.00 MiB: \+80\.00 MiB \(\+111%\)' "$TMP/d.txt"
expect_grep '\+80\.00 MiB held at the peak .* at keep_buffer \(tests/progs/explore_train\.c:' "$TMP/d.txt"
expect_grep 'allocations 41 -> 81 \(\+40\)' "$TMP/d.txt"
expect_grep '^  \+ warning \[leak\] 80\.00 MiB leaked' "$TMP/d.txt"
expect_grep 'at keep_buffer \(tests/progs/explore_train\.c:[0-9]+\): 80\.00 MiB' "$TMP/d.txt"
# The other way round the leak went away, and the peak fell.
"$ANA" diff --no-progress "$TMP/leak/run.trace" "$TMP/clean/run.trace" >"$TMP/r.txt" ||
    die "diff NEW BASE: exit $?"
expect_grep '^  - warning \[leak\] 80\.00 MiB leaked' "$TMP/r.txt"
expect_grep 'peak 152\.00 MiB -> 72\.00 MiB: -80\.00 MiB \(-53%\)' "$TMP/r.txt"

"$ANA" diff --no-progress --fail-on-regression 10% "$TMP/clean" "$TMP/leak" >/dev/null 2>"$TMP/g.err"
[ $? -eq 3 ] || die "--fail-on-regression 10%: expected exit 3"
expect_grep 'regression: peak \+80\.00 MiB \(\+111%\) at keep_buffer \(tests/progs/explore_train\.c:[0-9]+\) on GPU 0' "$TMP/g.err"
"$ANA" diff --no-progress --fail-on-regression 100MiB "$TMP/clean" "$TMP/leak" >/dev/null 2>&1
[ $? -eq 0 ] || die "--fail-on-regression 100MiB: 80 MiB more should pass"
"$ANA" diff --no-progress --fail-on-regression 64MiB "$TMP/clean" "$TMP/leak" >/dev/null 2>&1
[ $? -eq 3 ] || die "--fail-on-regression 64MiB: expected exit 3"

# A run against itself, in every form a side can take.
"$ANA" report --summary "$TMP/leak.summary" --no-progress "$TMP/leak/run.trace" ||
    die "report --summary exit $?"
"$ANA" stats --json --no-progress "$TMP/leak/run.trace" >"$TMP/leak.stats.json" ||
    die "stats --json exit $?"
for pair in "$TMP/leak/run.trace $TMP/leak/run.trace" "$TMP/leak $TMP/leak/run.trace" \
    "$TMP/leak.summary $TMP/leak.summary" "$TMP/leak.stats.json $TMP/leak/run.trace"; do
    # shellcheck disable=SC2086
    "$ANA" diff --no-progress --fail-on-regression 0% $pair >"$TMP/self.txt" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/self.txt"; die "self diff ($pair): exit $rc"; }
    [ -s "$TMP/self.txt" ] && { cat "$TMP/self.txt"; die "self diff ($pair) is not empty"; }
done

"$ANA" diff --json --no-progress "$TMP/clean" "$TMP/leak" >"$TMP/d.json" || die "diff --json"
python3 - "$TMP/d.json" "$TMP/leak.stats.json" <<'PY' || die "diff --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cuprobe-diff", d
dev = d["devices"][0]
assert dev["new_peak_bytes"] - dev["base_peak_bytes"] == 80 << 20, dev
assert "keep_buffer" in dev["sites"][0]["site"], dev["sites"]
leak = [f for f in d["findings"] if f["check"] == "leak" and f["change"] == "appeared"]
assert leak and leak[0]["site_bytes"] == 80 << 20, d["findings"]
st = json.load(open(sys.argv[2]))["processes"][0]["devices"][0]
assert dev["new_blocked_ns"] == st["blocked_ns"] > 0, (dev, st["blocked_ns"])
PY

# Another run of the leaking program: its code at other addresses (ASLR),
# the same sites by file:line and function.  Only the time blocked may move.
n1=$("$ANA" dump "$TMP/leak/run.trace" | grep -m1 '^STACK')
n2=$("$ANA" dump "$TMP/again/run.trace" | grep -m1 '^STACK')
[ "${n1#* id=}" != "${n2#* id=}" ] || echo "note: both runs at the same addresses (no ASLR here)"
"$ANA" diff --json --no-progress "$TMP/leak" "$TMP/again" >"$TMP/again.json" || die "diff --json"
python3 - "$TMP/again.json" <<'PY' || die "two runs of one program differ site by site"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["findings"] == [], d["findings"]
for dev in d["devices"]:
    assert dev["sites"] == [], dev
    assert dev["base_peak_bytes"] == dev["new_peak_bytes"], dev
    assert dev["base_allocations"] == dev["new_allocations"], dev
PY
"$ANA" diff "$TMP/clean" 2>/dev/null
[ $? -eq 2 ] || die "diff with one run: expected exit 2"
"$ANA" diff --fail-on-regression lots "$TMP/clean" "$TMP/leak" 2>/dev/null
[ $? -eq 2 ] || die "a bad gate: expected exit 2"
echo "diffs check out"
