#!/bin/sh
# writer_nospace.sh - the file system of the trace fills up while a program
# runs (a real ENOSPC: a 3 MiB tmpfs that the program itself fills):
#   - the program runs on, every driver call succeeds, and `cuprobe run`
#     returns its own exit status;
#   - the shim says once on stderr that writing stopped;
#   - the trace decodes without error: NOSPACE (err 28) ends what was
#     recorded, then END with the real exit status, written into the space
#     the writer kept in reserve;
#   - the report says writing stopped because the file system was full, at
#     which time, and that the process then exited with its status; it does
#     not say the process was killed;
#   - SIGKILLed after the disk filled: still no error and no "killed", the
#     exit is said to be unknown;
#   - a segfault after the disk filled: SIGNAL and END(signal) still go
#     into the room kept after NOSPACE, and the report names the signal;
#   - at a normal close the reserve is given back (the file's blocks match
#     its length).
# Needs to mount a size-limited tmpfs: as root, or in a user namespace
# (unshare -rm); skipped otherwise, saying so.
# EDQUOT (a quota reached) takes the same path: tests/sh/writer_quota.sh
# (real quotas need a file system mounted with them and root; that test
# injects EDQUOT instead).
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
P="$B/tests/progs/disk_full"
[ -f "$SHIM" ] && [ -x "$ANA" ] && [ -x "$P" ] || die "shim, analyzer or disk_full not built"
MNT="$TMP/mnt"
small_tmpfs "$MNT" 3m
export LD_LIBRARY_PATH="$FAKE_DIR"

# 1. the disk fills, the program exits 3
"$CUPROBE" run -o "$MNT/t-%p.trace" -- "$P" "$MNT/fill" 3 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 3 ] || { cat "$TMP/err"; die "exit status $rc, expected the program's 3"; }
expect_grep "trace file '$MNT/t-[0-9]+.trace': No space left on device; writing stopped" "$TMP/err"
# One warning for the trace.  The front end's run manifest, written to the
# same full file system after the run, may fit in what is left or not: when
# it does not, that is its own warning, which must say so.
[ "$(grep -c "trace file.*No space left" "$TMP/err")" -eq 1 ] || { cat "$TMP/err"; die "expected one warning"; }
grep 'No space left' "$TMP/err" | grep -v "trace file" | grep -v "cannot record this run in $MNT/.cuprobe-last-run" &&
    { cat "$TMP/err"; die "a 'No space left' line that is neither the trace's nor the manifest's"; }
trace=$(ls "$MNT"/t-*.trace)
"$ANA" dump "$trace" >"$TMP/dump" 2>"$TMP/derr" || { cat "$TMP/derr"; die "dump: exit $?"; }
expect_grep '^NOSPACE .*err=28 records_dropped=[0-9]+ bytes_dropped=[0-9]+ file_bytes=[0-9]+' "$TMP/dump"
expect_grep '^END .*reason=exit status=3' "$TMP/dump"
tail -n 2 "$TMP/dump" | head -n 1 | grep -q '^NOSPACE ' || die "NOSPACE is not the record before END"
n=$(grep -c '^ALLOC ' "$TMP/dump")
[ "$n" -ge 1000 ] || die "only $n ALLOC records before the disk filled"
"$CUPROBE" report --no-symbolize "$trace" >"$TMP/rep" 2>"$TMP/rerr"; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/rerr"; die "report: exit $rc"; }
expect_grep "writing stopped at \+[0-9.]+ [a-z]+: the file system was full \(ENOSPC\), [0-9]+ records since the last flush lost; the process went on untraced and ended \(exit, status 3\)" "$TMP/rep"
expect_no_grep "killed|crashed|TRUNCATED|DAMAGED" "$TMP/rep"
[ ! -s "$TMP/rerr" ] || { cat "$TMP/rerr"; die "report wrote to stderr"; }
"$ANA" report --json "$trace" >"$TMP/json"
expect_grep '"write_stopped":\{"errno":"ENOSPC","t_ns":[0-9]+,"records_dropped":[0-9]+' "$TMP/json"
expect_grep '"exit_status":3' "$TMP/json"
rm -f "$MNT"/*

# 2. SIGKILL after the disk filled
"$CUPROBE" run -o "$MNT/k-%p.trace" -- "$P" "$MNT/fill" 0 hold >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_line full "$TMP/out" $pid 200 "disk_full never filled the disk"
sleep 0.3
# $pid is the front end; the program is its child, named by its trace (killing
# the front end instead left the program spinning after the test).
kpid=$(ls "$MNT" | sed -n 's/^k-\([0-9]*\)\.trace$/\1/p' | head -1)
[ -n "$kpid" ] || { kill -9 $pid; die "killed-after-ENOSPC: no trace to take the pid from"; }
kill -9 "$kpid" 2>/dev/null
wait $pid 2>/dev/null
kill -0 "$kpid" 2>/dev/null && die "the program $kpid outlived its SIGKILL"
ktrace=$(ls "$MNT"/k-*.trace)
"$ANA" dump "$ktrace" >"$TMP/kdump" 2>"$TMP/kerr"; rc=$?
expect_grep '^NOSPACE ' "$TMP/kdump"
expect_no_grep '^END ' "$TMP/kdump"
"$CUPROBE" report --no-symbolize "$ktrace" >"$TMP/krep" 2>"$TMP/kerr"; rc=$?
[ $rc -eq 0 ] || { cat "$TMP/kerr"; die "report of the killed-after-ENOSPC trace: exit $rc"; }
expect_grep "writing stopped at .*the file system was full \(ENOSPC\).*its exit was not recorded" "$TMP/krep"
expect_no_grep "killed|crashed|TRUNCATED|DAMAGED" "$TMP/krep"
rm -f "$MNT"/*

# 3. a segfault after the disk filled: the crash is in the trace and the report
"$CUPROBE" run -o "$MNT/s-%p.trace" -- "$P" "$MNT/fill" 0 segv >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 139 ] || { cat "$TMP/err"; die "segv run: exit status $rc, expected 139 (SIGSEGV)"; }
strace=$(ls "$MNT"/s-*.trace)
"$ANA" dump "$strace" >"$TMP/sdump" 2>"$TMP/serr" || { cat "$TMP/serr"; die "segv dump: exit $?"; }
expect_grep '^NOSPACE .*err=28 ' "$TMP/sdump"
expect_grep '^SIGNAL .* signo=11 ' "$TMP/sdump"
tail -n 1 "$TMP/sdump" | grep -q '^END .* reason=signal status=11 ' ||
    die "no END(signal) after NOSPACE: $(tail -n 3 "$TMP/sdump")"
"$CUPROBE" report --no-symbolize "$strace" >"$TMP/srep" 2>"$TMP/serr"; rc=$?
expect_grep "writing stopped at .*the file system was full \(ENOSPC\)" "$TMP/srep"
expect_grep "SIGSEGV" "$TMP/srep"
expect_no_grep "TRUNCATED|DAMAGED|exit was not recorded" "$TMP/srep"
rm -f "$MNT"/*

# 4. a normal run: the reserve is given back at close
"$CUPROBE" run -o "$MNT/n-%p.trace" -- "$P" - 0 >/dev/null 2>&1
ntrace=$(ls "$MNT"/n-*.trace)
size=$(stat -c %s "$ntrace")
alloc=$(( $(stat -c %b "$ntrace") * $(stat -c %B "$ntrace") ))
[ $alloc -lt $((size + 8192)) ] || die "reserve kept after close: $alloc bytes allocated for $size"
echo "writer_nospace: ok ($n ALLOC records kept, exit status 3 passed through)"
