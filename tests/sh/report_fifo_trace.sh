#!/bin/sh
# report_fifo_trace.sh - the report never blocks on a trace it found: a
# FIFO named *.trace in the report's directory, or in the run's manifest
# (.cuprobe-last-run), or the manifest being a FIFO itself, is said ("a
# FIFO, not a regular file") and skipped, with --jobs 4 as without; the
# real trace beside it is reported.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
GEN="$B/tests/unit/test_decode"
[ -x "$ANA" ] && [ -x "$GEN" ] || die "analyzer or test_decode not built"
D="$TMP/run"
mkdir "$D"
"$GEN" pack "$ROOT/tests/fuzz/report_corpus/leak.raw" "$D/a.trace" || die "pack failed"
mkfifo "$D/b.trace" || skip "mkfifo failed"

report() {  # WHAT JOBS: report $D, which must end, show the leak and skip $2
    timeout 20 "$ANA" report --no-progress --list --jobs "$2" "$D" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ $rc -eq 124 ] && die "report --jobs $2 hangs: $1"
    [ $rc -eq 0 ] || { cat "$TMP/err"; die "report --jobs $2 exits $rc: $1"; }
    expect_grep '^leak ' "$TMP/out"
    echo "ok   --jobs $2: $1"
}

for j in 1 4; do
    report "a FIFO named *.trace in the directory" $j
    expect_grep "b\.trace: a FIFO, not a regular file: skipped" "$TMP/err"
done
# The manifest `cuprobe run` leaves (docs/trace-format.md) naming the FIFO;
# the run id is that of a HEADER that records none.
printf 'cuprobe-run 1\nrun-id ffffffffffffffff\ntrace b.trace\ntrace a.trace\n' >"$D/.cuprobe-last-run"
for j in 1 4; do
    report "a FIFO in the run's manifest" $j
    expect_grep "b\.trace: a FIFO, not a regular file: skipped" "$TMP/err"
done
rm "$D/.cuprobe-last-run"
mkfifo "$D/.cuprobe-last-run"
report "the run's list is a FIFO" 4
expect_grep "cuprobe-last-run: a FIFO, not a regular file: ignored" "$TMP/err"
echo "fifo trace ok"
