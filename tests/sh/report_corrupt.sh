#!/bin/sh
# report_corrupt.sh - the report on damaged input, and its exit statuses.
# A trace cut cleanly at its end with no END record is a killed process: it
# is reported ("killed") and the exit status is 0 (3 under --fail-on).  A
# corrupted one must give "FILE: at file byte N: reason" on stderr, a report of
# what decoded on stdout, and exit status 2; random damage must never crash
# the analyzer.  Also:
# --fail-on (exit 3), --check, and usage errors (exit 2).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] || skip "analyzer not built"
GOLD="$ROOT/tests/golden/report_mix.trace"
[ -f "$GOLD" ] || skip "no golden trace"
size=$(stat -c %s "$GOLD")

run() {     # run ARGS...: stdout in $TMP/out, stderr in $TMP/err, status in $rc
    "$ANA" report --no-symbolize "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

# 1. cut in the middle (SIGKILL): what decoded is reported as killed, exit 0
head -c $((size / 2)) "$GOLD" >"$TMP/cut.trace"
run "$TMP/cut.trace"
[ $rc -eq 0 ] || die "cut trace: exit $rc, expected 0"
[ ! -s "$TMP/err" ] || die "cut trace: a killed process is not an input error: $(cat "$TMP/err")"
expect_grep "killed \\(no END record" "$TMP/out"
expect_grep "\\[killed\\] killed: no exit was recorded, consistent with SIGKILL" "$TMP/out"
expect_grep "^Findings:" "$TMP/out"
expect_grep "pageable-async-copy" "$TMP/out"
# memory live at the cut is not a leak
expect_no_grep "\[leak\]" "$TMP/out"
run --json "$TMP/cut.trace"
[ $rc -eq 0 ] || die "cut trace (json): exit $rc"
expect_grep '"truncated":true' "$TMP/out"
expect_grep '"killed":true' "$TMP/out"

# 2. damaged bytes inside a compressed frame
cp "$GOLD" "$TMP/bad.trace"
printf '\377\377\377\377\377\377\377\377' |
    dd of="$TMP/bad.trace" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
run "$TMP/bad.trace"
[ $rc -eq 2 ] || die "damaged trace: exit $rc, expected 2"
expect_grep "bad.trace: at file byte [0-9]+" "$TMP/err"

# 3. not a trace, empty, only the prefix, missing
head -c 4096 /dev/urandom >"$TMP/random.trace"
: >"$TMP/empty.trace"
head -c 16 "$GOLD" >"$TMP/prefix.trace"
for f in random empty prefix missing; do
    run "$TMP/$f.trace"
    [ $rc -eq 2 ] || die "$f: exit $rc, expected 2"
    expect_grep "$f.trace" "$TMP/err"
done

# 4. a good and a cut trace together: both reported, exit 0; with a damaged
#    one, exit 2
run "$GOLD" "$TMP/cut.trace"
[ $rc -eq 0 ] || die "good+cut: exit $rc"
expect_grep "cuprobe report: 2 traces" "$TMP/out"
# (bad.trace is one zstd frame whose checksum fails: nothing of it decodes,
# so it is an error line and no process block; report_not_trace.sh)
run "$GOLD" "$TMP/bad.trace"
[ $rc -eq 2 ] || die "good+damaged: exit $rc"
expect_grep "cuprobe report: 1 trace" "$TMP/out"
expect_grep "bad.trace: at file byte [0-9]+: .*no record could be decoded" "$TMP/err"

# 5. random damage never crashes (exit 0, 2 or 3 only)
i=0
while [ $i -lt 150 ]; do
    cp "$GOLD" "$TMP/fz.trace"
    off=$(( (i * 7919 + 17) % size ))
    printf "\\$(printf '%03o' $(( (i * 37 + 11) % 256 )))" |
        dd of="$TMP/fz.trace" bs=1 seek=$off conv=notrunc 2>/dev/null
    run "$TMP/fz.trace"
    case $rc in 0|2|3) ;; *) die "damage at $off: exit $rc (crash?)"; cat "$TMP/err" ;; esac
    i=$((i + 1))
done

# 6. --fail-on and --check
run --fail-on error "$GOLD"
[ $rc -eq 3 ] || die "--fail-on error with an error finding: exit $rc, expected 3"
run --fail-on error --check leak "$GOLD"
[ $rc -eq 0 ] || die "--fail-on error, only warnings: exit $rc, expected 0"
run --fail-on warning --check leak "$GOLD"
[ $rc -eq 3 ] || die "--fail-on warning with a warning: exit $rc, expected 3"
run --list --check leak --check pageable-async-copy "$GOLD"
[ $rc -eq 0 ] || die "--list: exit $rc"
expect_no_grep "cuda-errors" "$TMP/out"
expect_grep "^leak warning [0-9]+$" "$TMP/out"
expect_grep "^pageable-async-copy warning [0-9]+$" "$TMP/out"
run --fail-on warning --check killed "$TMP/cut.trace"
[ $rc -eq 3 ] || die "a killed process under --fail-on warning: exit $rc, expected 3"
run --fail-on error "$TMP/bad.trace"
[ $rc -eq 2 ] || die "an unreadable trace must win over --fail-on: exit $rc"

# 7. usage errors; no colour when stdout is not a terminal
run --check no-such-check "$GOLD"
[ $rc -eq 2 ] || die "unknown check: exit $rc"
run --bogus "$GOLD"
[ $rc -eq 2 ] || die "unknown option: exit $rc"
mkdir "$TMP/none" && cd "$TMP/none" || die "cd"
run
[ $rc -eq 2 ] || die "no trace and none in the directory: exit $rc"
expect_grep "no traces here" "$TMP/err"
cd "$ROOT" || die "cd"
run "$GOLD"
if grep -q "$(printf '\033')" "$TMP/out"; then die "colour escapes in a file"; fi
echo "ok"
