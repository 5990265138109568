#!/bin/sh
# report_not_trace.sh - a file that is not a trace (a text file, a random
# binary, an ELF program, an empty file, a file shorter than the prefix, a
# future format version, the prefix with garbage after it) gives one clear
# error naming the file (and the byte where that means something), exit 2,
# and no process block: nothing was decoded, so there is no process to
# describe.  Next to a real trace, the real one is reported alone.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -x "$ANA" ] && [ -x "$CUPROBE" ] || die "analyzer or front end not built"
GOLD="$ROOT/tests/golden/report_oom_torch.trace"
[ -f "$GOLD" ] || skip "no golden trace"

cp /etc/passwd "$TMP/passwd"
# Random bytes after a fixed first one: a first byte '{' (1 run in 256) made
# it a summary to the analyzer, with another message.
{ printf 'R'; head -c 4095 /dev/urandom; } >"$TMP/random.bin"
cp "$ANA" "$TMP/elf"
: >"$TMP/empty"
printf 'CUPRO' >"$TMP/short"
# A valid magic with version 9, and the prefix followed by garbage.
printf 'CUPROBE\000\011\000\000\000\000\000\000\000' >"$TMP/future"
{ head -c 16 "$GOLD"; printf 'this is not zstd at all, just text'; } >"$TMP/garbage"

check() {   # check NAME PATTERN: one error line naming the file, no report
    f="$TMP/$1"
    for cmd in "$CUPROBE report --no-symbolize" "$ANA report --no-symbolize --json" \
               "$ANA report --no-symbolize --list"; do
        $cmd "$f" >"$TMP/out" 2>"$TMP/err"; rc=$?
        [ $rc -eq 2 ] || die "$1 ($cmd): exit $rc, expected 2"
        [ ! -s "$TMP/out" ] || { cat "$TMP/out"; die "$1 ($cmd): a report was printed"; }
        [ "$(grep -c . "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; die "$1: expected one error line"; }
        expect_grep "^$f: $2" "$TMP/err"
    done
}
check passwd 'not a cuprobe trace: file byte 0 is not the magic "CUPROBE"'
check random.bin 'not a cuprobe trace: file byte 0 is not the magic "CUPROBE"'
check elf 'not a cuprobe trace: file byte 0 is not the magic "CUPROBE" \(an ELF file\)'
check empty 'not a cuprobe trace: the file is empty'
check short 'not a cuprobe trace: only 5 bytes, the prefix needs 16'
check future 'trace format version 9 is newer than this cuprobe'
check garbage 'at file byte 16: .*no record could be decoded'

# Next to a real trace: that one is reported, the other is an error only.
"$CUPROBE" report --no-symbolize "$GOLD" "$TMP/passwd" >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 2 ] || die "good + not a trace: exit $rc, expected 2"
expect_grep "^cuprobe report: 1 trace" "$TMP/out"
expect_no_grep "pid 0 |\(\?\)|passwd" "$TMP/out"
expect_grep "^$TMP/passwd: not a cuprobe trace" "$TMP/err"
"$ANA" report --no-symbolize --json "$GOLD" "$TMP/empty" >"$TMP/out" 2>/dev/null
n=$(grep -o '"pid":' "$TMP/out" | wc -l)
"$ANA" report --no-symbolize --json "$GOLD" >"$TMP/out1"
m=$(grep -o '"pid":' "$TMP/out1" | wc -l)
[ "$n" = "$m" ] || die "json lists the non-trace ($n pid fields, alone: $m)"
echo "report_not_trace: ok"
