#!/bin/sh
# writer_lowspace.sh - the trace's file system has little room when the
# program starts (a 1 MiB tmpfs, filled but for a few KiB):
#   - 8 KiB left and a program that records fast (bench_calls), flushes
#     10 s apart: the writer's first write holds half a MiB of records and
#     cannot fit, yet a trace is written, with its HEADER (whose process it
#     is), NOSPACE and END;
#   - 40 KiB left, less than the writer's 64 KiB reserve, and 300 ms of
#     allocations (disk_full, no filling): the trace takes what fits (tens
#     of KiB of records, not just its first flush), then NOSPACE and END.
# The program's exit status is its own; the shim says once that writing
# stopped.  Needs to mount a tmpfs (root, or a user namespace).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$B/bench/bench_calls" ] && [ -x "$B/tests/progs/disk_full" ] ||
    die "shim, analyzer, bench_calls or disk_full not built"
MNT="$TMP/mnt"
small_tmpfs "$MNT" 1m
export LD_LIBRARY_PATH="$FAKE_DIR"

# leave NAME KIB CMD...: fill the tmpfs but for KIB KiB, then trace CMD into
# it (CUPROBE_FLUSH_MS=$flush when set); the dump in $TMP/NAME.dump, the
# trace's size in $size.
leave() {
    rm -f "$MNT"/*
    total=$(df -k "$MNT" | awk 'NR == 2 { print $2 }')
    dd if=/dev/zero of="$MNT/fill" bs=1k count=$((total - $2)) 2>/dev/null
    name=$1; shift 2
    CUPROBE_OUTPUT="$MNT/t-%p.trace" CUPROBE_ROOT_PID=$$ LD_PRELOAD="$PRELOAD" \
        env ${flush:+CUPROBE_FLUSH_MS=$flush} "$@" \
        >/dev/null 2>"$TMP/$name.err"
    rc=$?
    [ $rc -eq 0 ] || { cat "$TMP/$name.err"; die "$name: exit status $rc"; }
    set -- "$name" "$MNT"/t-*.trace
    [ -f "$2" ] || { cat "$TMP/$1.err"; die "$1: no trace at all"; }
    size=$(stat -c %s "$2")
    "$ANA" dump "$2" >"$TMP/$1.dump" 2>"$TMP/$1.derr" || { cat "$TMP/$1.derr"; die "$1: dump failed"; }
    head -n 1 "$TMP/$1.dump" | grep -q '^HEADER ' || die "$1: the first record is not the HEADER"
    expect_grep '^NOSPACE .*err=28 ' "$TMP/$1.dump"
    expect_grep '^END .*reason=exit status=0' "$TMP/$1.dump"
    [ "$(grep -c 'writing stopped' "$TMP/$1.err")" -eq 1 ] || { cat "$TMP/$1.err"; die "$1: expected one warning"; }
}

flush=10000
leave tiny 8 "$B/bench/bench_calls" 300000
flush=
leave some 40 "$B/tests/progs/disk_full" - 0
[ "$size" -gt 20000 ] || die "40 KiB left: the trace kept only $size bytes"
echo "writer_lowspace: ok (40 KiB left: a trace of $size bytes)"
