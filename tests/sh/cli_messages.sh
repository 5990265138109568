#!/bin/sh
# cli_messages.sh - the analyzer's and the front end's messages and options
# on misuse: a directory given as a trace, the same trace twice, dump
# --help, usage naming `cuprobe`, --sites and --fail-on without or with bad
# values, a symlinked front end, `run -- nosuchcmd`.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "analyzer or front end not built"
GOLD="$ROOT/tests/golden/report_oom_torch.trace"
r() { "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

mkdir "$TMP/dir"
r "$ANA" report --no-symbolize "$TMP/dir"
[ $rc -eq 2 ] || die "directory: exit $rc"
# A directory is a run directory (cuprobe run writes one): it says
# what it looked for.
expect_grep "dir: no traces here" "$TMP/err"
expect_no_grep "only 0 bytes" "$TMP/err"

r "$ANA" report --no-symbolize --list "$GOLD" "$GOLD"
[ $rc -eq 0 ] || die "same trace twice: exit $rc"
expect_grep "given more than once; read once" "$TMP/err"
r "$ANA" report --no-symbolize --json "$GOLD" "$GOLD"
n=$(grep -o '"pid":' "$TMP/out" | wc -l)
r "$ANA" report --no-symbolize --json "$GOLD"
m=$(grep -o '"pid":' "$TMP/out" | wc -l)
[ "$n" = "$m" ] || die "the same trace twice was reported twice ($n pid fields, once: $m)"

r "$CUPROBE" dump --help
[ $rc -eq 0 ] || { cat "$TMP/err"; die "dump --help: exit $rc"; }
expect_grep "^usage: cuprobe dump \[--stats\] \[TRACE" "$TMP/out"
r "$CUPROBE" report --help
expect_grep "^usage: cuprobe report " "$TMP/out"
expect_no_grep "cuprobe-analyze" "$TMP/out"

for v in abc -1 0 5x; do
    r "$ANA" report --sites "$v" "$GOLD"
    [ $rc -eq 2 ] || die "--sites $v accepted (exit $rc)"
    expect_grep "sites takes a number from 1 to 1000, not '$v'" "$TMP/err"
done
r "$ANA" report --no-symbolize --sites 3 "$GOLD"
[ $rc -eq 0 ] || die "--sites 3: exit $rc"
r "$ANA" report "$GOLD" --fail-on
r "$ANA" report --fail-on
[ $rc -eq 2 ] || die "--fail-on without a value: exit $rc"
expect_grep "fail-on needs a value" "$TMP/err"
expect_no_grep "unknown option" "$TMP/err"

# The front end through a symlink in another directory finds its analyzer.
mkdir "$TMP/bin"
ln -s "$CUPROBE" "$TMP/bin/cuprobe"
r "$TMP/bin/cuprobe" report --no-symbolize --list "$GOLD"
[ $rc -eq 0 ] || { cat "$TMP/err"; die "symlinked cuprobe: exit $rc"; }

r "$CUPROBE" run -- cuprobe-no-such-command-xyz
[ $rc -eq 127 ] || die "run -- nosuchcmd: exit $rc, expected 127"
expect_grep "^cuprobe: run: command not found: cuprobe-no-such-command-xyz" "$TMP/err"
expect_no_grep "[0-9]+: exec" "$TMP/err"
# The shim: an over-long CUPROBE_OUTPUT is named shortened, with its reason;
# an unknown % escape is reported once.
HELPER="$B/tests/unit/test_writer_proc"
[ -x "$HELPER" ] || die "test_writer_proc not built"
long=$(printf '%05000d' 0)
CUPROBE_OUTPUT="$TMP/$long-%p.trace" "$HELPER" basic 10 >/dev/null 2>"$TMP/err" ||
    die "a long CUPROBE_OUTPUT broke the program"
expect_grep "cannot create trace file '.*\\.\\.\\.\\([0-9]+ characters\\)\\.\\.\\..*': File name too long" "$TMP/err"
CUPROBE_OUTPUT="$TMP/x-%q-%p.trace" "$HELPER" basic 10 >/dev/null 2>"$TMP/err" ||
    die "an unknown escape broke the program"
expect_grep "CUPROBE_OUTPUT: unknown escape '%q' is not expanded" "$TMP/err"
[ "$(grep -c 'unknown escape' "$TMP/err")" -eq 1 ] || die "the escape warning is not once"
ls "$TMP"/x-?q-*.trace >/dev/null 2>&1 || die "no trace written under the literal name"
echo "cli messages ok"
