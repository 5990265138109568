#!/bin/sh
# writer_quota.sh - EDQUOT, a disk quota reached while a program runs, ends
# the trace like a full file system (ENOSPC, tests/sh/writer_nospace.sh).
# Real quotas need a file system mounted with them, the quota tools and
# root; tests/progs/lib/quota_inject.c, preloaded, gives *.trace files a
# quota of CP_QUOTA_BYTES instead (EDQUOT from write, pwrite and fallocate
# beyond it; blocks already allocated stay writable).
#   1. exit: one warning naming the quota, the program's own exit status,
#      NOSPACE err=122 then END(exit), the report says "the disk quota was
#      exceeded (EDQUOT)" (not "the file system was full") and the JSON
#      "errno":"EDQUOT";
#   2. a segfault after the quota was reached: SIGNAL and END(signal) in
#      the room kept after NOSPACE, the report names SIGSEGV.
# tier: long
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
P="$B/tests/progs/disk_full"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$P" ] || die "shim, analyzer or disk_full not built"
QI="$TMP/libquota_inject.so"
${CC:-cc} -shared -fPIC -O1 -o "$QI" "$ROOT/tests/progs/lib/quota_inject.c" ||
    die "cannot build the quota injector"
export LD_LIBRARY_PATH="$FAKE_DIR"

# run NAME STATUS [MODE]: disk_full under the shim with a 48 KiB quota
run() {
    env CP_QUOTA_BYTES=49152 LD_PRELOAD="$QI" "$CUPROBE" run -o "$TMP/$1-%p.trace" -- \
        "$P" quota "$2" ${3:-} >"$TMP/$1.out" 2>"$TMP/$1.err"
    echo $? >"$TMP/$1.rc"
    trace=$(ls "$TMP/$1"-*.trace) || die "$1: no trace"
    "$ANA" dump "$trace" >"$TMP/$1.dump" 2>"$TMP/$1.derr" || { cat "$TMP/$1.derr"; die "$1: dump failed"; }
    "$ANA" report --no-symbolize "$trace" >"$TMP/$1.rep" 2>&1 || die "$1: report failed"
}

run exit 3
[ "$(cat "$TMP/exit.rc")" = 3 ] || { cat "$TMP/exit.err"; die "exit status $(cat "$TMP/exit.rc"), expected 3"; }
expect_grep "trace file '.*exit-[0-9]+\.trace': Disk quota exceeded; writing stopped" "$TMP/exit.err"
[ "$(grep -c 'Disk quota' "$TMP/exit.err")" -eq 1 ] || { cat "$TMP/exit.err"; die "expected one warning"; }
expect_grep '^NOSPACE .*err=122 ' "$TMP/exit.dump"
tail -n 1 "$TMP/exit.dump" | grep -q '^END .* reason=exit status=3 ' || die "no END(exit) after NOSPACE"
expect_grep "writing stopped at .*: the disk quota was exceeded \(EDQUOT\), .*ended \(exit, status 3\)" "$TMP/exit.rep"
"$ANA" report --json "$(ls "$TMP"/exit-*.trace)" >"$TMP/exit.json"
expect_grep '"write_stopped":\{"errno":"EDQUOT"' "$TMP/exit.json"

run segv 0 segv
[ "$(cat "$TMP/segv.rc")" = 139 ] || { cat "$TMP/segv.err"; die "segv: exit status $(cat "$TMP/segv.rc")"; }
expect_grep '^NOSPACE .*err=122 ' "$TMP/segv.dump"
expect_grep '^SIGNAL .* signo=11 ' "$TMP/segv.dump"
tail -n 1 "$TMP/segv.dump" | grep -q '^END .* reason=signal status=11 ' || die "segv: no END(signal)"
expect_grep "SIGSEGV" "$TMP/segv.rep"
echo "writer_quota: ok"
