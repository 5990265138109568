#!/bin/sh
# front_reaped.sh - `cuprobe run` is a child subreaper and keeps the status
# of every process it reaps: an orphaned grandchild that ends with a raw
# exit_group(0) (no exit handler, no END record) is reported as having
# exited with status 0 without running its exit handlers, not as killed;
# the same trace read without the manifest still says "killed".
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "shim, analyzer or front end not built"
P="$B/tests/progs/front_run"
[ -x "$P" ] || die "$P not built"
export LD_LIBRARY_PATH="$FAKE_DIR"

mkdir "$TMP/o" && cd "$TMP/o" || die "cd"
CUPROBE_FLUSH_MS=20 "$CUPROBE" run -- "$P" orphan >"$TMP/o.out" 2>"$TMP/o.err" ||
    { cat "$TMP/o.err"; die "orphan: run failed"; }
g=$(sed -n 's/^grandchild \([0-9]*\) gone$/\1/p' "$TMP/o.out")
[ -n "$g" ] || die "orphan: the grandchild's pid was not printed"
[ -f "cuprobe-$g.trace" ] || { ls; die "orphan: the grandchild wrote no trace"; }
"$ANA" dump "cuprobe-$g.trace" >"$TMP/g.dump" 2>&1
expect_no_grep '^END ' "$TMP/g.dump"
expect_grep "^exit $g 0 [0-9]+\$" .cuprobe-last-run

"$CUPROBE" report --no-progress --no-symbolize >"$TMP/rep.txt" 2>&1 || { cat "$TMP/rep.txt"; die "report failed"; }
expect_grep "trace: .*cuprobe-$g\\.trace, exited with status 0 without running exit handlers" "$TMP/rep.txt"
expect_no_grep '\[killed\]' "$TMP/rep.txt"
"$CUPROBE" report --json --no-progress --no-symbolize >"$TMP/rep.json" 2>&1
expect_grep '"reaped":\{"exit_status":0\}' "$TMP/rep.json"

# The trace alone, away from its manifest: no status is known.
mkdir "$TMP/alone" && cp "cuprobe-$g.trace" "$TMP/alone/" || die "cp"
"$CUPROBE" report --no-progress --no-symbolize "$TMP/alone" >"$TMP/alone.txt" 2>&1
expect_grep '\[killed\] killed: no exit was recorded' "$TMP/alone.txt"
echo "front_reaped: ok"
